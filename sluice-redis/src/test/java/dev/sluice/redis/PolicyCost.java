package dev.sluice.redis;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * Instructions the server executes per decision of a {@code sliding_log} rule by an operation,
 * with and without a ban and an audit, counted by callgrind: a {@code redis-server} started under
 * {@code valgrind --tool=callgrind} by hand, its dumps written to a directory given here. Per
 * case, 150 keys are brought to the case's outcome first (denying: 20/6000 s + 5/300 s, each over its
 * limit; admitting: 40/6000 s + 20/300 s, far from it), then counting is zeroed, the decisions made
 * and the count dumped: one call per decision, one after the other; or rounds of one decision
 * followed by eight that wait behind it and go together as one batch (one call in flight), the
 * lone decision's cost, measured as its own case, taken off.
 *
 * <p>Not a test: run it by hand (method and figures: {@code docs/redis-internals.md}, "Script cost"):
 *
 * <pre>
 * valgrind --tool=callgrind --callgrind-out-file=/tmp/cg/callgrind.out.%p redis-server --port 7781 --save '' &amp;
 * java -cp … dev.sluice.redis.PolicyCost 7781 /tmp/cg
 * </pre>
 */
public final class PolicyCost {
  private static final String RULE = "r";
  private static final String OPERATION = "op";
  private static final int KEYS = 150;
  private static final int SINGLE = 1500;
  private static final int ROUNDS = 200;

  private final int port;
  private final Path dumps;
  private int cases;

  private PolicyCost(int port, Path dumps) {
    this.port = port;
    this.dumps = dumps;
  }

  public static void main(String[] args) throws Exception {
    PolicyCost c = new PolicyCost(Integer.parseInt(args[0]), Path.of(args[1]));
    System.out.println("| case | without ban and audit | with ban and audit |");
    System.out.println("|---|---:|---:|");
    boolean[] outcomes = System.getProperty("deny", "both").equals("only") ? new boolean[] {true} : new boolean[] {true, false};
    for (boolean deny : outcomes) {
      double[] single = new double[2];
      double[] batch = new double[2];
      for (int p = 0; p < 2; p++) {
        single[p] = c.single(deny, p == 1);
        batch[p] = (c.rounds(deny, p == 1) - single[p]) / 8;
      }
      String what = deny ? "denial" : "admission";
      System.out.printf("| %s, one call | %,.0f | %,.0f |%n", what, single[0], single[1]);
      System.out.printf("| %s in a batch of 8 | %,.0f | %,.0f |%n", what, batch[0], batch[1]);
    }
  }

  private RateLimiter limiter(boolean deny, boolean policies, int callsInFlight) {
    Rule.Builder b = Rule.builder(RULE);
    if (deny) {
      // The load's 20/60 s + 5/3 s, its windows long enough that a key over its limit stays so.
      b.window(20, Duration.ofSeconds(6000)).window(5, Duration.ofSeconds(300));
    } else {
      b.window(40, Duration.ofSeconds(6000)).window(20, Duration.ofSeconds(300));
    }
    // -Dpolicies=ban or audit: one of the two only.
    String only = System.getProperty("policies", "both");
    if (policies && !only.equals("audit")) {
      b.ban(new BanPolicy(1_000_000, Duration.ofMinutes(1), Duration.ofSeconds(1)));
    }
    if (policies && !only.equals("ban")) {
      b.audit(new AuditPolicy(5, "user"));
    }
    RuleSet rules = RuleSet.of(List.of(b.build()))
        .withOperations(List.of(Operation.of(OPERATION, OperationItem.of(RULE, "{user}"))), List.of());
    RedisStore store = RedisStore.builder("redis://127.0.0.1:" + port).prefix("c" + (cases++) + ":")
        .commandTimeout(Duration.ofSeconds(60)).callsInFlight(callsInFlight).minBatch(8).build();
    RateLimiter l = Sluice.builder().rules(rules).store(store).denialCache(0).storeTimeout(Duration.ofSeconds(60)).build();
    for (int k = 0; k < KEYS; k++) {
      for (int i = 0; i < (deny ? 25 : 2); i++) {
        decide(l, "u" + k).join();
      }
    }
    for (int i = 0; i < (deny ? 25 : 2); i++) {
      decide(l, "plug").join();
    }
    return l;
  }

  private static CompletableFuture<Boolean> decide(RateLimiter l, String user) {
    return l.acquireAsync(OperationRequest.of(OPERATION, Map.of("user", user))).thenApply(d -> {
      if (d.degraded()) {
        throw new IllegalStateException("degraded decision");
      }
      return d.allowed();
    }).toCompletableFuture();
  }

  /** Instructions per decision, each its own call. */
  private double single(boolean deny, boolean policies) throws Exception {
    try (RateLimiter l = limiter(deny, policies, 0)) {
      zero();
      for (int i = 0; i < SINGLE; i++) {
        check(deny, decide(l, "u" + (i * 7 % KEYS)).join());
      }
      return dump() / SINGLE;
    }
  }

  /** Instructions per round: one decision alone, then eight in one batch. */
  private double rounds(boolean deny, boolean policies) throws Exception {
    try (RateLimiter l = limiter(deny, policies, 1)) {
      zero();
      for (int r = 0; r < ROUNDS; r++) {
        List<CompletableFuture<Boolean>> f = new ArrayList<>();
        f.add(decide(l, "plug"));
        for (int i = 0; i < 8; i++) {
          f.add(decide(l, "u" + ((r * 8 + i) * 7 % KEYS)));
        }
        f.get(0).join();
        for (CompletableFuture<Boolean> d : f.subList(1, f.size())) {
          check(deny, d.join());
        }
      }
      return dump() / ROUNDS;
    }
  }

  private static void check(boolean deny, boolean allowed) {
    if (allowed == deny) {
      throw new IllegalStateException(deny ? "admitted where a denial was measured" : "denied where an admission was measured");
    }
  }

  private static void zero() throws Exception {
    new ProcessBuilder("callgrind_control", "-z").inheritIO().start().waitFor();
  }

  /** Dumps the count since zeroed: the dump's total instructions. */
  private double dump() throws Exception {
    new ProcessBuilder("callgrind_control", "-d").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start().waitFor();
    Path newest;
    try (Stream<Path> s = Files.list(dumps)) {
      newest = s.filter(p -> p.getFileName().toString().startsWith("callgrind.out"))
          .max(Comparator.comparingLong(PolicyCost::modified)).orElseThrow();
    }
    for (String line : Files.readAllLines(newest)) {
      if (line.startsWith("summary:") || line.startsWith("totals:")) {
        return Double.parseDouble(line.substring(line.indexOf(':') + 1).trim().split("\\s+")[0]);
      }
    }
    throw new IllegalStateException("no total in " + newest);
  }

  private static long modified(Path p) {
    try {
      return Files.getLastModifiedTime(p).toMillis();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
