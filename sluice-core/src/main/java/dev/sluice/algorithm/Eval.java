package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import java.util.Arrays;

/**
 * Scratch space for evaluating one item against its windows. Each key's state owns one and uses
 * it only under its lock, from evaluation until the decision's report is built, so a decision
 * allocates none.
 */
public final class Eval {
  public final boolean[] exceeded;
  public final long[] retryMicros;
  public boolean fits;
  /** For shaping: when the item would start, in store microseconds. */
  public long startMicros;
  public DenyReason reason = DenyReason.NONE;
  /**
   * Of a thread's scratch space for reads without the lock only: the last decision of a one-item
   * request it answered, which the next may answer again ({@link KeyState#denialAloneWithoutLock}).
   */
  Decision alone;

  Eval(int windows) {
    exceeded = new boolean[windows];
    retryMicros = new long[windows];
  }

  /** Heap bytes of an instance for {@code windows} windows. */
  static long bytes(int windows) {
    return Heap.object(4 * Heap.REF + 1 + 8) + Heap.booleans(windows) + Heap.longs(windows);
  }

  /** Forgets the previous evaluation. */
  Eval reset() {
    Arrays.fill(exceeded, false);
    Arrays.fill(retryMicros, 0);
    fits = false;
    startMicros = 0;
    reason = DenyReason.NONE;
    return this;
  }
}
