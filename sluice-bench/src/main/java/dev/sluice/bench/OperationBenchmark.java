package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Attribute;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What an operation adds to a decision: {@code operation} builds a request by operation from its
 * attributes on each call and resolves it (a known user and an IP grouped by /24: three items, per
 * user, per IP network and global); {@code items} sends the same three items directly, building their keys as a caller does
 * (the /24 network given), {@code items_grouping} the same with the network worked out per call
 * from the address as a caller would with the JDK ({@code InetAddress} of the literal, masked),
 * {@code items_prebuilt} with keys built once; {@code plain_operation} and {@code plain_items} the
 * same pair with the address used as given (an attribute of no type), so the operation's
 * attributes and templates alone. Token buckets with limits high enough that every
 * decision is admitted and writes; the memory store, or with {@code -p store=redis} a
 * {@code redis-server} of its own on a free 127.0.0.1 port (started by the test kit), one
 * synchronous decision at a time.
 *
 * <pre>
 * java -jar sluice-bench/target/sluice-bench.jar OperationBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc
 * java -jar sluice-bench/target/sluice-bench.jar OperationBenchmark -p store=redis -p users=10000 \
 *     -p form=operation,items_grouping -f 1 -wi 3 -w 2s -i 5 -r 2s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class OperationBenchmark {
  @Param({"operation", "items", "items_grouping", "items_prebuilt", "plain_operation", "plain_items"})
  public String form;

  @Param({"1", "10000"})
  public int users;

  @Param({"memory"})
  public String store;

  private Standalone redis;

  private RateLimiter limiter;
  private OperationRequest[] operations;
  private Request[] requests;
  private String[] userIds;
  private String[] networks;
  private String[] ips;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    long big = 1_000_000_000_000L;
    List<Rule> rules = List.of(
        Rule.builder("per_user").algorithm(Algorithm.TOKEN_BUCKET).window(big, Duration.ofMinutes(1)).build(),
        Rule.builder("per_ip").algorithm(Algorithm.TOKEN_BUCKET).window(big, Duration.ofMinutes(1)).build(),
        Rule.builder("global").algorithm(Algorithm.TOKEN_BUCKET).window(big, Duration.ofMinutes(1)).build());
    Operation op = Operation.of("auth.createToken",
        OperationItem.of("per_user", "user:{user}").when("user"),
        OperationItem.of("per_ip", "ip:{ip}"),
        OperationItem.of("global", "all"));
    // The same with an attribute of no type, used as given: the operation's own machinery alone.
    Operation plain = Operation.of("plain",
        OperationItem.of("per_user", "user:{user}").when("user"),
        OperationItem.of("per_ip", "ip:{addr}"),
        OperationItem.of("global", "all"));
    RuleSet set = RuleSet.of(rules).withOperations(List.of(op, plain), List.of(Attribute.ip("ip", 24, 64)));
    Sluice.Builder builder = Sluice.builder().rules(set);
    if (store.equals("redis")) {
      redis = Standalone.start(Flavor.REDIS);
      builder.store(RedisStore.builder(redis.uri()).build());
    } else if (!store.equals("memory")) {
      throw new IllegalArgumentException("store is memory or redis, was " + store);
    }
    limiter = builder.build();
    operations = new OperationRequest[users];
    requests = new Request[users];
    userIds = new String[users];
    networks = new String[users];
    ips = new String[users];
    for (int i = 0; i < users; i++) {
      String user = Integer.toString(100_000 + i);
      String ip = "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
      String network = "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + ".0/24";
      userIds[i] = user;
      networks[i] = network;
      ips[i] = ip;
      operations[i] = Request.operation("auth.createToken").attribute("user", user).attribute("ip", ip).build();
      requests[i] = Request.of(List.of(
          Item.of("per_user", "user:" + user), Item.of("per_ip", "ip:" + network), Item.of("global", "all")));
    }
    checkSameItems();
  }

  /** Both forms must decide the same (rule, key) pairs, or the comparison means nothing. */
  private void checkSameItems() {
    if (!network24(ips[users - 1]).equals(networks[users - 1])) {
      throw new IllegalStateException("the caller's grouping gives " + network24(ips[users - 1]));
    }
    List<String> viaOperation = limiter.acquire(operations[0]).items().stream().map(d -> d.rule() + "=" + d.key()).toList();
    List<String> direct = limiter.acquire(requests[0]).items().stream().map(d -> d.rule() + "=" + d.key()).toList();
    if (!viaOperation.equals(direct)) {
      throw new IllegalStateException("the operation decides " + viaOperation + ", the items " + direct);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    limiter.close();
    if (redis != null) {
      redis.close();
    }
  }

  @Benchmark
  public Decision acquire() {
    int i = next;
    next = i + 1 == users ? 0 : i + 1;
    return switch (form) {
      // As a caller sends it: the request built from its attributes on each call.
      case "operation" -> limiter.acquire(Request.operation("auth.createToken").attribute("user", userIds[i])
          .attribute("ip", ips[i]).build());
      case "plain_operation" -> limiter.acquire(Request.operation("plain").attribute("user", userIds[i])
          .attribute("addr", ips[i]).build());
      case "plain_items" -> limiter.acquire(Request.of(
          Item.of("per_user", "user:" + userIds[i]), Item.of("per_ip", "ip:" + ips[i]), Item.of("global", "all")));
      // As a caller sends them: the keys built for the request, the network already worked out.
      case "items" -> limiter.acquire(Request.of(
          Item.of("per_user", "user:" + userIds[i]), Item.of("per_ip", "ip:" + networks[i]), Item.of("global", "all")));
      case "items_grouping" -> limiter.acquire(Request.of(
          Item.of("per_user", "user:" + userIds[i]), Item.of("per_ip", "ip:" + network24(ips[i])),
          Item.of("global", "all")));
      // The same items with keys built once: the decision alone.
      default -> limiter.acquire(requests[i]);
    };
  }

  /** The /24 network of an IPv4 literal, as a caller without Sluice's operations would work it out. */
  static String network24(String ip) {
    try {
      byte[] a = java.net.InetAddress.getByName(ip).getAddress();
      return (a[0] & 255) + "." + (a[1] & 255) + "." + (a[2] & 255) + ".0/24";
    } catch (java.net.UnknownHostException e) {
      throw new IllegalArgumentException(ip, e);
    }
  }
}
