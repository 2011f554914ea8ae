package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.BanPolicy;
import dev.sluice.DenyReason;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A request on a banned key against a store decision, one thread, synchronous {@code acquire}: the
 * banned key is one this limiter already knows (its ban cached), the decided key one the store
 * admits (a large limit). On the Redis store (a {@code redis-server} of its own on a free 127.0.0.1
 * port) and on the memory store, rounds alternating the two, medians of wall and CPU time per
 * request, and the Redis decision calls ({@code FCALL} in {@code INFO commandstats}) made during
 * the banned rounds. Then, on Redis, a key over its limit (no ban): denied by the store on a limiter
 * without the denial cache, and by the denial cache on one with it, in alternating rounds.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.PolicyLoad [rounds] [requests per round]
 * </pre>
 */
public final class PolicyLoad {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private PolicyLoad() {}

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    int requests = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    Rule rule = Rule.builder("login").algorithm(Algorithm.TOKEN_BUCKET).window(1_000_000_000L, Duration.ofMinutes(1))
        .ban(new BanPolicy(1, Duration.ofMinutes(1), Duration.ofDays(1))).build();
    Rule tight = Rule.builder("tight").algorithm(Algorithm.TOKEN_BUCKET).window(1, Duration.ofDays(1))
        .ban(new BanPolicy(1, Duration.ofMinutes(1), Duration.ofDays(1))).build();
    RuleSet rules = RuleSet.of(rule, tight);
    System.out.println("| store | decided ns/request (wall, cpu) | banned ns/request (wall, cpu) | wall ratio | "
        + "decision calls during banned rounds |");
    System.out.println("|---|---|---|---|---|");
    try (Standalone redis = Standalone.start(Flavor.REDIS);
        RedisStore store = RedisStore.builder(redis.uri()).build();
        RateLimiter onRedis = Sluice.builder().rules(rules).store(store).build()) {
      run("Redis", onRedis, rounds, requests, () -> fcalls(redis));
    }
    try (RateLimiter inMemory = Sluice.builder().rules(rules).build()) {
      run("memory", inMemory, rounds, requests, () -> 0L);
    }
    System.out.println();
    System.out.println("| store | denied by the store (cache off) ns/request (wall, cpu) | denied by the denial cache "
        + "ns/request (wall, cpu) | wall ratio | decision calls during the cached rounds |");
    System.out.println("|---|---|---|---|---|");
    RuleSet over = RuleSet.of(Rule.builder("over").algorithm(Algorithm.TOKEN_BUCKET).window(1, Duration.ofDays(1))
        .build());
    try (Standalone redis = Standalone.start(Flavor.REDIS);
        RedisStore storeOff = RedisStore.builder(redis.uri()).build();
        RedisStore storeOn = RedisStore.builder(redis.uri()).build();
        RateLimiter off = Sluice.builder().rules(over).store(storeOff).denialCache(0).build();
        RateLimiter on = Sluice.builder().rules(over).store(storeOn).build()) {
      runDenied(off, on, rounds, requests, () -> fcalls(redis));
    }
  }

  private static void runDenied(RateLimiter off, RateLimiter on, int rounds, int requests,
      java.util.function.LongSupplier calls) {
    on.acquire("over", "ip:1");
    if (on.acquire("over", "ip:1").allowed() || off.acquire("over", "ip:1").allowed()) {
      throw new IllegalStateException("the key is not over its limit");
    }
    List<long[]> byStore = new ArrayList<>();
    List<long[]> byCache = new ArrayList<>();
    long cachedCalls = 0;
    for (int r = 0; r < rounds + 1; r++) {
      long[] d = time(() -> off.acquire("over", "ip:1"), requests, "denied by the store");
      long before = calls.getAsLong();
      long[] c = time(() -> on.acquire("over", "ip:1"), requests, "denied by the cache");
      long during = calls.getAsLong() - before;
      if (r > 0) {
        byStore.add(d);
        byCache.add(c);
        cachedCalls += during;
      }
    }
    long dWall = median(byStore, 0) / requests;
    long cWall = median(byCache, 0) / requests;
    System.out.printf(Locale.ROOT, "| Redis | %,d, %,d | %,d, %,d | %.0f× | %d over %,d requests |%n", dWall,
        median(byStore, 1) / requests, cWall, median(byCache, 1) / requests, (double) dWall / Math.max(1, cWall),
        cachedCalls, (long) rounds * requests);
  }

  private static void run(String name, RateLimiter limiter, int rounds, int requests,
      java.util.function.LongSupplier calls) {
    // Ban the key: one admitted, then a denial starts the ban (after: 1); the next answer is BANNED.
    limiter.acquire("tight", "ip:banned");
    limiter.acquire("tight", "ip:banned");
    if (limiter.acquire("tight", "ip:banned").items().get(0).reason() != DenyReason.BANNED) {
      throw new IllegalStateException("the key was not banned");
    }
    List<long[]> decided = new ArrayList<>();
    List<long[]> banned = new ArrayList<>();
    long bannedCalls = 0;
    for (int r = 0; r < rounds + 1; r++) {
      long[] d = time(() -> limiter.acquire("login", "user:1"), requests, "decided");
      long before = calls.getAsLong();
      long[] b = time(() -> limiter.acquire("tight", "ip:banned"), requests, "banned");
      long during = calls.getAsLong() - before;
      if (r > 0) { // the first round warms up
        decided.add(d);
        banned.add(b);
        bannedCalls += during;
      }
    }
    long dWall = median(decided, 0) / requests;
    long dCpu = median(decided, 1) / requests;
    long bWall = median(banned, 0) / requests;
    long bCpu = median(banned, 1) / requests;
    System.out.printf(Locale.ROOT, "| %s | %,d, %,d | %,d, %,d | %.0f× | %d over %,d requests |%n", name, dWall, dCpu,
        bWall, bCpu, (double) dWall / Math.max(1, bWall), bannedCalls, (long) rounds * requests);
  }

  private static long[] time(Runnable request, int n, String what) {
    long cpu = THREADS.getCurrentThreadCpuTime();
    long wall = System.nanoTime();
    for (int i = 0; i < n; i++) {
      request.run();
    }
    return new long[] {System.nanoTime() - wall, THREADS.getCurrentThreadCpuTime() - cpu};
  }

  private static long median(List<long[]> xs, int field) {
    long[] v = xs.stream().mapToLong(x -> x[field]).toArray();
    Arrays.sort(v);
    return v[v.length / 2];
  }

  private static long fcalls(Standalone redis) {
    String stats = String.valueOf(redis.command("INFO", "commandstats"));
    long n = 0;
    for (String line : stats.split("\\r?\\n")) {
      // Decisions are FCALLs; the policy poll and the top offenders' flush are EVALSHAs of their
      // own scripts, a few a second whatever the traffic, and not counted here.
      if (line.startsWith("cmdstat_fcall:")) {
        String c = line.substring(line.indexOf("calls=") + 6);
        n += Long.parseLong(c.substring(0, c.indexOf(',')));
      }
    }
    return n;
  }
}
