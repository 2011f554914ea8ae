package dev.sluice.server;

import dev.sluice.Ticker;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.internal.Redaction;
import dev.sluice.spi.Store;
import io.lettuce.core.RedisException;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Opens the store named on the command line: {@code memory}, or a Redis / Valkey URI
 * ({@code redis://}, {@code rediss://}, {@code redis-sentinel://}, {@code redis-cluster://}).
 */
public final class StoreFactory {
  private static final Set<String> REDIS_SCHEMES = Set.of("redis", "rediss", "redis-sentinel",
      "rediss-sentinel", "redis-cluster", "rediss-cluster");

  private StoreFactory() {}

  /** {@link #open(String, Ticker)} on the system ticker. */
  public static Store open(String spec) {
    return open(spec, Ticker.system());
  }

  /**
   * Opens the store {@code spec}; {@code ticker} is the memory store's clock (replay passes the
   * trace's clock). Remote stores keep their own clock.
   *
   * @throws IllegalArgumentException naming the accepted forms if {@code spec} is none of them;
   *     the message never contains a password
   * @throws StoreUnavailableException if no Redis server named by {@code spec} can be reached;
   *     the message never contains a password
   */
  public static Store open(String spec, Ticker ticker) {
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(ticker, "ticker");
    if (spec.equals("memory")) {
      return MemoryStore.builder().ticker(ticker).build();
    }
    if (isRedis(spec)) {
      try {
        return RedisStore.connect(spec);
      } catch (RedisException e) {
        throw new StoreUnavailableException("cannot connect to " + Redaction.uri(spec) + ": " + reason(e, spec));
      }
    }
    throw new IllegalArgumentException("unknown store '" + Redaction.uri(spec) + "'; expected memory or a redis://, "
        + "rediss://, redis-sentinel:// or redis-cluster:// URI");
  }

  /** Whether {@code spec} names a Redis deployment (by its scheme). */
  public static boolean isRedis(String spec) {
    int colon = spec.indexOf("://");
    return colon > 0 && REDIS_SCHEMES.contains(spec.substring(0, colon).toLowerCase(Locale.ROOT));
  }

  /**
   * The innermost cause's message, which says what failed (refused, timed out, bad password),
   * scrubbed of the password in case a driver ever echoes it.
   */
  public static String reason(Throwable e, String spec) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    if (root != e && e.getMessage() != null) {
      m = e.getMessage() + " (" + m + ")";
    }
    return Redaction.message(m, spec);
  }
}
