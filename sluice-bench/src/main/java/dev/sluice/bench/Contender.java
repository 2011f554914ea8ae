package dev.sluice.bench;

import com.google.common.util.concurrent.RateLimiter;
import dev.sluice.Algorithm;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.LocalBucketBuilder;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The in-process contenders, by the name used in JMH's {@code impl} parameter. Keyed peers keep
 * one limiter per key in a {@link ConcurrentHashMap}, created on first use, which is what an
 * application does with them; Sluice keys are its own.
 */
public enum Contender {
  /** Returns true: the cost of the harness (key choice, call, blackhole). */
  BASELINE {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return key -> true;
    }
  },
  /**
   * Sluice, memory store, {@code sliding_log} (the default: an exact rolling window), through
   * {@code tryAcquire}: a boolean, as the peers answer.
   */
  SLUICE {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return sluice(shape, Algorithm.SLIDING_LOG, false);
    }
  },
  /** Sluice, memory store, {@code token_bucket} (GCRA): the same semantics as Bucket4j's greedy refill. */
  SLUICE_TOKEN_BUCKET {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return sluice(shape, Algorithm.TOKEN_BUCKET, false);
    }
  },
  /**
   * Sluice, {@code sliding_log}, through {@code acquire}: the full decision, every window's
   * remaining, retry-after and reset-after, which no peer computes.
   */
  SLUICE_DECISION {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return sluice(shape, Algorithm.SLIDING_LOG, true);
    }
  },
  /** Bucket4j local bucket, lock-free (its default), one bandwidth per window, greedy refill. */
  BUCKET4J {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return keyed(key -> bucket(shape, SynchronizationStrategy.LOCK_FREE), b -> b.tryConsume(1));
    }
  },
  /**
   * Bucket4j's lock-free local bucket through its explaining call, {@code tryConsumeAndReturnRemaining}:
   * whether consumed, the tokens left and the wait for a refill (a {@code ConsumptionProbe}), the
   * peer of Sluice's {@code acquire} as {@link #BUCKET4J} is of its {@code tryAcquire}.
   */
  BUCKET4J_PROBE {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return keyed(key -> bucket(shape, SynchronizationStrategy.LOCK_FREE), b -> b.tryConsumeAndReturnRemaining(1)
          .isConsumed());
    }
  },
  /** Bucket4j local bucket guarded by {@code synchronized}. */
  BUCKET4J_SYNCHRONIZED {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      return keyed(key -> bucket(shape, SynchronizationStrategy.SYNCHRONIZED), b -> b.tryConsume(1));
    }
  },
  /** Resilience4j {@code AtomicRateLimiter}: one limit per refresh period; cannot express two windows. */
  RESILIENCE4J {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      RuleShape.Limit l = only(shape);
      RateLimiterConfig config = RateLimiterConfig.custom()
          .limitForPeriod(Math.toIntExact(l.limit()))
          .limitRefreshPeriod(l.period())
          .timeoutDuration(Duration.ZERO)
          .build();
      return keyed(key -> io.github.resilience4j.ratelimiter.RateLimiter.of(key, config),
          io.github.resilience4j.ratelimiter.RateLimiter::acquirePermission);
    }
  },
  /** Guava {@code SmoothBursty} at limit/period permits per second; one rate, cannot express two windows. */
  GUAVA {
    @Override
    public KeyedLimiter create(RuleShape shape) {
      RuleShape.Limit l = only(shape);
      double perSecond = l.limit() * 1e9 / l.period().toNanos();
      return keyed(key -> RateLimiter.create(perSecond), RateLimiter::tryAcquire);
    }
  };

  /**
   * A limiter for {@code shape}.
   *
   * @throws UnsupportedOperationException if this contender cannot express the shape
   */
  public abstract KeyedLimiter create(RuleShape shape);

  /** Whether this contender can express rules of more than one window. */
  public boolean multiWindow() {
    return this != RESILIENCE4J && this != GUAVA;
  }

  /** Parses a lower-case name such as {@code sluice_token_bucket}. */
  public static Contender named(String name) {
    return valueOf(name.toUpperCase(java.util.Locale.ROOT));
  }

  private static RuleShape.Limit only(RuleShape shape) {
    if (!shape.singleWindow()) {
      throw new UnsupportedOperationException(shape + " has " + shape.limits().size()
          + " windows; this library checks one rate per limiter");
    }
    return shape.limits().get(0);
  }

  private static KeyedLimiter sluice(RuleShape shape, Algorithm algorithm, boolean decision) {
    Rule.Builder b = Rule.builder("bench").algorithm(algorithm);
    for (RuleShape.Limit l : shape.limits()) {
      b.window(l.limit(), l.period());
    }
    dev.sluice.RateLimiter limiter = Sluice.builder().rules(b.build()).build();
    return new KeyedLimiter() {
      @Override
      public boolean tryAcquire(String key) {
        return decision ? limiter.acquire("bench", key).allowed() : limiter.tryAcquire("bench", key);
      }

      @Override
      public void close() {
        limiter.close();
      }
    };
  }

  private static Bucket bucket(RuleShape shape, SynchronizationStrategy sync) {
    LocalBucketBuilder b = Bucket.builder().withSynchronizationStrategy(sync);
    for (RuleShape.Limit l : shape.limits()) {
      b.addLimit(Bandwidth.builder().capacity(l.limit()).refillGreedy(l.limit(), l.period()).build());
    }
    return b.build();
  }

  private static <T> KeyedLimiter keyed(Function<String, T> factory, Predicate<T> take) {
    ConcurrentHashMap<String, T> byKey = new ConcurrentHashMap<>();
    return key -> {
      T t = byKey.get(key);
      if (t == null) {
        t = byKey.computeIfAbsent(key, factory);
      }
      return take.test(t);
    };
  }
}
