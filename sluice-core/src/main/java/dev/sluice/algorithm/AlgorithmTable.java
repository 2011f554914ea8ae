package dev.sluice.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Rule;
import dev.sluice.Window;
import java.util.List;

/**
 * Core's one table of algorithms: for each, how the memory store makes a key's state, what a new
 * state weighs, and which rules it refuses. An algorithm added to {@link Algorithm} is added here
 * and in its state class, and nowhere else in core; {@link #of} fails at class initialisation if
 * the two enums ever differ.
 */
public enum AlgorithmTable {
  SLIDING_LOG {
    @Override
    public KeyState newState(Rule rule, List<Window> windows) {
      return new SlidingLog(windows);
    }

    @Override
    public long newStateBytes(Rule rule, List<Window> windows) {
      return SlidingLog.bytesFor(windows);
    }

    /** Refuses a window whose log could not be held (see {@link SlidingLog#check}). */
    @Override
    public void check(Rule rule) {
      SlidingLog.check(rule);
    }
  },
  SLIDING_WINDOW {
    @Override
    public KeyState newState(Rule rule, List<Window> windows) {
      return new SlidingWindow(windows, rule.precision());
    }

    @Override
    public long newStateBytes(Rule rule, List<Window> windows) {
      return SlidingWindow.bytesFor(windows, rule.precision());
    }
  },
  FIXED_WINDOW {
    @Override
    public KeyState newState(Rule rule, List<Window> windows) {
      return new FixedWindow(windows);
    }

    @Override
    public long newStateBytes(Rule rule, List<Window> windows) {
      return FixedWindow.bytes(windows.size());
    }
  },
  TOKEN_BUCKET {
    @Override
    public KeyState newState(Rule rule, List<Window> windows) {
      return new TokenBucket(windows);
    }

    @Override
    public long newStateBytes(Rule rule, List<Window> windows) {
      return TokenBucket.bytes(windows.size());
    }
  },
  LEAKY_BUCKET {
    @Override
    public KeyState newState(Rule rule, List<Window> windows) {
      return new LeakyBucket(windows, LeakyBucket.maxWaitMicros(rule, windows));
    }

    @Override
    public long newStateBytes(Rule rule, List<Window> windows) {
      return LeakyBucket.bytes(windows.size());
    }
  };

  /** Indexed by {@link Algorithm#ordinal()}: a lookup on every new key must not search. */
  private static final AlgorithmTable[] BY_ALGORITHM = new AlgorithmTable[Algorithm.values().length];

  static {
    for (Algorithm a : Algorithm.values()) {
      // valueOf throws for an algorithm without a row: the class fails to load, in every test.
      BY_ALGORITHM[a.ordinal()] = valueOf(a.name());
    }
    if (values().length != BY_ALGORITHM.length) {
      throw new IllegalStateException("a row for an algorithm that does not exist");
    }
  }

  /** The row of {@code algorithm}. */
  public static AlgorithmTable of(Algorithm algorithm) {
    return BY_ALGORITHM[algorithm.ordinal()];
  }

  /** A new, empty state of a key of {@code rule} counting by {@code windows} (the key's windows). */
  public abstract KeyState newState(Rule rule, List<Window> windows);

  /** The heap bytes of {@link #newState}'s answer, known before it is made. */
  public abstract long newStateBytes(Rule rule, List<Window> windows);

  /**
   * Refuses {@code rule} (of this algorithm) if the memory store cannot hold its keys; the default
   * accepts it.
   *
   * @throws dev.sluice.UnsupportedRuleException naming the rule, the window and the maximum
   */
  public void check(Rule rule) {}
}
