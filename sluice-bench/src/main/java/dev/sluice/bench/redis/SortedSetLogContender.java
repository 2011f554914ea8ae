package dev.sluice.bench.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sorted-set log script ({@code sorted_set_log.lua}): exact, one script call per decision,
 * but one sorted-set member per admitted request. Here for its memory per key.
 */
final class SortedSetLogContender implements RedisContender {
  private static final String PREFIX = "zlog:";
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisAsyncCommands<String, String> async;
  private final String sha;
  private final AtomicLong ids = new AtomicLong();

  private final String[] limits;
  private final String rule;

  SortedSetLogContender(String uri, Workload w) {
    if (w.limits().size() != 2) {
      throw new IllegalArgumentException("the sorted-set script checks two windows");
    }
    limits = new String[] {
        Long.toString(w.limits().get(0).limit()), Long.toString(w.limits().get(0).period().toNanos() / 1000),
        Long.toString(w.limits().get(1).limit()), Long.toString(w.limits().get(1).period().toNanos() / 1000)};
    rule = w.rule() + " (exact log, one member per admitted request)";
    client = RedisClient.create(uri);
    connection = client.connect();
    async = connection.async();
    sha = connection.sync().scriptLoad(script());
  }

  static String script() {
    try (InputStream in = SortedSetLogContender.class.getResourceAsStream("sorted_set_log.lua")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String ruleDescription() {
    return rule;
  }

  @Override
  public CompletionStage<Boolean> acquire(String key) {
    String[] keys = {PREFIX + key};
    return async.<Long>evalsha(sha, ScriptOutputType.INTEGER, keys, Long.toString(ids.incrementAndGet()), limits[0],
        limits[1], limits[2], limits[3])
        .thenApply(r -> r == 1L);
  }

  @Override
  public String redisKeyPattern(String key) {
    return PREFIX + key;
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }
}
