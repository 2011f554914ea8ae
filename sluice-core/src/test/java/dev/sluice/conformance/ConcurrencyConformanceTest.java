package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.conformance.Rounds.Call;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Sixteen threads on one hot key and a thousand others: no lost update, no over-admission, no
 * deadlock; and, with bans and audit on, several limiters on one store.
 */
public abstract class ConcurrencyConformanceTest extends StoreConformance {
  protected static final int THREADS = 16;
  /** Limiters sharing the store in the tests with bans and audit. */
  protected static final int INSTANCES = 3;
  private static final Duration MINUTE = Duration.ofSeconds(60);
  private static final int ROUNDS = 20;
  private static final int USERS = 4;
  private static final int AUDIT_KEEP = 5;

  /**
   * The clock the store decides on, if this test can read it, for the run on the store's own
   * clock; null (the default) skips that run, visibly.
   */
  protected Ticker storeClock() {
    return null;
  }

  /**
   * The store for limiter {@code instance} of several sharing this test's state. The default is
   * this test's store itself; a store reached over the network returns a new client of the same
   * server, as each process of a fleet has its own. The limiter built on it closes it.
   */
  protected Store storeForInstance(int instance) {
    return store();
  }

  /**
   * Whether the denial that reaches a ban's threshold is the last one reported as a limit exceeded
   * when many requests race. A store that counts a request's denials toward bans after deciding it
   * (a Redis Cluster request across shards) may report denials decided meanwhile as a limit
   * exceeded; the ban starts at the same time all the same.
   */
  protected boolean bansFromTheDenialThatReachesTheThreshold() {
    return true;
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void hotKeyAndThousandKeysAdmitExactlyWhatFitsEveryRound(Algorithm algorithm) throws InterruptedException {
    assumeSupported(algorithm);
    // Rounds 373 ms apart refill the hot key by dozens of units, so every round admits many
    // requests while all sixteen threads race for them; the 5 s window binds now and then.
    Rule rule = rule("hot").algorithm(algorithm).window(100, ms(1000)).window(400, ms(5000)).build();
    RateLimiter limiter = limiter(rule);
    long base = BASE_MS * 1000;
    java.util.function.IntToLongFunction time = r -> base + r * 373_000L + (r % 3) * 1_001L;
    List<Call> calls = Rounds.run(limiter, rule.name(), THREADS, 30, 24,
        j -> j % 3 != 0 ? "hot" : "k" + ThreadLocalRandom.current().nextInt(1000), time);
    assertThat(calls).hasSize(THREADS * 30 * 24);
    Rounds.assertEachRoundAdmitsExactlyWhatFits(rule, calls, time);
    assertThat(calls.stream().filter(c -> c.key().equals("hot") && c.allowed()).count()).isPositive();
  }

  /**
   * On the store's own clock the time of each decision is unknown, but lies between clock
   * readings taken just before and just after it. A group of admissions all of whose readings lie
   * in one interval was certainly decided in it, so the bound must hold for every such group.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "SLIDING_WINDOW", "FIXED_WINDOW", "TOKEN_BUCKET"})
  void runOnTheStoreClockStaysWithinTheBound(Algorithm algorithm) throws InterruptedException {
    assumeSupported(algorithm);
    Ticker clock = storeClock();
    Assumptions.assumeTrue(clock != null, "this test cannot read the store's clock");
    Window window = Window.perMillis(100, 20);
    Rule rule = rule("clock").algorithm(algorithm).window(window).build();
    RateLimiter limiter = limiter(rule);
    // At least 250 ms, and on a slow or loaded machine on until a window's limit of hot admissions
    // has been seen (at most 10 s): the bound is checked over whatever ran.
    long end = clock.nowMicros() + 250_000;
    long latest = end + 10_000_000;
    AtomicInteger seen = new AtomicInteger();
    ConcurrentLinkedQueue<long[]> hot = new ConcurrentLinkedQueue<>();
    Threads.runAll(THREADS, Duration.ofSeconds(60), thread -> {
      List<long[]> mine = new ArrayList<>();
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (long now = clock.nowMicros(); now < end || seen.get() < window.limit() && now < latest;
          now = clock.nowMicros()) {
        boolean isHot = random.nextBoolean();
        String key = isHot ? "hot" : "k" + random.nextInt(1000);
        long before = clock.nowMicros();
        Decision d = limiter.acquire(Request.of(rule.name(), key));
        long after = clock.nowMicros();
        if (isHot && d.allowed()) {
          mine.add(new long[] {before, after});
          seen.incrementAndGet();
        }
      }
      hot.addAll(mine);
    });
    List<long[]> admitted = new ArrayList<>(hot);
    admitted.sort(Comparator.comparingLong(a -> a[0]));
    assertThat(admitted.size()).as("hot admissions seen").isGreaterThanOrEqualTo((int) window.limit());
    long p = window.periodMicros();
    long l = window.limit();
    for (int i = 0; i < admitted.size(); i++) {
      long from = admitted.get(i)[0];
      long to = Long.MIN_VALUE;
      for (int j = i; j < admitted.size(); j++) {
        to = Math.max(to, admitted.get(j)[1]);
        long count = j - i + 1;
        switch (algorithm) {
          case TOKEN_BUCKET -> assertThat((count - l) * p).as("admitted %d within [%d, %d] µs", count, from, to)
              .isLessThanOrEqualTo((to - from) * l);
          case FIXED_WINDOW -> {
            if (Math.floorDiv(from, p) != Math.floorDiv(to, p)) {
              j = admitted.size();
              continue;
            }
            assertThat(count).as("admitted within aligned window at %d µs", from).isLessThanOrEqualTo(l);
          }
          default -> {
            if (to - from >= p) {
              j = admitted.size();
              continue;
            }
            assertThat(count).as("admitted within [%d, %d] µs", from, to).isLessThanOrEqualTo(l);
          }
        }
      }
    }
  }

  /**
   * Requests of (per-IP, per-user, global) items in random orders, with repeated items, all at one
   * instant: whatever the interleaving, every key's consumption equals the cost of the admitted
   * requests that name it (all or nothing) and never exceeds its limit.
   */
  @Test
  void multiItemRequestsAcrossSharedKeysNeitherDeadlockNorOverAdmit() throws InterruptedException {
    // Limits large enough that hundreds of requests are admitted while the threads contend.
    Rule ip = rule("ip").window(400, MINUTE).build();
    Rule user = rule("user").algorithm(supports(Algorithm.TOKEN_BUCKET) ? Algorithm.TOKEN_BUCKET : Algorithm.SLIDING_LOG)
        .window(250, MINUTE).build();
    Rule global = rule("global").algorithm(supports(Algorithm.FIXED_WINDOW) ? Algorithm.FIXED_WINDOW
        : Algorithm.SLIDING_LOG).window(3000, MINUTE).build();
    RateLimiter limiter = limiter(ip, user, global);
    Map<String, Long> consumed = new ConcurrentHashMap<>();
    Threads.runAll(THREADS, Duration.ofSeconds(60), thread -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int n = 0; n < 300; n++) {
        List<Item> items = new ArrayList<>();
        items.add(Item.of(ip.name(), "ip" + random.nextInt(4), 1 + random.nextInt(3)));
        String u = "u" + random.nextInt(8);
        items.add(Item.of(user.name(), u, 1 + random.nextInt(2)));
        if (random.nextInt(4) == 0) {
          items.add(Item.of(user.name(), u, 1));
        }
        items.add(Item.of(global.name(), "all", 1 + random.nextInt(3)));
        Collections.shuffle(items, random);
        Decision d = limiter.acquire(Request.of(items).atMillis(BASE_MS));
        if (d.allowed()) {
          for (Item it : items) {
            consumed.merge(it.rule() + " " + it.key(), it.cost(), Long::sum);
          }
        }
      }
    });
    assertThat(consumed).isNotEmpty();
    for (Rule r : List.of(ip, user, global)) {
      for (String key : List.of("ip0", "ip1", "ip2", "ip3", "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "all")) {
        long used = consumed.getOrDefault(r.name() + " " + key, 0L);
        long limit = r.windows().get(0).limit();
        assertThat(used).as("%s %s", r.name(), key).isLessThanOrEqualTo(limit);
        assertThat(remaining(peek(limiter, 0, r.name(), key), 0, 0)).as("remaining of %s %s", r.name(), key)
            .isEqualTo(limit - used);
      }
    }
  }

