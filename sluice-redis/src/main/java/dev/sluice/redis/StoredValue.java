package dev.sluice.redis;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The value the Redis store keeps under a key ({@code values.lua}): little-endian integers, a
 * header of the fingerprint of the rule and the key's windows (uint32) and the latest time the
 * key has seen (int64, µs), then the algorithm's own fields, which its {@link ScriptAlgorithm} reads. A value of
 * fixed size written under other windows than its rule's own ends with them ({@link #trailer}).
 */
final class StoredValue {
  /** fingerprint, latest time. */
  static final int HEADER = 12;

  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

  private StoredValue() {}

  /**
   * The bytes a fixed-size value of other windows than its rule's own ends with, for
   * {@code windows} windows: per window limit and
   * period (int64), then the rule's own fingerprint (uint32) and the window count (uint16).
   */
  static int trailer(int windows) {
    return 16 * windows + 6;
  }

  /** The latest time recorded in the value at {@code from}. */
  static long last(byte[] b, int from) {
    return int64(b, from + 4);
  }

  static long int64(byte[] b, int at) {
    return (long) LONG.get(b, at);
  }

  static long uint32(byte[] b, int at) {
    return Integer.toUnsignedLong((int) INT.get(b, at));
  }

  static long uint48(byte[] b, int at) {
    return uint32(b, at) | (long) Short.toUnsignedInt((short) SHORT.get(b, at + 4)) << 32;
  }
}
