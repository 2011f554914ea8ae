package dev.sluice.spring;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads {@code sluice.store} as {@code sluice serve --store} does: absent or {@code memory}, the
 * memory store; a Redis or Valkey URI by its scheme, the Redis store (from {@code sluice-redis},
 * which the application adds). The URI itself is parsed by the Redis store.
 */
final class StoreUris {
  static final Set<String> REDIS_SCHEMES = Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel",
      "redis-cluster", "rediss-cluster");
  private static final Pattern USER_INFO = Pattern.compile("(://)[^@/]*@");

  /** Opens a Redis store from a URI; absent when {@code sluice-redis} is not on the class path. */
  interface RedisOpener {
    Store open(String uri);
  }

  private StoreUris() {}

  static Store open(String spec, RedisOpener redis) {
    if (spec == null || spec.isBlank() || spec.trim().equals("memory")) {
      return MemoryStore.builder().build();
    }
    if (!isRedis(spec)) {
      throw new SluiceConfigurationException("sluice.store '" + redacted(spec) + "' is not a store",
          "Set sluice.store to memory or to a redis://, rediss://, redis-sentinel:// or redis-cluster:// URI.");
    }
    if (redis == null) {
      throw new SluiceConfigurationException("sluice.store names Redis (" + redacted(spec)
          + "), but the Redis store is not on the class path",
          "Add the dependency dev.sluice:sluice-redis to the application.");
    }
    return redis.open(spec);
  }

  static boolean isRedis(String spec) {
    int colon = spec.indexOf("://");
    return colon > 0 && REDIS_SCHEMES.contains(spec.substring(0, colon).toLowerCase(Locale.ROOT));
  }

  /** {@code spec} without its user and password, for messages and logs. */
  static String redacted(String spec) {
    return USER_INFO.matcher(spec).replaceAll("$1***@");
  }
}
