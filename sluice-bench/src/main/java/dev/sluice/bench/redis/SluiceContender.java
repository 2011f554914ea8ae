package dev.sluice.bench.redis;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Sluice on its Redis store: both windows of the rule decided by one script evaluation, with the
 * algorithm given (the default {@code sliding_log}, or {@code token_bucket},
 * Bucket4j's semantics).
 */
final class SluiceContender implements RedisContender {
  static final String RULE = "auth.createToken";
  private final RateLimiter limiter;
  private final String rule;
  private final boolean yesOrNo;

  SluiceContender(String uri, Workload w, Algorithm algorithm) {
    this(uri, w, algorithm, true);
  }

  /**
   * {@code batched}: the store's default, up to eight calls in flight and the decisions that queue
   * behind them sent together; otherwise every decision is its own call, sent at once.
   */
  SluiceContender(String uri, Workload w, Algorithm algorithm, boolean batched) {
    this(uri, w, algorithm, batched ? Integer.getInteger("sluice.callsInFlight", -1) : 0);
  }

  /**
   * {@code depth}: calls in flight (0: every decision its own call, sent at once; -1: the
   * store's default).
   */
  SluiceContender(String uri, Workload w, Algorithm algorithm, int depth) {
    this(uri, w, algorithm, depth, false);
  }

  /** {@code yesOrNo}: decides through {@code tryAcquireAsync}, which builds no decision. */
  SluiceContender(String uri, Workload w, Algorithm algorithm, int depth, boolean yesOrNo) {
    this(uri, w, algorithm, depth, yesOrNo, null);
  }

  /**
   * {@code redisClasses}: where the store's classes come from ({@link OtherBuild}: another build of
   * sluice-redis, e.g. the previous decision script), or null for this build's.
   */
  SluiceContender(String uri, Workload w, Algorithm algorithm, int depth, boolean yesOrNo, OtherBuild redisClasses) {
    this.yesOrNo = yesOrNo;
    Rule.Builder b = Rule.builder(RULE).algorithm(algorithm);
    for (Workload.Limit l : w.limits()) {
      b.window(l.limit(), l.period());
    }
    // The load tool measures the store, not the failure mode: a slow answer must not turn into
    // an "allowed" decision made locally.
    Integer minBatch = Integer.getInteger("sluice.minBatch");
    Store built;
    if (redisClasses != null) {
      built = redisClasses.redisStore(uri, depth, minBatch);
    } else {
      RedisStore.Builder store = RedisStore.builder(uri);
      if (depth >= 0) {
        store.callsInFlight(depth);
      }
      if (minBatch != null) {
        store.minBatch(minBatch);
      }
      built = store.build();
    }
    limiter = Sluice.builder().rules(b.build()).store(built).storeTimeout(Duration.ofSeconds(30))
        .build();
    String how = depth == 0 ? ", one call per decision"
        : ", queued decisions batched" + (depth > 0 ? ", " + depth + " calls in flight" : "")
            + (minBatch != null ? ", minBatch " + minBatch : "");
    rule = w.rule() + " (" + algorithm.configName() + how + (redisClasses != null ? ", " + redisClasses : "") + (yesOrNo ? ", tryAcquireAsync" : "") + ")";
  }

  @Override
  public String ruleDescription() {
    return rule;
  }

  @Override
  public CompletionStage<Boolean> acquire(String key) {
    if (yesOrNo) {
      // No decision to check for degradation: the 30 s store timeout keeps slow answers the store's.
      return limiter.tryAcquireAsync(RULE, key);
    }
    return limiter.acquireAsync(Request.of(RULE, key)).thenApply(d -> {
      if (d.degraded()) {
        throw new IllegalStateException("degraded decision: the store failed");
      }
      return d.allowed();
    });
  }

  @Override
  public String redisKeyPattern(String key) {
    return "*{" + RULE + "|" + key + "}*";
  }

  /**
   * The command this contender sends for one decision on {@code key} (FCALL of the library, or
   * EVALSHA where the server has no functions), as MONITOR saw it.
   */
  List<String> evalsha(int port, String key) {
    List<List<String>> seen = MonitorCapture.capture(port, () -> limiter.acquire(RULE, key));
    List<String> last = null;
    for (List<String> c : seen) {
      if (c.get(0).equalsIgnoreCase("fcall") || c.get(0).equalsIgnoreCase("evalsha")) {
        last = c;
      }
    }
    if (last == null) {
      throw new IllegalStateException("no FCALL or EVALSHA seen for one decision; saw " + seen);
    }
    return new ArrayList<>(last);
  }

  @Override
  public void close() {
    limiter.close();
  }
}
