package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Monitor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis store on one Redis 7 server: key layout, round trips, scripts, clock, TTLs, ACL. */
class RedisStoreTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final long T0 = 1_800_000_000_000_000L;

  private static String unique(String stem) {
    return stem + "." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  }

  private static Batch batch(Rule rule, String key, long cost, long time) {
    return new Batch(List.of(new ResolvedItem(rule, key, cost, rule.windowsFor(key))), time);
  }

  private static Batch now(Rule rule, String key, long cost) {
    return batch(rule, key, cost, Request.STORE_CLOCK);
  }

  @Test
  void keyNameHoldsPrefixRuleAndEscapedKeyInOneHashTag() {
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("app:").build()) {
      assertThat(store.keyName("auth.createToken", "user:42")).isEqualTo("app:{auth.createToken|user:42}");
      assertThat(store.keyName("r", "a}b%c{d")).isEqualTo("app:{r|a%7Db%25c{d}");
      Rule rule = Rule.builder(unique("keys")).window(5, Duration.ofMinutes(1)).build();
      store.decideSync(now(rule, "x}y", 1));
      assertThat(redis.get().command("EXISTS", store.keyName(rule.name(), "x}y"))).isEqualTo(1L);
    }
  }

  @Test
  void prefixWithABraceIsRejected() {
    assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").prefix("a{b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not contain '{' or '}'");
  }

  @Test
  void batchingSettingsOutOfRangeAreRejected() {
    assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").callsInFlight(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("callsInFlight must be >= 0, was -1");
    assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").minBatch(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minBatch must be between 1 and 128, was 0");
    assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").minBatch(129))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minBatch must be between 1 and 128, was 129");
  }

  @Test
  void eachDecisionIsOneClientCommand() throws InterruptedException {
    Rule log = Rule.builder(unique("rt.log")).window(20, Duration.ofMinutes(1)).window(5, Duration.ofSeconds(3)).build();
    Rule bucket = Rule.builder(unique("rt.bucket")).algorithm(Algorithm.TOKEN_BUCKET).window(10, Duration.ofSeconds(1)).build();
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      store.decideSync(now(log, "warm", 1));
      long fcallBefore = redis.get().commandCalls("fcall");
      List<String> commands;
      try (Monitor m = Monitor.start(redis.get().port())) {
        for (int i = 0; i < 20; i++) {
          store.decideSync(now(log, "u" + (i % 3), 1));
          store.decideSync(new Batch(List.of(
              new ResolvedItem(log, "u" + i, 1, log.windows()),
              new ResolvedItem(bucket, "u" + i, 2, bucket.windows())), Request.STORE_CLOCK));
        }
        store.decideSync(now(log, "last", 1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (m.clientCommands().size() < 41 && System.nanoTime() < deadline) {
          Thread.sleep(10); // MONITOR lines arrive asynchronously
        }
        commands = m.clientCommands();
      }
      assertThat(commands).hasSize(41).containsOnly("FCALL");
      assertThat(redis.get().commandCalls("fcall") - fcallBefore).isEqualTo(41);
    }
  }

  @Test
  void onTheServersClockADecisionThatConsumesNothingWritesNothing() {
    List<Rule> rules = new ArrayList<>();
    for (Algorithm a : Algorithm.values()) {
      Rule.Builder b = Rule.builder(unique("quiet." + a.configName())).algorithm(a).window(2, Duration.ofMinutes(1));
      if (a == Algorithm.LEAKY_BUCKET) {
        b.maxWait(Duration.ZERO); // denies instead of scheduling a wait
      }
      rules.add(b.build());
    }
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      for (Rule r : rules) {
        assertThat(store.decideSync(now(r, "full", 2)).get(0).allowed()).isTrue();
      }
      long writesBefore = writes();
      // This test's keys only: other tests' keys on the shared server may expire meanwhile.
      List<String> keysBefore = quietKeys();
      assertThat(keysBefore).hasSizeGreaterThanOrEqualTo(rules.size());
      for (Rule r : rules) {
        for (int i = 0; i < 3; i++) {
          assertThat(store.decideSync(now(r, "full", 1)).get(0).allowed()).as(r.name()).isFalse();
          store.decideSync(now(r, "full", 0));
          assertThat(store.decideSync(now(r, "fresh", 0)).get(0).allowed()).as(r.name()).isTrue();
        }
      }
      assertThat(writes()).isEqualTo(writesBefore);
      assertThat(quietKeys()).isEqualTo(keysBefore);
      // On explicit times every decision records its time (time never goes backwards per key).
      store.decideSync(batch(rules.get(0), "fresh", 0, T0));
      assertThat(writes()).isGreaterThan(writesBefore);
    }
  }

  private static List<String> quietKeys() {
    List<String> keys = new ArrayList<>();
    for (Object k : (List<?>) redis.get().command("KEYS", "*quiet.*")) {
      keys.add(String.valueOf(k));
    }
    keys.sort(null);
    return keys;
  }

  private static long writes() {
    long n = 0;
    for (String c : List.of("set", "setrange", "pexpire")) {
      n += redis.get().commandCalls(c);
    }
    return n;
  }

  @Test
  void scriptFlushDuringTrafficFailsNoDecisionAndCountsNoneTwice() throws Exception {
    long evalBefore = redis.get().commandCalls("eval");
    // As on a server without functions: the store runs the script.
    flushDuringTraffic(false, "SCRIPT", "FLUSH");
    // The flushes were seen: some decisions found no script and ran it with EVAL.
    assertThat(redis.get().commandCalls("eval") - evalBefore).isPositive();
  }

  @Test
  void functionFlushDuringTrafficFailsNoDecisionAndCountsNoneTwice() throws Exception {
    long scriptBefore = redis.get().commandCalls("evalsha") + redis.get().commandCalls("eval");
    long fcallBefore = redis.get().commandCalls("fcall");
    flushDuringTraffic(true, "FUNCTION", "FLUSH");
    // The flushes were seen: some decisions found no function and ran the script instead.
    assertThat(redis.get().commandCalls("evalsha") + redis.get().commandCalls("eval") - scriptBefore).isPositive();
    assertThat(redis.get().commandCalls("fcall") - fcallBefore).isPositive();
    // The library is back, and decisions call it again.
    assertThat(String.valueOf(redis.get().command("FUNCTION", "LIST"))).contains(DecisionScript.FUNCTION);
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      long fcall = redis.get().commandCalls("fcall");
      store.decideSync(now(Rule.builder(unique("after")).window(1, Duration.ofHours(1)).build(), "k", 1));
      assertThat(redis.get().commandCalls("fcall") - fcall).isEqualTo(1);
    }
  }

  private static void flushDuringTraffic(boolean functions, String... flush) throws Exception {
    Rule rule = Rule.builder(unique("flush")).window(100_000, Duration.ofHours(1)).build();
    int total = 2000;
    // Thousands in flight on a busy two-core machine: the default 1 s command timeout is about latency, not this.
    try (RedisStore store = RedisStore.builder(redis.get().uri()).commandTimeout(Duration.ofSeconds(30)).build()) {
      assertThat(store.link().usesFunctions()).isTrue();
      if (!functions) {
        store.link().useScript();
      }
      List<CompletableFuture<List<ItemDecision>>> inFlight = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        inFlight.add(store.decide(now(rule, "k", 1)).toCompletableFuture());
        if (i % 200 == 100) {
          redis.get().command(flush);
        }
      }
      for (CompletableFuture<List<ItemDecision>> f : inFlight) {
        assertThat(f.get(10, TimeUnit.SECONDS).get(0).allowed()).isTrue();
      }
      ItemDecision peek = store.decideSync(now(rule, "k", 0)).get(0);
      assertThat(peek.windows().get(0).remaining()).isEqualTo(100_000 - total);
    }
  }

  @Test
  void instancesWithSkewedClocksShareOneLimitOnTheServersClock() throws Exception {
    Rule rule = Rule.builder(unique("clock")).window(10, Duration.ofSeconds(30)).build();
    try (RedisStore a = RedisStore.connect(redis.get().uri()); RedisStore b = RedisStore.connect(redis.get().uri())) {
      // The two application clocks are an hour apart; neither is used for a decision.
      RateLimiter early = Sluice.builder().rules(rule).store(a).ticker(new FakeTicker(T0)).build();
      RateLimiter late = Sluice.builder().rules(rule).store(b).ticker(new FakeTicker(T0 + 3_600_000_000L)).build();
      List<Long> remaining = new ArrayList<>();
      int admitted = 0;
      for (int i = 0; i < 16; i++) {
        Decision d = (i % 2 == 0 ? early : late).acquire(Request.of(rule.name(), "shared"));
        admitted += d.allowed() ? 1 : 0;
        if (d.allowed()) {
          remaining.add(d.items().get(0).windows().get(0).remaining());
        } else {
          assertThat(d.retryAfterMs()).isBetween(1L, 30_000L);
        }
      }
      assertThat(admitted).isEqualTo(10);
      assertThat(remaining).containsExactly(9L, 8L, 7L, 6L, 5L, 4L, 3L, 2L, 1L, 0L);
    }
  }

  @Test
  void everyKeyGetsATtlAndTheKeyspaceEmptiesOnceTheLongestWindowHasPassed() throws Exception {
    Standalone own = Standalone.start(Flavor.REDIS);
    try (RedisStore store = RedisStore.builder(own.uri()).ttlSlack(Duration.ofMillis(100)).build()) {
      List<Rule> rules = new ArrayList<>();
      for (Algorithm a : Algorithm.values()) {
        rules.add(Rule.builder("ttl." + a.configName()).algorithm(a)
            .window(3, Duration.ofMillis(200)).window(2, Duration.ofMillis(50)).build());
      }
      for (Rule r : rules) {
        for (int i = 0; i < 4; i++) {
          store.decideSync(now(r, "k" + i, 1 + i % 2));
          // Explicit times far in the past and the future still give TTLs of the window's length.
          store.decideSync(batch(r, "past" + i, 1, 1_000_000_000_000_000L + i));
          store.decideSync(batch(r, "future" + i, 1, 4_000_000_000_000_000L + i));
          store.decideSync(now(r, "peek" + i, 0));
        }
      }
      // A peek on the server's clock writes nothing: the peeked keys do not exist.
      assertThat(own.command("DBSIZE")).isEqualTo(5L * 12);
      assertThat((List<?>) own.command("KEYS", "*peek*")).isEmpty();
      for (Object k : (List<?>) own.command("KEYS", "*")) {
        long pttl = (Long) own.command("PTTL", (String) k);
        // Longest window 200 ms (a sliding window's newest bucket up to one 20 ms bucket more), slack 100 ms.
        assertThat(pttl).as("PTTL of %s", k).isBetween(1L, 200L + 20L + 100L);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      while (!Long.valueOf(0).equals(own.command("DBSIZE")) && System.nanoTime() < deadline) {
        Thread.sleep(50); // waiting for Redis to expire keys in real time, not for limiter time
      }
      assertThat(own.command("DBSIZE")).isEqualTo(0L);
    } finally {
      own.close();
    }
  }

  @Test
  void aclUserFromTheUriIsUsedAndThePasswordNeverShows() {
    // The least the store needs, as docs/redis.md lists it: the commands it sends and those its code runs.
    Standalone secured = Standalone.start(Flavor.REDIS, "user default off",
        "user alice on >s3cret-pw ~sluice:* +fcall +function|load +evalsha +eval +del +ping +time +get +mget"
            + " +getrange +set +setrange +pexpire");
    try {
      String uri = "redis://alice:s3cret-pw@127.0.0.1:" + secured.port();
      try (RedisStore store = RedisStore.connect(uri)) {
        assertThat(store.describe()).contains("alice@127.0.0.1:" + secured.port()).doesNotContain("s3cret");
        Rule rule = Rule.builder(unique("acl")).window(1, Duration.ofMinutes(1)).build();
        assertThat(store.decideSync(now(rule, "k", 1)).get(0).allowed()).isTrue();
        assertThat(store.decideSync(now(rule, "k", 1)).get(0).allowed()).isFalse();
        assertThat(store.ping().toCompletableFuture().join()).isTrue();
        // Had FCALL or FUNCTION LOAD been refused, the store would have switched to the script.
        assertThat(store.link().usesFunctions()).isTrue();
      }
      assertThatThrownBy(() -> RedisStore.connect("redis://alice:wrong-pw@127.0.0.1:" + secured.port()))
          .satisfies(e -> assertThat(String.valueOf(e.getMessage())).doesNotContain("wrong-pw"));
    } finally {
      secured.close();
    }
  }

  @Test
  void aclUserWithoutFunctionsIsServedByTheScript() {
    // The documented list without FCALL and FUNCTION LOAD: it keeps working, with EVALSHA.
    Standalone secured = Standalone.start(Flavor.REDIS, "user default off",
        "user bob on >pw ~sluice:* +evalsha +eval +del +ping +time +get +mget +getrange +set +setrange +pexpire");
    try (RedisStore store = RedisStore.connect("redis://bob:pw@127.0.0.1:" + secured.port())) {
      Rule rule = Rule.builder(unique("acl")).window(1, Duration.ofMinutes(1)).build();
      assertThat(store.decideSync(now(rule, "k", 1)).get(0).allowed()).isTrue();
      assertThat(store.decideSync(now(rule, "k", 1)).get(0).allowed()).isFalse();
      assertThat(store.link().usesFunctions()).isFalse();
    } finally {
      secured.close();
    }
  }

  @Test
  void resetForgetsOneKeyOnly() {
    Rule rule = Rule.builder(unique("reset")).window(1, Duration.ofMinutes(1)).build();
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      store.decideSync(now(rule, "a", 1));
      store.decideSync(now(rule, "b", 1));
      store.reset(rule.name(), "a").toCompletableFuture().join();
      assertThat(store.decideSync(now(rule, "a", 1)).get(0).allowed()).isTrue();
      assertThat(store.decideSync(now(rule, "b", 1)).get(0).allowed()).isFalse();
    }
  }

  @Test
  void manyDecisionsInFlightOnOneConnectionAdmitExactlyTheLimit() throws Exception {
    Rule rule = Rule.builder(unique("inflight")).window(3000, Duration.ofMinutes(10)).build();
    Rule bucket = Rule.builder(unique("inflight.tb")).algorithm(Algorithm.TOKEN_BUCKET)
        .window(1000, Duration.ofMinutes(10)).build();
    try (RedisStore store = RedisStore.builder(redis.get().uri()).commandTimeout(Duration.ofSeconds(30)).build()) {
      List<CompletableFuture<List<ItemDecision>>> all = new ArrayList<>();
      for (int i = 0; i < 5000; i++) {
        all.add(store.decide(new Batch(List.of(
            new ResolvedItem(rule, "shared", 1, rule.windows()),
            new ResolvedItem(bucket, "k" + (i % 4), 1, bucket.windows())), Request.STORE_CLOCK)).toCompletableFuture());
      }
      int admitted = 0;
      for (CompletableFuture<List<ItemDecision>> f : all) {
        List<ItemDecision> d = f.get(20, TimeUnit.SECONDS);
        admitted += d.get(0).allowed() && d.get(1).allowed() ? 1 : 0;
      }
      assertThat(admitted).isEqualTo(3000);
    }
  }

  @Test
  void unsupportedRuleOrTimeFailsTheDecisionNamingTheProblem() {
    Rule huge = Rule.builder(unique("huge")).window(20_000_000, Duration.ofMinutes(1)).build();
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      assertThatThrownBy(() -> store.decideSync(now(huge, "k", 1)))
          .hasRootCauseInstanceOf(IllegalArgumentException.class)
          .rootCause().hasMessageContaining("sliding_log supports limits up to 10000000").hasMessageContaining("sliding_window");
      Rule ok = Rule.builder(unique("ok")).window(1, Duration.ofMinutes(1)).build();
      assertThatThrownBy(() -> store.decideSync(batch(ok, "k", 1, 1L << 60)))
          .rootCause().hasMessageContaining("outside what the Redis store supports");
    }
  }

  static Window w(long limit, Duration d) {
    return new Window(limit, d);
  }
}
