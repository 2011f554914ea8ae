package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.internal.policy.DenialSketch;
import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.PolicyRecords;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Redis policy records on one topology. Each test works under a prefix of its own, so the
 * version and log it sees are its own, on a store shared by the class.
 */
abstract class RedisPolicyStoreTestBase {
  abstract String uri();

  /** A command to the master holding {@code key}. */
  abstract Object commandFor(String key, String... args);

  String prefix;
  RedisStore store;
  RedisPolicyStore policies;

  @BeforeEach
  void freshPrefix() {
    prefix = "p" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    store = SharedStore.of(uri()).store();
    policies = policies(10_000, 1_000, 100_000);
  }

  RedisPolicyStore policies(int logSize, int changesPerCall, int maxRecords) {
    return new RedisPolicyStore(store.link(), prefix, new StateSiblings(store.link(), new KeyNames(prefix)),
        logSize, changesPerCall, maxRecords);
  }

  static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  /** Puts many, 100 in flight at a time: all at once, the last would wait past the command timeout. */
  static void putAll(PolicyRecords store, List<PolicyRecord> records) {
    for (int from = 0; from < records.size(); from += 100) {
      List<CompletableFuture<Long>> puts = new ArrayList<>();
      for (PolicyRecord r : records.subList(from, Math.min(records.size(), from + 100))) {
        puts.add(store.put(r).toCompletableFuture());
      }
      puts.forEach(CompletableFuture::join);
    }
  }

  static PolicyRecord record(PolicyKind kind, String rule, String key, String value) {
    return new PolicyRecord(kind, rule, key, value, 0);
  }

  @Test
  void everyKindIsPutReadReplacedAndRemovedEachChangeRaisingTheVersion() {
    assertThat(join(policies.version())).isZero();
    long last = 0;
    for (PolicyKind kind : PolicyKind.values()) {
      PolicyRecord r = record(kind, "api", "user:42", kind == PolicyKind.LIMIT ? "tier:free" : "");
      long v = join(policies.put(r));
      assertThat(v).isGreaterThan(last);
      last = v;
      assertThat(join(policies.get(kind, "api", "user:42"))).contains(r);
      PolicyRecord replaced = new PolicyRecord(kind, "api", "user:42", "x y z", 4_000_000_000_000L);
      last = join(policies.put(replaced));
      assertThat(join(policies.get(kind, "api", "user:42"))).contains(replaced);
      assertThat(join(policies.remove(kind, "api", "user:42"))).isTrue();
      assertThat(join(policies.get(kind, "api", "user:42"))).isEmpty();
      assertThat(join(policies.remove(kind, "api", "user:42"))).isFalse();
      long after = join(policies.version());
      assertThat(after).isGreaterThan(last);
      last = after;
    }
    // Kinds are apart: a ban of a key is not its live limit.
    join(policies.put(record(PolicyKind.BAN, "api", "k", "manual")));
    assertThat(join(policies.get(PolicyKind.LIMIT, "api", "k"))).isEmpty();
  }

  @Test
  void keysWithSpacesBracesAndUnicodeRoundTrip() {
    for (String key : List.of("a b c", "{x}", "%7D}", "ip:2001:db8::/32", "ключ 🔑", "tab\there\nnewline")) {
      PolicyRecord r = record(PolicyKind.DENY, "r.1", key, "");
      join(policies.put(r));
      assertThat(join(policies.get(PolicyKind.DENY, "r.1", key))).contains(r);
    }
    assertThat(join(policies.page(PolicyKind.DENY, "r.1", null, 100))).hasSize(6);
  }

