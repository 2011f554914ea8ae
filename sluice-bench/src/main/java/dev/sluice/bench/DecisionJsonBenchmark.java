package dev.sluice.bench;

import com.linecorp.armeria.common.HttpData;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import dev.sluice.server.DecisionJson;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The HTTP answer's body: one item with two windows (the common case) and three items with one
 * window each. Compare with the service's CPU per request (10 to 20 µs) to see the writer's share.
 *
 * <pre>
 * java -jar sluice-bench/target/sluice-bench.jar DecisionJsonBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DecisionJsonBenchmark {
  @Param({"ONE_ITEM_TWO_WINDOWS", "THREE_ITEMS"})
  public String decision;

  private Decision d;

  @Setup
  public void setUp() {
    WindowState second = new WindowState(100, 1_000, 42, 0, 580, false);
    WindowState hour = new WindowState(10_000, 3_600_000, 9_958, 0, 3_412_007, false);
    d = switch (decision) {
      case "ONE_ITEM_TWO_WINDOWS" -> new Decision(true, 0, 0,
          List.of(new ItemDecision("api", "user:12345", 1, true, DenyReason.NONE, 0, List.of(second, hour), false)),
          false);
      case "THREE_ITEMS" -> new Decision(true, 0, 0, List.of(
          new ItemDecision("per-ip", "ip:203.0.113.7", 1, true, DenyReason.NONE, 0, List.of(second), false),
          new ItemDecision("per-user", "user:12345", 1, true, DenyReason.NONE, 0, List.of(hour), false),
          new ItemDecision("per-tenant", "tenant:acme", 1, true, DenyReason.NONE, 0, List.of(second), true)), false);
      default -> throw new IllegalArgumentException(decision);
    };
  }

  @Benchmark
  public HttpData httpBody() {
    return DecisionJson.httpBody(d);
  }
}
