package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import java.util.Arrays;

/**
 * Scratch space for evaluating one item against its windows. Each key's state owns one and uses
 * it only under its lock, from evaluation until the decision's report is built, so a decision
 * allocates none. Each thread has one more, {@link Reads}, for reports read without the lock.
 */
public class Eval {
  public final boolean[] exceeded;
  public final long[] retryMicros;
  public boolean fits;
  /** For shaping: when the item would start, in store microseconds. */
  public long startMicros;
  public DenyReason reason = DenyReason.NONE;

  Eval(int windows) {
    this(windows, 0);
  }

  private Eval(int windows, int slack) {
    exceeded = new boolean[windows + slack];
    retryMicros = new long[windows + slack / 8];
  }

  /** Heap bytes of an instance for {@code windows} windows. */
  static long bytes(int windows) {
    return Heap.object(3 * Heap.REF + 1 + 8) + Heap.booleans(windows) + Heap.longs(windows);
  }

  /** Forgets the previous evaluation of {@code windows} windows. */
  final Eval reset(int windows) {
    Arrays.fill(exceeded, 0, windows, false);
    Arrays.fill(retryMicros, 0, windows, 0);
    fits = false;
    startMicros = 0;
    reason = DenyReason.NONE;
    return this;
  }

  /**
   * A thread's scratch space for reads without the lock ({@link KeyState#denialWithoutLock}),
   * written on every such read. Every object of it keeps at least 128 unwritten bytes after the
   * last it writes (longs after the fields, elements after the arrays' windows), so that two
   * threads' scratch spaces, which a collection may copy next to each other, never share a cache
   * line (or the pair of lines a prefetcher fetches): two threads explaining denials together
   * would otherwise take turns owning one line, at a fifth of their speed, from that collection on.
   */
  static final class Reads extends Eval {
    private static final int SLACK = 128;

    /** The windows this scratch space has room for. */
    final int room;
    /**
     * The last decision of a one-item request this thread answered, which the next may answer
     * again ({@link KeyState#denialAloneWithoutLock}); with the state and its version, the cost,
     * and the times between which its whole milliseconds stay as they are.
     */
    Decision alone;
    KeyState state;
    long version;
    long cost;
    long from;
    long until;

    @SuppressWarnings("unused") // padding, see above
    private long p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16;

    Reads(int windows) {
      super(windows, SLACK);
      room = windows;
    }

    void remember(Decision d, KeyState s, long v, long c, long at, long stableUntil) {
      alone = d;
      state = s;
      version = v;
      cost = c;
      from = at;
      until = stableUntil;
    }
  }
}