  @Test
  void pagesOf2500RecordsComeInRuleThenKeyOrderAndCursorsResumeThem() {
    List<PolicyRecord> expected = new ArrayList<>();
    for (String rule : List.of("b", "a", "a.b", "ab")) {
      for (int i = 0; i < 625; i++) {
        expected.add(record(PolicyKind.LIMIT, rule, "key" + i, "10/PT1M"));
      }
    }
    putAll(policies, expected);
    expected.sort(Comparator.comparing(PolicyRecord::cursor));

    List<PolicyRecord> all = readAll(null, 1_000);
    assertThat(all).containsExactlyElementsOf(expected);
    assertThat(readAll(null, 7)).containsExactlyElementsOf(expected);
    // One rule only, with a cursor from before and one from inside its range.
    List<PolicyRecord> ofA = expected.stream().filter(r -> r.rule().equals("a")).toList();
    assertThat(readAll("a", 300)).containsExactlyElementsOf(ofA);
    assertThat(join(policies.page(PolicyKind.LIMIT, "a", "0", 5))).containsExactlyElementsOf(ofA.subList(0, 5));
    assertThat(join(policies.page(PolicyKind.LIMIT, "a", ofA.get(9).cursor(), 5)))
        .containsExactlyElementsOf(ofA.subList(10, 15));
    assertThat(join(policies.page(PolicyKind.LIMIT, "a", "zzz", 5))).isEmpty();
    assertThat(join(policies.page(PolicyKind.BAN, null, null, 5))).isEmpty();
  }

  private List<PolicyRecord> readAll(String rule, int count) {
    List<PolicyRecord> out = new ArrayList<>();
    String after = null;
    while (true) {
      List<PolicyRecord> page = join(policies.page(PolicyKind.LIMIT, rule, after, count));
      assertThat(page.size()).isLessThanOrEqualTo(count);
      out.addAll(page);
      if (page.size() < count) {
        return out;
      }
      after = page.get(page.size() - 1).cursor();
    }
  }

  @Test
  void changesComeAtMostAThousandACallUntilTheReaderIsCurrent() {
    long start = join(policies.version());
    List<PolicyRecord> records = new ArrayList<>();
    for (int i = 0; i < 2_500; i++) {
      records.add(record(PolicyKind.ALLOW, "r", "k" + i, ""));
    }
    putAll(policies, records);
    long v = start;
    Map<String, PolicyRecord> seen = new HashMap<>();
    int calls = 0;
    while (true) {
      PolicyChanges c = join(policies.changesSince(v));
      calls++;
      assertThat(c.complete()).isTrue();
      assertThat(c.changed().size()).isLessThanOrEqualTo(1_000);
      c.changed().forEach(r -> seen.put(r.key(), r));
      if (c.version() == v) {
        break;
      }
      assertThat(c.version()).isGreaterThan(v);
      v = c.version();
    }
    assertThat(seen).hasSize(2_500);
    assertThat(calls).isBetween(3, 5);
    assertThat(v).isEqualTo(join(policies.version()));
  }

  @Test
  void aReaderLearnsOfRemovalsAndSeesARecordChangedTwiceOnceAsItIsNow() {
    join(policies.put(record(PolicyKind.LIMIT, "r", "gone", "tier:free")));
    long v = join(policies.version());
    join(policies.put(record(PolicyKind.LIMIT, "r", "twice", "tier:free")));
    join(policies.put(record(PolicyKind.LIMIT, "r", "twice", "tier:premium")));
    join(policies.remove(PolicyKind.LIMIT, "r", "gone"));
    PolicyChanges c = join(policies.changesSince(v));
    assertThat(c.complete()).isTrue();
    assertThat(c.version()).isEqualTo(v + 3);
    assertThat(c.changed()).containsExactly(record(PolicyKind.LIMIT, "r", "twice", "tier:premium"));
    assertThat(c.removed()).containsExactly(record(PolicyKind.LIMIT, "r", "gone", ""));
    assertThat(join(policies.changesSince(c.version()))).isEqualTo(new PolicyChanges(v + 3, true, List.of(), List.of()));
  }

