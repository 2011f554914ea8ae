package dev.sluice.bench.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/** The Redis contenders by name, in report order. */
public final class RedisContenders {
  private static final Map<String, BiFunction<String, Workload, RedisContender>> BY_NAME = new LinkedHashMap<>();

  static {
    BY_NAME.put("bucket4j", Bucket4jContender::new);
    BY_NAME.put("redisson", RedissonContender::new);
    BY_NAME.put("zset", SortedSetLogContender::new);
  }

  private RedisContenders() {}

  public static List<String> names() {
    return List.copyOf(BY_NAME.keySet());
  }

  /** redis-benchmark invocations of the scripts of those of {@code contenders} that have one. */
  static List<RedisRun.Ceiling> ceilings(List<String> contenders, String uri) {
    return List.of();
  }

  /** @throws IllegalArgumentException naming the known contenders if {@code name} is not one */
  static RedisContender create(String name, String uri, Workload w) {
    BiFunction<String, Workload, RedisContender> f = BY_NAME.get(name);
    if (f == null) {
      throw new IllegalArgumentException("unknown contender '" + name + "'; known: " + String.join(",", names()));
    }
    return f.apply(uri, w);
  }
}
