package dev.sluice;

import dev.sluice.internal.Engine;
import dev.sluice.internal.EngineConfig;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Entry point: {@code Sluice.builder().rules(...).build()} gives a {@link RateLimiter} on the
 * memory store; {@link Builder#store(Store)} puts the state elsewhere (Redis).
 */
public final class Sluice {
  /** Default maximum key length in UTF-8 bytes. */
  public static final int DEFAULT_MAX_KEY_BYTES = 512;
  /** Default bound on store calls waiting for an answer; see {@link Builder#maxInFlight}. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 10_000;
  /** Default bound on the denials of a remote store a limiter keeps; see {@link Builder#denialCache}. */
  public static final int DEFAULT_DENIAL_CACHE_KEYS = 10_000;

  private Sluice() {}

  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link RateLimiter}. Not thread-safe. */
  public static final class Builder {
    private RuleSet rules = RuleSet.empty();
    private Store store;
    private Ticker ticker = Ticker.system();
    private int maxKeyBytes = DEFAULT_MAX_KEY_BYTES;
    private Duration storeTimeout = Duration.ofMillis(250);
    private double localShare = Double.NaN; // 1 / the instances counted in the store
    private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
    private int denialCacheKeys = DEFAULT_DENIAL_CACHE_KEYS;
    private long maxPolicyBytes = Runtime.getRuntime().maxMemory() / 8;
    private Sleeper sleeper = Sleeper.system();
    private final List<DecisionListener> listeners = new ArrayList<>();

    private Builder() {}

    public Builder rules(RuleSet r) {
      this.rules = Objects.requireNonNull(r, "rules");
      return this;
    }

    /** @throws IllegalArgumentException if two rules share a name */
    public Builder rules(Rule... r) {
      return rules(RuleSet.of(r));
    }

    /** Where state lives; the memory store on {@link #ticker} by default. */
    public Builder store(Store s) {
      this.store = Objects.requireNonNull(s, "store");
      return this;
    }

    /** The clock of the default memory store (and of the local failure-mode fallback). */
    public Builder ticker(Ticker t) {
      this.ticker = Objects.requireNonNull(t, "ticker");
      return this;
    }

    /** @throws IllegalArgumentException unless 1 ≤ n ≤ 65536 */
    public Builder maxKeyBytes(int n) {
      if (n < 1 || n > 65536) {
        throw new IllegalArgumentException("maxKeyBytes must be between 1 and 65536, was " + n);
      }
      this.maxKeyBytes = n;
      return this;
    }

    /**
     * How long a remote store may take before failure modes decide. Default 250 ms. {@code
     * acquire} waits at most this long on the caller's thread; {@code acquireAsync} completes by
     * then. Keep the store client's own command timeout close to it (see {@code docs/failure.md}).
     *
     * @throws IllegalArgumentException unless positive
     */
    public Builder storeTimeout(Duration d) {
      Objects.requireNonNull(d, "storeTimeout");
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("storeTimeout must be > 0, was " + d);
      }
      this.storeTimeout = d;
      return this;
    }

    /**
     * The share of each limit that the in-process fallback of {@code failure_mode: local} holds.
     * By default, on a remote store that keeps policies (Redis), 1 / the instances sharing the
     * store, counted through heartbeats in it and as last counted before the outage; otherwise 1.
     * A share given here replaces the count.
     *
     * @throws IllegalArgumentException unless 0 < share ≤ 1
     */
    public Builder localShare(double share) {
      if (!(share > 0 && share <= 1)) {
        throw new IllegalArgumentException("localShare must be in (0, 1], was " + share);
      }
      this.localShare = share;
      return this;
    }

    /**
     * The most calls to a remote store that may wait for its answer at once; default {@value
     * #DEFAULT_MAX_IN_FLIGHT}. Beyond it a request is not sent: its rules' failure modes decide
     * at once and the decision is degraded, so a stalled store cannot pile up requests. A call
     * counts until the store answers or its client gives up on it, even after the caller stopped
     * waiting at {@link #storeTimeout}. A healthy store needs about rate × latency (50,000
     * decisions/s at 1 ms: 50), so the default leaves room for bursts and slow moments.
     *
     * @throws IllegalArgumentException unless n ≥ 1
     */
    public Builder maxInFlight(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxInFlight must be >= 1, was " + n);
      }
      this.maxInFlight = n;
      return this;
    }

    /**
     * How many denials of a remote store this limiter keeps, to answer a key that asks again while
     * its cost cannot fit yet without a store call; default {@value #DEFAULT_DENIAL_CACHE_KEYS}, 0
     * turns the cache off. A kept denial ends just before the store could admit the cost if no
     * other traffic came, so it never admits anything and denies only what the store would deny —
     * unless the key is reset through another instance meanwhile. The memory store keeps none: it
     * answers as fast as a cache would. See {@code docs/redis.md}.
     *
     * @throws IllegalArgumentException if n is negative
     */
    public Builder denialCache(int n) {
      if (n < 0) {
        throw new IllegalArgumentException("denialCache must be >= 0 keys, was " + n);
      }
      this.denialCacheKeys = n;
      return this;
    }

    /**
     * The most heap bytes this limiter's copy of the store's policies (live limits, bans, run-time
     * list entries) may take, estimated as the memory store estimates its keys; default an eighth
     * of the maximum heap. A policy set through this limiter that would not fit is refused with
     * {@link PolicyFullException} before the store is written; records set through other
     * instances beyond it are not applied here (and logged). The memory store also bounds its
     * records, by a quarter of its bytes.
     *
     * @throws IllegalArgumentException unless bytes ≥ 1
     */
    public Builder maxPolicyBytes(long bytes) {
      if (bytes < 1) {
        throw new IllegalArgumentException("maxPolicyBytes must be >= 1, was " + bytes);
      }
      this.maxPolicyBytes = bytes;
      return this;
    }

    public Builder sleeper(Sleeper s) {
      this.sleeper = Objects.requireNonNull(s, "sleeper");
      return this;
    }

    public Builder listener(DecisionListener l) {
      listeners.add(Objects.requireNonNull(l, "listener"));
      return this;
    }

    /**
     * @throws UnsupportedRuleException if the store cannot decide one of the rules (a window
     *     beyond its maximum); the store given to {@link #store} is not closed then
     */
    public RateLimiter build() {
      Store s = store != null ? store : MemoryStore.builder().ticker(ticker).build();
      MemoryStore local = MemoryStore.builder().ticker(ticker).build();
      try {
        // A memory store shares its room among the rules in force: it learns them now, not at the
        // first change.
        if (s instanceof MemoryStore m) {
          m.rulesInForce(rules);
        }
        local.rulesInForce(rules);
        return new Engine(new EngineConfig(rules, s, local, localShare, maxKeyBytes, storeTimeout, maxInFlight,
            listeners, sleeper, ticker, denialCacheKeys, maxPolicyBytes));
      } catch (RuntimeException e) {
        local.close();
        if (s != store) {
          s.close();
        }
        throw e;
      }
    }
  }
}