  @Test
  void aReaderBehindTheTrimmedLogOrAheadOfTheVersionIsToldToReadEverything() {
    RedisPolicyStore small = policies(5, 1_000, 100_000);
    for (int i = 0; i < 8; i++) {
      join(small.put(record(PolicyKind.BAN, "r", "k" + i, "manual")));
    }
    // The log holds the last 5 records changed (versions 4 to 8): 3 and later are complete.
    assertThat(join(small.changesSince(0)).complete()).isFalse();
    assertThat(join(small.changesSince(2))).isEqualTo(new PolicyChanges(8, false, List.of(), List.of()));
    PolicyChanges from3 = join(small.changesSince(3));
    assertThat(from3.complete()).isTrue();
    assertThat(from3.changed()).extracting(PolicyRecord::key).containsExactly("k3", "k4", "k5", "k6", "k7");
    // A version the store never reached: its data was lost or deleted.
    assertThat(join(small.changesSince(9)).complete()).isFalse();
  }

  @Test
  void recordsExpireOnTheServersClockAndReadersSeeThemRemoved() throws InterruptedException {
    long now = serverMillis();
    PolicyRecord soon = new PolicyRecord(PolicyKind.BAN, "r", "soon", "manual", now + 300);
    PolicyRecord later = new PolicyRecord(PolicyKind.BAN, "r", "later", "manual", now + 3_600_000);
    join(policies.put(soon));
    join(policies.put(later));
    long v = join(policies.version());
    assertThat(join(policies.get(PolicyKind.BAN, "r", "soon"))).contains(soon);
    while (serverMillis() <= now + 300) {
      Thread.sleep(50); // waiting for the server's clock, which no fake reaches
    }
    assertThat(join(policies.get(PolicyKind.BAN, "r", "soon"))).isEmpty();
    assertThat(join(policies.page(PolicyKind.BAN, "r", null, 10))).containsExactly(later);
    PolicyChanges c = join(policies.changesSince(v));
    assertThat(c.removed()).containsExactly(new PolicyRecord(PolicyKind.BAN, "r", "soon", "", 0));
    assertThat(c.changed()).isEmpty();
    // Purged from the store, not only hidden: no field, no expiry entry, and removing finds nothing.
    assertThat(commandFor(prefix + "{policies}:ban", "HEXISTS", prefix + "{policies}:ban", "r soon")).isEqualTo(0L);
    assertThat(commandFor(prefix + "{policies}:expiry", "ZCARD", prefix + "{policies}:expiry")).isEqualTo(1L);
    assertThat(join(policies.remove(PolicyKind.BAN, "r", "soon"))).isFalse();
  }

  @Test
  void aRecordPutWithAnExpiryAlreadyPassedIsAbsent() {
    join(policies.put(record(PolicyKind.LIMIT, "r", "k", "tier:free")));
    join(policies.put(new PolicyRecord(PolicyKind.LIMIT, "r", "k", "tier:premium", serverMillis() - 1)));
    assertThat(join(policies.get(PolicyKind.LIMIT, "r", "k"))).isEmpty();
    assertThat(join(policies.changesSince(1)).removed()).extracting(PolicyRecord::key).containsExactly("k");
  }

  long serverMillis() {
    List<?> t = (List<?>) commandFor(prefix + "{policies}:version", "TIME");
    return Long.parseLong(t.get(0).toString()) * 1000 + Long.parseLong(t.get(1).toString()) / 1000;
  }

  @Test
  void twoStoresOnOneRedisSeeEachOthersChanges() {
    try (RedisStore other = RedisStore.connect(uri())) {
      PolicyRecords mine = policies;
      PolicyRecords theirs = new RedisPolicyStore(other.link(), prefix,
          new StateSiblings(other.link(), new KeyNames(prefix)));
      long v = join(mine.version());
      join(theirs.put(record(PolicyKind.LIMIT, "r", "user:1", "tier:premium")));
      PolicyChanges c = join(mine.changesSince(v));
      assertThat(c.changed()).containsExactly(record(PolicyKind.LIMIT, "r", "user:1", "tier:premium"));
      join(mine.remove(PolicyKind.LIMIT, "r", "user:1"));
      assertThat(join(theirs.changesSince(c.version())).removed()).extracting(PolicyRecord::key)
          .containsExactly("user:1");
    }
  }

