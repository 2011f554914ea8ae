package dev.sluice.bench;

import dev.sluice.bench.lease.LeaseCase;
import dev.sluice.bench.lease.LeaseRun;
import dev.sluice.bench.lease.LeaseWorker;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Leased mode against exact mode with several application processes on one Redis and one global
 * key: four child JVMs (this jar's {@link LeaseWorker}) each embed the library with the same rule.
 *
 * <ul>
 *   <li>{@code throughput}: a limit no one reaches ({@code token_bucket} 10⁹ per second), every
 *       worker as fast as 64 unanswered {@code acquireAsync} allow; decisions per second of all
 *       workers, exact and leased.
 *   <li>{@code sliding_log}, {@code token_bucket}: leased, the limit ({@code --limit} per 1 s) at
 *       half the demand, paced and even across workers; admitted ÷ limit over every window of the
 *       run at 1 ms resolution (wall clock: workers and Redis share the machine).
 *   <li>{@code skew}: as {@code sliding_log}, then from the middle of the run one worker offers
 *       80 % of the same total; admitted ÷ limit over windows starting three report intervals
 *       (300 ms) after the skew.
 *   <li>{@code exact_log}: {@code sliding_log} in exact mode, the control: what the method itself
 *       reads off an exact limiter.
 * </ul>
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.LeaseLoad [--reps 3] [--workers 4]
 *     [--limit 1000] [--cases throughput,sliding_log,token_bucket,skew,exact_log] [--uri redis://…] [--raw DIR]
 * </pre>
 *
 * Without {@code --uri} it starts {@code redis-server} (test kit, free 127.0.0.1 port). Each case
 * of each repetition uses a fresh key prefix and new worker processes.
 */
public final class LeaseLoad {
  /**
   * Workers inherit this process's scheduling (run it with {@code chrt -f 50}); each makes its JIT
   * compiler threads time-shared ({@link LeaseWorker}). Time-sharing whole workers instead
   * ({@code chrt -o 0 nice -n -10}) left them a fraction of the CPU against other sessions' work
   * (autogroups share the CPU per session, whatever the nice value): answers 20–30 ms late at the
   * median when tried.
   */
  static final String DEFAULT_LAUNCHER = "";

  private LeaseLoad() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--worker")) {
      LeaseWorker.main(Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    if (args.length > 0 && args[0].equals("--reread")) {
      reread(Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --option value, got '" + args[i] + "'; options: --reps N (3) "
            + "--workers N (4) --limit N (1000) --demand X (2.0 × the limit) --cases "
            + String.join(",", LeaseCase.NAMES) + " --uri redis://… (default: a redis-server of its own) --raw DIR "
            + "(admissions per millisecond of each paced case, gzipped CSV) --launcher 'COMMAND …' (before each "
            + "worker's java; default '" + DEFAULT_LAUNCHER + "', '' to inherit this process's scheduling)");
      }
      m.put(args[i].substring(2), args[++i]);
    }
    int reps = Integer.parseInt(m.getOrDefault("reps", "3"));
    int workers = Integer.parseInt(m.getOrDefault("workers", "4"));
    long limit = Long.parseLong(m.getOrDefault("limit", "1000"));
    double demand = Double.parseDouble(m.getOrDefault("demand", "2.0"));
    List<String> cases = List.of(m.getOrDefault("cases", String.join(",", LeaseCase.NAMES)).split(","));
    String uri = m.get("uri");
    Path raw = m.containsKey("raw") ? Path.of(m.get("raw")) : null;
    String launcher = m.getOrDefault("launcher", DEFAULT_LAUNCHER);
    m.keySet().removeAll(List.of("reps", "workers", "limit", "demand", "cases", "uri", "raw", "launcher"));
    if (!m.isEmpty()) {
      throw new IllegalArgumentException("unknown option(s) " + m.keySet());
    }
    if (reps < 1 || workers < 2 || limit < 1 || !(demand > 0)) {
      throw new IllegalArgumentException("--reps ≥ 1, --workers ≥ 2, --limit ≥ 1 and --demand > 0");
    }
    List<LeaseCase> chosen = cases.stream().flatMap(c -> LeaseCase.named(c, limit, demand, workers).stream()).toList();
    new LeaseRun(uri, reps, workers, chosen, raw,
        launcher.isBlank() ? List.of() : List.of(launcher.trim().split(" +"))).run();
  }

  /**
   * {@code --reread [--limit N] FILE…}: the windows of raw records ({@code --raw}) measured again,
   * one line per file: over every window (a token bucket's file: every span), the highest count
   * by answer time, the highest a window certainly held, and the highest upper bound, ÷ the limit
   * (default 1,000 per 1 s, as the run's).
   */
  static void reread(String[] args) throws java.io.IOException {
    long limit = 1000;
    int first = 0;
    if (args.length >= 2 && args[0].equals("--limit")) {
      limit = Long.parseLong(args[1]);
      first = 2;
    }
    System.out.println("| file | max by answer time | certain | upper bound |");
    System.out.println("|---|---:|---:|---:|");
    for (String file : Arrays.copyOfRange(args, first, args.length)) {
      Path p = Path.of(file);
      dev.sluice.bench.lease.Windows w = dev.sluice.bench.lease.Windows.read(p);
      int period = 1000;
      // Windows end by the run's end: the record goes on for the tail of late answers.
      int run = w.millis() - LeaseWorker.TAIL_MS;
      double[] m;
      if (p.getFileName().toString().contains("token_bucket")) {
        m = w.tokenBucketMax(period, limit, run);
      } else {
        var r = w.sliding(period, limit, 0, run - period);
        m = new double[] {r.max(), r.maxUpper(), r.maxLower()};
      }
      System.out.printf(java.util.Locale.ROOT, "| %s | %.4f | %.4f | %.4f |%n", p.getFileName(), m[0], m[2], m[1]);
    }
  }
}