  /**
   * Limiters sharing one store, sixteen threads on one address: every round admits exactly what
   * the rule's two windows let through, the denial that reaches the ban's threshold starts the ban
   * and every request after it is banned until it ends, on every limiter; the users' audit holds
   * the devices of their last admitted requests; the other items consumed exactly what was admitted.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void limitersOnOneStoreAdmitExactlyAndBanOneHotKeyWhenTheModelSays(Algorithm algorithm)
      throws InterruptedException {
    assumeSupported(algorithm);
    PolicyRounds.Summary s = runWithBansAndAudit(algorithm, List.of("10.0.0.1"), 1);
    // The schedule reaches both windows, bans again and again, and admits between the bans.
    assertThat(s.bansStarted()).isGreaterThanOrEqualTo(3);
    assertThat(s.bannedRounds()).isPositive();
    assertThat(s.admitted()).isGreaterThan(8);
  }

  /** As above over several addresses, each with fewer requests a round: denials add up over rounds. */
  @Test
  void limitersOnOneStoreAdmitExactlyAndBanEachOfSeveralKeysWhenTheModelSays() throws InterruptedException {
    PolicyRounds.Summary s = runWithBansAndAudit(Algorithm.SLIDING_LOG, List.of("10.0.0.1", "10.0.0.2", "10.0.0.3"),
        2);
    assertThat(s.bansStarted()).isGreaterThanOrEqualTo(3);
    assertThat(s.admitted()).isGreaterThan(24);
  }