  @Test
  void theStoresOwnPoliciesAreSharedByEveryStoreUnderItsPrefix() {
    try (RedisStore a = RedisStore.builder(uri()).prefix(prefix).build();
        RedisStore b = RedisStore.builder(uri()).prefix(prefix).build()) {
      assertThat(a.policies()).isSameAs(a.policies());
      join(a.policies().put(record(PolicyKind.ALLOW, "r", "ip:10.0.0.0/8", "")));
      assertThat(join(b.policies().page(PolicyKind.ALLOW, "r", null, 10)))
          .containsExactly(record(PolicyKind.ALLOW, "r", "ip:10.0.0.0/8", ""));
    }
  }

  @Test
  void aBanRecordBansTheKeyInDecisionsUntilItsEndAndRemovingItLiftsTheBan() {
    long until = serverMillis() + 60_000;
    join(policies.put(new PolicyRecord(PolicyKind.BAN, "r", "user:7", "manual", until)));
    String ban = new String(new KeyNames(prefix).name("r", "user:7"), java.nio.charset.StandardCharsets.UTF_8) + ":ban";
    // The layout decisions read (three int64s: end in µs, denials counted, their start); that
    // decisions honour it is PoliciesAcrossInstances*Test's and the conformance tests' business.
    assertThat(commandFor(ban, "STRLEN", ban)).isEqualTo(24L);
    assertThat((Long) commandFor(ban, "PTTL", ban)).isBetween(1L, 60_000L);
    assertThat(join(policies.remove(PolicyKind.BAN, "r", "user:7"))).isTrue();
    assertThat(commandFor(ban, "EXISTS", ban)).isEqualTo(0L);
    // Lifted even without a record (an automatic ban not recorded yet).
    commandFor(ban, "SET", ban, "1");
    assertThat(join(policies.remove(PolicyKind.BAN, "r", "user:7"))).isFalse();
    assertThat(commandFor(ban, "EXISTS", ban)).isEqualTo(0L);
  }

  @Test
  void auditReadsTheKeysAuditListNewestFirst() {
    String audit = new String(new KeyNames(prefix).name("r", "ip:1.2.3.4"), java.nio.charset.StandardCharsets.UTF_8)
        + ":audit";
    assertThat(join(policies.audit("r", "ip:1.2.3.4"))).isEmpty();
    commandFor(audit, "RPUSH", audit, "user:2", "user:1");
    assertThat(join(policies.audit("r", "ip:1.2.3.4"))).containsExactly("user:2", "user:1");
  }

