package dev.sluice;

import dev.sluice.internal.Engine;
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
    private double localShare = 1.0;
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

    /** How long a remote store may take before failure modes decide. Default 250 ms. */
    public Builder storeTimeout(Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("storeTimeout must be > 0, was " + d);
      }
      this.storeTimeout = d;
      return this;
    }

    /**
     * The share of each limit that the in-process fallback of {@code failure_mode: local} holds,
     * typically 1/instances. Default 1.
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

    public Builder sleeper(Sleeper s) {
      this.sleeper = Objects.requireNonNull(s, "sleeper");
      return this;
    }

    public Builder listener(DecisionListener l) {
      listeners.add(Objects.requireNonNull(l, "listener"));
      return this;
    }

    public RateLimiter build() {
      Store s = store != null ? store : MemoryStore.builder().ticker(ticker).build();
      Store local = MemoryStore.builder().ticker(ticker).build();
      return new Engine(rules, s, local, localShare, maxKeyBytes, storeTimeout, listeners, sleeper);
    }
  }
}
