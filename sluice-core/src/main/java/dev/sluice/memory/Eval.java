package dev.sluice.memory;

/** Scratch space for evaluating one item against its windows; one per item per decision. */
final class Eval {
  final boolean[] exceeded;
  final long[] retryMicros;
  boolean fits;
  /** For shaping: when the item would start, in store microseconds. */
  long startMicros;
  dev.sluice.DenyReason reason = dev.sluice.DenyReason.NONE;

  Eval(int windows) {
    exceeded = new boolean[windows];
    retryMicros = new long[windows];
  }
}
