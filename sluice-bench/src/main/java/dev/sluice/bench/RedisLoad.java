package dev.sluice.bench;

import dev.sluice.bench.redis.RedisContenders;
import dev.sluice.bench.redis.RedisRun;

/**
 * Load on a Redis server of its own: decisions per second, latency, Redis commands, Redis CPU and
 * memory per key for Sluice's Redis store and its peers, side by side in one run, on the rule
 * 20/60s + 5/3s, with 10,000 keys and with one hot key, 64 decisions in flight.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.RedisLoad
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.RedisLoad --seconds 15 --warmup 3 \
 *     --inflight 64 --keys 10000 --modes keys,hot --contenders sluice,bucket4j,redisson,zset --server redis-server
 * </pre>
 *
 * It starts {@code redis-server} (or {@code --server valkey-server}) on a free 127.0.0.1 port
 * without persistence, runs every contender for {@code --warmup} + {@code --seconds} seconds per
 * mode, then measures {@code redis-benchmark}'s ceiling for Sluice's own script, prints a Markdown
 * report, and stops the server.
 */
public final class RedisLoad {
  private RedisLoad() {}

  public static void main(String[] args) throws Exception {
    RedisRun.Options o = RedisRun.Options.parse(args);
    if (o == null) {
      System.out.println(RedisRun.Options.usage(RedisContenders.names()));
      return;
    }
    new RedisRun(o).run();
  }
}
