package dev.sluice.bench.redis;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bucket4j on Lettuce with its compare-and-swap proxy manager: both bandwidths of the rule
 * (greedy refill) in one bucket per key, keys expiring once the bucket would be
 * full again. Each decision reads the bucket (GET) and writes it back with a compare-and-swap
 * script, retrying from the read when another client got there first.
 */
final class Bucket4jContender implements RedisContender {
  private static final String PREFIX = "bucket4j:";
  private final RedisClient client;
  private final AsyncProxyManager<byte[]> buckets;
  private final BucketConfiguration config;
  private final String rule;
  private final ConcurrentHashMap<String, AsyncBucketProxy> proxies = new ConcurrentHashMap<>();

  Bucket4jContender(String uri, Workload w) {
    client = RedisClient.create(uri);
    buckets = Bucket4jLettuce.casBasedBuilder(client)
        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
        .build()
        .asAsync();
    var b = BucketConfiguration.builder();
    for (Workload.Limit l : w.limits()) {
      b.addLimit(Bandwidth.builder().capacity(l.limit()).refillGreedy(l.limit(), l.period()).build());
    }
    config = b.build();
    rule = w.rule() + " (token buckets, greedy refill)";
  }

  @Override
  public String ruleDescription() {
    return rule;
  }

  @Override
  public CompletionStage<Boolean> acquire(String key) {
    AsyncBucketProxy b = proxies.get(key);
    if (b == null) {
      b = proxies.computeIfAbsent(key,
          k -> buckets.builder().build((PREFIX + k).getBytes(StandardCharsets.UTF_8), () ->
              java.util.concurrent.CompletableFuture.completedFuture(config)));
    }
    return b.tryConsume(1);
  }

  @Override
  public String redisKeyPattern(String key) {
    return PREFIX + key;
  }

  @Override
  public void close() {
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }
}