  /**
   * Per address 4 per second and 10 per 5 s, banned for 700 ms after 6 denials within 2 s; per
   * user and globally room for everything, two windows each, and each user's last devices audited.
   * Rounds are 450 ms apart, all within one aligned 10 s window.
   */
  private PolicyRounds.Summary runWithBansAndAudit(Algorithm algorithm, List<String> ips, int maxPerThread)
      throws InterruptedException {
    assumeSupported(Algorithm.FIXED_WINDOW);
    Rule perIp = rule("per_ip").algorithm(algorithm).window(4, ms(1_000)).window(10, ms(5_000))
        .ban(new BanPolicy(6, ms(2_000), ms(700))).build();
    Rule perUser = rule("per_user").algorithm(Algorithm.FIXED_WINDOW).window(100_000, MINUTE).window(50_000, ms(10_000))
        .audit(new AuditPolicy(AUDIT_KEEP, "device")).build();
    Rule global = rule("global").algorithm(Algorithm.FIXED_WINDOW).window(1_000_000, MINUTE)
        .window(500_000, ms(10_000)).build();
    String op = unique("login");
    RuleSet rules = RuleSet.of(perIp, perUser, global).withOperations(List.of(Operation.of(op,
        OperationItem.of(perIp.name(), "ip:{ip}"), OperationItem.of(perUser.name(), "user:{user}"),
        OperationItem.of(global.name(), "all"))), List.of());
    long base = BASE_MS * 1000;
    IntToLongFunction time = r -> base + r * 450_000L;
    FakeTicker clock = new FakeTicker(base);
    List<RateLimiter> limiters = new ArrayList<>();
    try {
      for (int i = 0; i < INSTANCES; i++) {
        limiters.add(Sluice.builder().store(storeForInstance(i)).rules(rules).ticker(clock).build());
      }
      List<PolicyRounds.Call> calls = PolicyRounds.run(limiters, clock, op, perIp.name(), THREADS, ROUNDS,
          maxPerThread, ips, USERS, time);
      PolicyRounds.Summary s = PolicyRounds.assertEachRoundAsTheModelSays(perIp, calls, time,
          bansFromTheDenialThatReachesTheThreshold());
      long last = time.applyAsLong(ROUNDS - 1);
      for (int u = 0; u < USERS; u++) {
        String user = "u" + u;
        long used = calls.stream().filter(c -> c.allowed() && c.user().equals(user)).count();
        Decision peek = limiters.get(u % INSTANCES).acquire(Request.of(Item.of(perUser.name(), "user:" + user, 0))
            .atMicros(last));
        assertThat(remaining(peek, 0, 0)).as("minute of %s", user).isEqualTo(100_000 - used);
        assertThat(remaining(peek, 0, 1)).as("10 s of %s", user).isEqualTo(50_000 - used);
        List<String> audit = limiters.get((u + 1) % INSTANCES).policies().audit(perUser.name(), "user:" + user)
            .toCompletableFuture().join();
        PolicyRounds.assertAuditHoldsTheLastDistinctValues(user, audit, AUDIT_KEEP, calls);
      }
      Decision all = limiters.get(0).acquire(Request.of(Item.of(global.name(), "all", 0)).atMicros(last));
      assertThat(remaining(all, 0, 0)).isEqualTo(1_000_000 - s.admitted());
      assertThat(remaining(all, 0, 1)).isEqualTo(500_000 - s.admitted());
      return s;
    } finally {
      for (RateLimiter l : limiters) {
        l.close();
      }
    }
  }
}
