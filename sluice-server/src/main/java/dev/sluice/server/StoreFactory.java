package dev.sluice.server;

import dev.sluice.Ticker;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import java.util.Objects;
import java.util.Set;

/**
 * Opens the store named on the command line: {@code memory}, or a Redis / Valkey URI
 * ({@code redis://}, {@code rediss://}, {@code redis-sentinel://}, {@code redis-cluster://}).
 */
public final class StoreFactory {
  private static final Set<String> REDIS_SCHEMES = Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel",
      "redis-cluster", "rediss-cluster");

  private StoreFactory() {}

  /** {@link #open(String, Ticker)} on the system ticker. */
  public static Store open(String spec) {
    return open(spec, Ticker.system());
  }

  /**
   * Opens the store {@code spec}; {@code ticker} is the memory store's clock (replay passes the
   * trace's clock). Remote stores keep their own clock.
   *
   * @throws IllegalArgumentException naming the accepted forms if {@code spec} is none of them,
   *     or naming the store if no Redis server can be reached at {@code spec}; the message never
   *     contains a password
   */
  public static Store open(String spec, Ticker ticker) {
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(ticker, "ticker");
    if (spec.equals("memory")) {
      return MemoryStore.builder().ticker(ticker).build();
    }
    int colon = spec.indexOf("://");
    String scheme = colon < 0 ? "" : spec.substring(0, colon);
    if (REDIS_SCHEMES.contains(scheme)) {
      try {
        return RedisStore.connect(spec);
      } catch (IllegalArgumentException e) {
        throw e;
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("cannot connect to the Redis store " + redact(spec) + ": " + e.getMessage(), e);
      }
    }
    throw new IllegalArgumentException("unknown store '" + redact(spec) + "'; expected memory or a redis://, "
        + "rediss://, redis-sentinel:// or redis-cluster:// URI");
  }

  /** {@code spec} with any password in its user-info part replaced by {@code ***}. */
  static String redact(String spec) {
    int scheme = spec.indexOf("://");
    int at = spec.lastIndexOf('@');
    if (scheme < 0 || at < scheme) {
      return spec;
    }
    String userInfo = spec.substring(scheme + 3, at);
    int colon = userInfo.indexOf(':');
    String user = colon < 0 ? "" : userInfo.substring(0, colon);
    // "redis://secret@host" puts the password where the user would be.
    return spec.substring(0, scheme + 3) + (colon < 0 ? "***" : user + ":***") + spec.substring(at);
  }
}
