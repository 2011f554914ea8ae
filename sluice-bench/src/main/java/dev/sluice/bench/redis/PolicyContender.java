package dev.sluice.bench.redis;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Sluice on its Redis store through an operation whose attribute {@code user} is the key: the
 * {@code sliding_log} rule with a ban (1,000 denials within a minute: counted, never reached in a
 * run) and an audit of the user (keep 5), or the same rule without them. The denial cache is off
 * in both, so that every decision is the store's: the two measure the store's transaction with
 * and without its policy hooks.
 */
final class PolicyContender implements RedisContender {
  private static final String OPERATION = "op";
  private final RateLimiter limiter;
  private final String rule;

  PolicyContender(String uri, Workload w, boolean policies) {
    Rule.Builder b = Rule.builder(SluiceContender.RULE);
    for (Workload.Limit l : w.limits()) {
      b.window(l.limit(), l.period());
    }
    if (policies) {
      b.ban(new BanPolicy(1_000, Duration.ofMinutes(1), Duration.ofSeconds(1))).audit(new AuditPolicy(5, "user"));
    }
    RuleSet rules = RuleSet.of(List.of(b.build()))
        .withOperations(List.of(Operation.of(OPERATION, OperationItem.of(SluiceContender.RULE, "{user}"))), List.of());
    limiter = Sluice.builder().rules(rules).store(RedisStore.builder(uri).build()).denialCache(0)
        .storeTimeout(Duration.ofSeconds(30)).build();
    rule = w.rule() + " (sliding_log, by an operation, denial cache off" + (policies ? ", ban and audit" : "") + ")";
  }

  @Override
  public String ruleDescription() {
    return rule;
  }

  @Override
  public CompletionStage<Boolean> acquire(String key) {
    return limiter.acquireAsync(OperationRequest.of(OPERATION, Map.of("user", key))).thenApply(d -> {
      if (d.degraded()) {
        throw new IllegalStateException("degraded decision: the store failed");
      }
      return d.allowed();
    });
  }

  @Override
  public String redisKeyPattern(String key) {
    return "*{" + SluiceContender.RULE + "|" + key + "}*";
  }

  @Override
  public void close() {
    limiter.close();
  }
}
