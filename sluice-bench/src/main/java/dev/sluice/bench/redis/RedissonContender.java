package dev.sluice.bench.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's {@link RRateLimiter}: one rate per limiter, so only the rule's first (long) window.
 * Each limiter must be configured once ({@code trySetRate}) before use; that is done for every
 * key before the measured run. State expires one period after last use ({@code keepAliveTime}).
 */
final class RedissonContender implements RedisContender {
  private static final String PREFIX = "redisson:";
  private final RedissonClient client;
  private final ConcurrentHashMap<String, RRateLimiter> limiters = new ConcurrentHashMap<>();

  private final Workload.Limit limit;

  RedissonContender(String uri, Workload w) {
    limit = w.limits().get(0);
    Config c = new Config();
    c.setCodec(StringCodec.INSTANCE);
    c.useSingleServer().setAddress(uri);
    client = Redisson.create(c);
  }

  @Override
  public String ruleDescription() {
    return limit + " only (one rate per limiter)";
  }

  private RRateLimiter limiter(String key) {
    RRateLimiter l = limiters.get(key);
    return l != null ? l : limiters.computeIfAbsent(key, k -> client.getRateLimiter(PREFIX + k));
  }

  @Override
  public void prepare(List<String> keys) {
    List<CompletableFuture<Boolean>> pending = new ArrayList<>();
    for (String k : keys) {
      pending.add(limiter(k).trySetRateAsync(RateType.OVERALL, limit.limit(), limit.period(), limit.period())
          .toCompletableFuture());
      if (pending.size() == 256) {
        CompletableFuture.allOf(pending.toArray(new CompletableFuture[0])).join();
        pending.clear();
      }
    }
    CompletableFuture.allOf(pending.toArray(new CompletableFuture[0])).join();
  }

  @Override
  public CompletionStage<Boolean> acquire(String key) {
    return limiter(key).tryAcquireAsync();
  }

  @Override
  public String redisKeyPattern(String key) {
    // the limiter's hash, and its "{name}:value" and "{name}:permits" keys
    return "*" + PREFIX + key + "*";
  }

  @Override
  public void close() {
    client.shutdown();
  }
}
