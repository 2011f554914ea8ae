package dev.sluice.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.sluice.Window;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The byte estimates the memory store's budget rests on, pinned two ways: against sizes worked
 * out by hand from HotSpot's 64-bit layout (12-byte object header, 16-byte array header, objects
 * a multiple of 8 bytes, references of 4 bytes with compressed oops and 8 without), and against
 * the bytes this JVM actually allocates for each algorithm's state.
 */
class HeapTest {
  private static final boolean COMPRESSED_OOPS = Boolean.parseBoolean(
      ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).getVMOption("UseCompressedOops").getValue());
  private static final List<Window> TWO_WINDOWS = List.of(Window.of(20, Duration.ofMinutes(1)),
      Window.of(5, Duration.ofSeconds(3)));

  @Test
  void referencesAreAsWideAsThisJvmMakesThem() {
    assertThat(Heap.REF).isEqualTo(COMPRESSED_OOPS ? 4 : 8);
    assertThat(Heap.HEADER).isEqualTo(12);
    assertThat(Heap.ARRAY_HEADER).isEqualTo(16);
  }

  @Test
  void everySizeIsRoundedUpToEightBytes() {
    assertThat(Heap.align(0)).isZero();
    assertThat(Heap.align(1)).isEqualTo(8);
    assertThat(Heap.align(7)).isEqualTo(8);
    assertThat(Heap.align(8)).isEqualTo(8);
    assertThat(Heap.align(9)).isEqualTo(16);
    assertThat(Heap.align((1L << 40) + 1)).isEqualTo((1L << 40) + 8);
  }

  @Test
  void anObjectIsItsHeaderAndFieldsRoundedUp() {
    assertThat(Heap.object(0)).as("a header alone: 12 bytes, padded").isEqualTo(16);
    assertThat(Heap.object(4)).as("an int fills the header's padding").isEqualTo(16);
    assertThat(Heap.object(5)).isEqualTo(24);
    assertThat(Heap.object(8)).as("a long: 12 + 8 = 20").isEqualTo(24);
    assertThat(Heap.object(20)).isEqualTo(32);
  }

  @Test
  void anArrayIsItsHeaderAndElementsRoundedUp() {
    assertThat(Heap.longs(0)).isEqualTo(16);
    assertThat(Heap.longs(1)).isEqualTo(24);
    assertThat(Heap.longs(3)).isEqualTo(40);
    assertThat(Heap.ints(1)).as("16 + 4 = 20").isEqualTo(24);
    assertThat(Heap.ints(2)).isEqualTo(24);
    assertThat(Heap.ints(3)).as("16 + 12 = 28").isEqualTo(32);
    assertThat(Heap.booleans(1)).isEqualTo(24);
    assertThat(Heap.booleans(8)).isEqualTo(24);
    assertThat(Heap.booleans(9)).isEqualTo(32);
  }

  @Test
  void aStringIsItsObjectAndItsBytesOneOrTwoPerChar() {
    // The String: header, value (a reference), hash (int), coder and hashIsZero (bytes).
    long string = Heap.align(12 + Heap.REF + 4 + 1 + 1);
    assertThat(string).isEqualTo(COMPRESSED_OOPS ? 24 : 32);
    assertThat(Heap.string("")).isEqualTo(string + 16);
    // Latin-1 up to U+00FF, one byte each: 16 + 9 = 25, so 32.
    assertThat(Heap.string("\u00ff".repeat(9))).isEqualTo(string + 32);
    assertThat(Heap.string("a".repeat(9))).isEqualTo(string + 32);
    // From U+0100 on, two bytes each, for every char of the string: 16 + 18 = 34, so 40.
    assertThat(Heap.string("\u0100".repeat(9))).isEqualTo(string + 40);
    assertThat(Heap.string("aaaaaaaa\u20ac")).isEqualTo(string + 40);
    assertThat(Heap.string("\u20acaaaaaaaa")).isEqualTo(string + 40);
  }

  @Test
  void aMapEntryIsItsNodeAndThreeSlotsOfTheTable() {
    // Node: hash (int), key, value, next (references); 8 / 0.75 / 2 < 3 table slots per entry.
    long node = Heap.align(12 + 4 + 3 * Heap.REF);
    assertThat(Heap.MAP_ENTRY).isEqualTo(node + 3 * Heap.REF);
    assertThat(Heap.MAP_ENTRY).isEqualTo(COMPRESSED_OOPS ? 44 : 72);
  }

  @Test
  void anEvaluationsScratchSpaceIsItsObjectAndTwoArrays() {
    // exceeded, retryMicros, reason (references), fits (boolean), startMicros (long).
    long object = Heap.align(12 + 3 * Heap.REF + 1 + 8);
    assertThat(Eval.bytes(2)).isEqualTo(object + Heap.align(16 + 2) + Heap.align(16 + 2 * 8));
    assertThat(Eval.bytes(2)).isEqualTo(COMPRESSED_OOPS ? 40 + 24 + 32 : 48 + 24 + 32);
  }

  @Test
  void eachStatesCountedBytesAreTheBytesThisJvmAllocatesForIt() {
    assertAllocates(TokenBucket.bytes(2), () -> new TokenBucket(TWO_WINDOWS));
    assertAllocates(LeakyBucket.bytes(2), () -> new LeakyBucket(TWO_WINDOWS, 0));
    assertAllocates(FixedWindow.bytes(2), () -> new FixedWindow(TWO_WINDOWS));
    assertAllocates(SlidingWindow.bytesFor(TWO_WINDOWS, 10), () -> new SlidingWindow(TWO_WINDOWS, 10));
    assertAllocates(SlidingLog.bytesFor(TWO_WINDOWS), () -> new SlidingLog(TWO_WINDOWS));
  }

  /**
   * {@code make}'s allocations per state, as this thread's allocation counter sees them (the
   * states are kept, so none is optimised away): on JDK 17 with its default layout, the estimate
   * is exact for every algorithm (304 to 712 bytes for these two windows).
   */
  private static void assertAllocates(long counted, Supplier<KeyState> make) {
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    KeyState[] kept = new KeyState[1_000];
    for (int i = 0; i < kept.length; i++) {
      kept[i] = make.get();
    }
    long before = mx.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < kept.length; i++) {
      kept[i] = make.get();
    }
    double allocated = (double) (mx.getCurrentThreadAllocatedBytes() - before) / kept.length;
    assertThat(kept[kept.length - 1].bytes()).isEqualTo(counted);
    assertThat((double) counted).as("%s: counted vs allocated bytes", kept[0].getClass().getSimpleName())
        .isEqualTo(allocated);
  }
}