  @Test
  void badInputIsRefusedNamingWhatWasWrongAndChangesNothing() {
    assertRefused(policies.page(PolicyKind.LIMIT, null, null, 0), "page count must be between 1 and 1000, was 0");
    assertRefused(policies.page(PolicyKind.LIMIT, null, null, 1_001), "page count must be between 1 and 1000, was 1001");
    assertRefused(policies.page(PolicyKind.LIMIT, "a b", null, 10), "rule name must be");
    assertRefused(policies.put(record(PolicyKind.LIMIT, "r", "x".repeat(4_097), "")), "policy key is 4097 bytes long");
    assertRefused(policies.put(record(PolicyKind.LIMIT, "r", "", "")), "policy key must not be empty");
    assertRefused(policies.put(record(PolicyKind.LIMIT, "r", "\ud800", "")), "policy key is not valid Unicode");
    assertRefused(policies.put(new PolicyRecord(PolicyKind.LIMIT, "r", "k", "", -1)),
        "policy expiry must be between 0 (never) and 253402300799999 (the end of the year 9999) epoch milliseconds, was -1");
    assertRefused(policies.put(new PolicyRecord(PolicyKind.LIMIT, "r", "k", "", Long.MAX_VALUE)), "was " + Long.MAX_VALUE);
    PolicyRecord last = new PolicyRecord(PolicyKind.LIMIT, "r", "far", "", RedisPolicyStore.MAX_EXPIRY_MILLIS);
    join(policies.put(last));
    assertThat(join(policies.get(PolicyKind.LIMIT, "r", "far"))).contains(last);
    join(policies.remove(PolicyKind.LIMIT, "r", "far"));
    assertRefused(policies.changesSince(-1), "version must be >= 0");
    assertThatThrownBy(() -> record(PolicyKind.LIMIT, "r", "k", "v".repeat(4_097)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than 4096");
    // The record at the last expiry and its removal: nothing else changed.
    assertThat(join(policies.version())).isEqualTo(2);
  }

  @Test
  void aKindFullOfRecordsRefusesNewOnesButStillReplacesItsOwn() {
    RedisPolicyStore small = policies(10_000, 1_000, 3);
    for (int i = 0; i < 3; i++) {
      join(small.put(record(PolicyKind.DENY, "r", "k" + i, "")));
    }
    assertThatThrownBy(() -> join(small.put(record(PolicyKind.DENY, "r", "k3", ""))))
        .isInstanceOf(CompletionException.class).cause().isInstanceOf(dev.sluice.policy.PolicyFullException.class)
        .hasMessage("the store keeps at most 3 deny records: remove some, or let them expire");
    assertThat(join(small.put(record(PolicyKind.DENY, "r", "k0", "again")))).isEqualTo(4);
    assertThat(join(small.put(record(PolicyKind.ALLOW, "r", "k3", "")))).isEqualTo(5);
  }

  @Test
  void denialSketchesOfOneMinuteMergeAndComeBackByMinute() {
    long minute = 29_000_000;
    DenialSketch first = sketch(3, "ip:1", 6, "ip:2", 3, "ip:3", 1);
    DenialSketch second = sketch(3, "ip:2", 4, "ip:4", 1);
    DenialSketch later = sketch(3, "ip 9\n", 1);
    join(policies.addDenials("r", minute, first.encode()));
    join(policies.addDenials("r", minute, second.encode()));
    join(policies.addDenials("r", minute + 2, later.encode()));
    List<String> sketches = join(policies.denials("r", minute - 1, minute + 3));
    // The script's merge is the limiter's, to the byte: the first is full (3 keys, smallest count
    // 1), so ip:4, absent from it, counts up to 1 more.
    DenialSketch merged = first.copy();
    merged.merge(second);
    assertThat(sketches).containsExactly(merged.encode(), later.encode());
    assertThat(DenialSketch.decode(sketches.get(0)).top(3)).containsExactly(
        new DenialSketch.Entry("ip:2", 7, 0), new DenialSketch.Entry("ip:1", 6, 0), new DenialSketch.Entry("ip:4", 2, 1));
    assertThat(join(policies.denials("r", minute + 3, minute + 2))).isEmpty();
    assertThat(join(policies.denials("other", minute, minute))).isEmpty();
    long ttl = (Long) commandFor(policies.denialKey("r", minute), "PTTL", policies.denialKey("r", minute));
    assertThat(ttl).isBetween(60 * 60_000L, 61 * 60_000L);
  }

  @Test
  void malformedDenialSketchesAndLongRangesAreRefused() {
    assertRefused(policies.addDenials("r", 1, "hello"), "denial sketch must start with a line 'sketch/1 k total entries'");
    assertRefused(policies.addDenials("r", 1, "sketch/1 1 2 2\n1 0 1 a\n1 0 1 b\n"),
        "denial sketch has 2 keys, more than its size k = 1");
    assertRefused(policies.addDenials("r", 1, "sketch/1 2 2 1\n1 0 5 a\n"), "the denial sketch is not in the expected format");
    assertRefused(policies.addDenials("r", 1, "sketch/1 0 0 0\n"), "denial sketch size k must be between 1 and 10000");
    assertRefused(policies.denials("r", 0, 61), "ask for at most 61 minutes at a time, was 62");
    assertThat(join(policies.denials("r", 0, 60))).isEmpty();
  }

  static void assertRefused(CompletionStage<?> stage, String message) {
    assertThatThrownBy(() -> join(stage))
        .isInstanceOf(CompletionException.class)
        .cause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
  }

  /** A sketch of capacity k holding the given (key, count) pairs, added in order. */
  private static DenialSketch sketch(int k, Object... keysAndCounts) {
    DenialSketch s = new DenialSketch(k);
    for (int i = 0; i < keysAndCounts.length; i += 2) {
      s.add((String) keysAndCounts[i], ((Number) keysAndCounts[i + 1]).longValue());
    }
    return s;
  }
  @Test
  void heartbeatsCountTheInstancesHeardWithinTheTtlOnTheServersClockAndLeaveForgetsOne() throws Exception {
    long minute = 60_000;
    assertThat(join(policies.heartbeat("a", minute))).isEqualTo(1);
    assertThat(join(policies.heartbeat("b", minute))).isEqualTo(2);
    assertThat(join(policies.heartbeat("a", minute))).isEqualTo(2);
    join(policies.leave("a"));
    assertThat(join(policies.heartbeat("b", minute))).isEqualTo(1);
    assertThat(join(policies.heartbeat("c", minute))).isEqualTo(2);
    // Heard 450 ms ago or more: beyond a ttl of 400 ms, c is no longer counted.
    Thread.sleep(450);
    assertThat(join(policies.heartbeat("b", 400))).isEqualTo(1);
    // The set lives twice the ttl after the last heartbeat: nothing is left behind for good.
    assertThat(join(policies.heartbeat("b", minute))).isEqualTo(1);
    String key = prefix + "{policies}:instances";
    assertThat((Long) commandFor(key, "PTTL", key)).isBetween(1L, 2 * minute);
    assertThatThrownBy(() -> join(policies.heartbeat("", minute))).hasMessageContaining("instance id");
  }

  @Test
  void membersListsTheInstancesHeardMostRecentFirstBoundedAndWritesNothing() throws Exception {
    long minute = 60_000;
    join(policies.heartbeat("a", minute));
    Thread.sleep(5);
    join(policies.heartbeat("b", minute));
    Thread.sleep(5);
    join(policies.heartbeat("c", minute));
    String key = prefix + "{policies}:instances";
    Object ttlBefore = commandFor(key, "PTTL", key);
    Membership.Members all = join(policies.members(minute, 10));
    assertThat(all.count()).isEqualTo(3);
    assertThat(all.first()).extracting(Membership.Member::instance).containsExactly("c", "b", "a");
    assertThat(all.first().get(0).lastSeenMillis()).isBetween(all.nowMillis() - minute, all.nowMillis());
    Membership.Members two = join(policies.members(minute, 2));
    assertThat(two.count()).isEqualTo(3);
    assertThat(two.first()).extracting(Membership.Member::instance).containsExactly("c", "b");
    // Heard 300 ms ago or more: beyond a ttl of 250 ms, none is listed, and none was removed.
    Thread.sleep(300);
    Membership.Members none = join(policies.members(250, 10));
    assertThat(none.count()).isZero();
    assertThat(none.first()).isEmpty();
    assertThat(join(policies.members(minute, 10)).count()).isEqualTo(3);
    assertThat((Long) commandFor(key, "PTTL", key)).isLessThanOrEqualTo((Long) ttlBefore);
  }
}
