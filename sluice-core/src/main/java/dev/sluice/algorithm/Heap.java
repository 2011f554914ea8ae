package dev.sluice.algorithm;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * Sizes of objects on the heap of a 64-bit HotSpot JVM, for the memory store's byte budget: a
 * 12-byte object header (compressed class pointers, the default), references of 4 bytes with
 * compressed oops (the default below a 32 GB heap) and 8 without, arrays with a 16-byte header,
 * everything rounded up to 8 bytes. Field padding may differ by a few bytes from the JVM's own
 * layout; {@code MemoryStoreBytesTest} checks the totals against the heap actually used.
 */
public final class Heap {
  public static final int REF = compressedOops() ? 4 : 8;
  public static final int HEADER = 12;
  public static final int ARRAY_HEADER = 16;

  /**
   * A key's entry in a {@link java.util.concurrent.ConcurrentHashMap}: the node (hash, key, value,
   * next) and its share of the slot array, which holds up to 2.67 slots per entry (load factor
   * 0.75, doubled on growth); 3 are counted.
   */
  public static final long MAP_ENTRY = object(4 + 3L * REF) + 3L * REF;

  private Heap() {}

  /** An object of {@code fieldBytes} bytes of fields. */
  public static long object(long fieldBytes) {
    return align(HEADER + fieldBytes);
  }

  public static long longs(long n) {
    return align(ARRAY_HEADER + 8 * n);
  }

  public static long ints(long n) {
    return align(ARRAY_HEADER + 4 * n);
  }

  public static long booleans(long n) {
    return align(ARRAY_HEADER + n);
  }

  /**
   * A {@link String} (value, hash, coder, hashIsZero) and its byte array: one byte per char when
   * every char is Latin-1 (compact strings), two otherwise.
   */
  public static long string(String s) {
    int n = s.length();
    boolean latin1 = true;
    for (int i = 0; i < n && latin1; i++) {
      latin1 = s.charAt(i) < 256;
    }
    return object(REF + 4 + 1 + 1) + align(ARRAY_HEADER + (latin1 ? n : 2L * n));
  }

  public static long align(long n) {
    return (n + 7) & ~7L;
  }

  private static boolean compressedOops() {
    try {
      HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      return Boolean.parseBoolean(hs.getVMOption("UseCompressedOops").getValue());
    } catch (RuntimeException | LinkageError e) {
      // Not HotSpot, or no management: HotSpot's default.
      return Runtime.getRuntime().maxMemory() < (32L << 30);
    }
  }
}
