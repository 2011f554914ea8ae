package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.WindowState;
import dev.sluice.spi.ResolvedItem;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The layout of a decision call's reply, byte by byte: reports as numbers and reports that are a
 * key's value, one after the other, and replies that do not add up. (That the numbers worked out
 * from values are the memory store's is what the differential tests check, on every trace.)
 */
class RepliesTest {
  private static final long T = 1_700_000_000_000_000L;

  private static final Rule TOKENS = Rule.builder("tokens").algorithm(Algorithm.TOKEN_BUCKET)
      .window(5, Duration.ofSeconds(3)).window(20, Duration.ofSeconds(60)).build();
  private static final Rule LOG = Rule.builder("log").algorithm(Algorithm.SLIDING_LOG)
      .window(3, Duration.ofSeconds(10)).window(2, Duration.ofSeconds(1)).build();
  /** The same windows and a third, of two hours, which makes the slots 6 bytes wide. */
  private static final Rule WIDE_LOG = Rule.builder("log").algorithm(Algorithm.SLIDING_LOG)
      .window(3, Duration.ofSeconds(10)).window(2, Duration.ofSeconds(1)).window(100, Duration.ofHours(2)).build();

  private static ResolvedItem item(Rule rule) {
    return new ResolvedItem(rule, "k", 1, rule.windows());
  }

  private static ByteBuffer buffer(int bytes) {
    return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** token_bucket value: fingerprint, latest time, TAT per window, then TOKENS's windows. */
  private static byte[] tokenValue(long last, long... tat) {
    ByteBuffer b = buffer(12 + 24 * tat.length + 6).putInt(7).putLong(last);
    for (long x : tat) {
      b.putLong(x);
    }
    for (var w : TOKENS.windows()) {
      b.putLong(w.limit()).putLong(w.periodMicros());
    }
    return b.putInt(8).putShort((short) tat.length).array();
  }

  /** sliding_log value with slots of {@code width} bytes: header, then the ring, oldest unit first from slot 0. */
  private static byte[] logValue(int width, long last, long base, int len, long... units) {
    ByteBuffer b = buffer(36 + width * len).putInt(7).putLong(last).putLong(base)
        .putInt(units.length % len).putInt(units.length).putLong(units.length);
    for (long u : units) {
      long rel = u - base;
      b.putInt((int) rel);
      if (width == 6) {
        b.putShort((short) (rel >>> 32));
      }
    }
    return b.array();
  }

  private static byte[] reply(long[] numbers, byte[]... values) {
    int length = 8 * numbers.length;
    for (byte[] v : values) {
      length += v.length;
    }
    ByteBuffer b = buffer(length);
    for (long n : numbers) {
      b.putLong(n);
    }
    for (byte[] v : values) {
      b.put(v);
    }
    return b.array();
  }

  private static long tag(int reason, byte[] value) {
    return -1 - reason - 4L * value.length;
  }

  @Test
  void reportsAsNumbersAndAsValuesFollowEachOtherInOrder() {
    // 3 of 5 used in 3 s (TAT 1.8 s ahead), 4 of 20 in 60 s (TAT 12 s ahead): admitted.
    byte[] admitted = tokenValue(T, T + 1_800_000, T + 12_000_000);
    // Full (TAT 3 s ahead): denied; the next unit frees 600 ms from now.
    byte[] denied = tokenValue(T - 5, T + 3_000_000, T + 15_000_000);
    int longs = Replies.longs(List.of(item(TOKENS)));
    long[] numbers = new long[1 + 1 + longs + 1];
    numbers[0] = T;
    numbers[1] = tag(0, admitted);
    // a report as numbers: reason LIMIT, wait 0, then per window remaining, retry, reset
    long[] middle = {1, 0, 0, 250_000, 3_000_000, 2, 0, 40_000_000};
    System.arraycopy(middle, 0, numbers, 2, middle.length);
    numbers[2 + longs] = tag(1, denied);

    Replies.Report[] r = Replies.split(reply(numbers, admitted, denied), new int[] {longs, longs, longs});

    ItemDecision a = Replies.decode(r[0], List.of(item(TOKENS))).get(0);
    assertThat(a.allowed()).isTrue();
    assertThat(a.windows()).containsExactly(
        new WindowState(5, 3000, 2, 0, 1800, false), new WindowState(20, 60_000, 16, 0, 12_000, false));

    ItemDecision m = Replies.decode(r[1], List.of(item(TOKENS))).get(0);
    assertThat(m.reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(m.windows().get(0)).isEqualTo(new WindowState(5, 3000, 0, 250, 3000, true));

    ItemDecision d = Replies.decode(r[2], List.of(item(TOKENS))).get(0);
    assertThat(d.allowed()).isFalse();
    assertThat(d.reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(d.windows()).containsExactly(
        new WindowState(5, 3000, 0, 600, 3000, true), new WindowState(20, 60_000, 15, 0, 15_000, false));
    assertThat(r[2].time()).isEqualTo(T);
  }

  @Test
  void aSlidingLogValueIsCountedPerWindow() {
    assertThat(ScriptAlgorithm.slotWidth(10_000_000)).isEqualTo(4);
    // Units at T-9.5 s, T-0.8 s, T-0.3 s; the last two fill the 2-per-second window.
    byte[] value = logValue(4, T - 300_000, T - 20_000_000, 4, T - 9_500_000, T - 800_000, T - 300_000);
    long[] numbers = {T, tag(1, value)};

    Replies.Report[] r = Replies.split(reply(numbers, value), new int[] {Replies.longs(List.of(item(LOG)))});

    ItemDecision d = Replies.decode(r[0], List.of(item(LOG))).get(0);
    assertThat(d.allowed()).isFalse();
    assertThat(d.windows()).containsExactly(
        // 10 s: all three inside, full; the oldest leaves in 0.5 s, the newest in 9.7 s
        new WindowState(3, 10_000, 0, 500, 9700, true),
        // 1 s: two inside; the second most recent leaves in 0.2 s, the newest in 0.7 s
        new WindowState(2, 1000, 0, 200, 700, true));
  }

  /** A window of two hours makes the slots 6 bytes wide; a base 3 hours back needs more than 4. */
  @Test
  void sixByteSlotsAreReadAsWideAsTheRuleMakesThem() {
    assertThat(ScriptAlgorithm.slotWidth(Duration.ofHours(2).toNanos() / 1000)).isEqualTo(6);
    long base = T - Duration.ofHours(3).toNanos() / 1000;
    byte[] value = logValue(6, T - 300_000, base, 4, T - 9_500_000, T - 800_000, T - 300_000);
    long[] numbers = {T, tag(1, value)};

    Replies.Report[] r = Replies.split(reply(numbers, value), new int[] {Replies.longs(List.of(item(WIDE_LOG)))});

    ItemDecision d = Replies.decode(r[0], List.of(item(WIDE_LOG))).get(0);
    assertThat(d.windows()).containsExactly(
        new WindowState(3, 10_000, 0, 500, 9700, true),
        new WindowState(2, 1000, 0, 200, 700, true),
        // 2 h: three of 100 inside; the newest leaves in 2 h less 0.3 s
        new WindowState(100, 7_200_000, 97, 0, 7_200_000 - 300, false));
  }

  @Test
  void aReplyThatDoesNotAddUpIsRefusedWithWhatWasExpected() {
    byte[] value = tokenValue(T, T, T);
    int longs = Replies.longs(List.of(item(TOKENS)));
    byte[] whole = reply(new long[] {T, tag(0, value)}, value);

    assertThatThrownBy(() -> Replies.split(java.util.Arrays.copyOf(whole, whole.length - 1), new int[] {longs}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("has " + (whole.length - 1) + " bytes, expected " + whole.length);
    long[] oneReport = new long[1 + longs];
    oneReport[0] = T;
    assertThatThrownBy(() -> Replies.split(reply(oneReport), new int[] {longs, longs}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("ends in the report of request 2 of 2");
    // a value's length far beyond the reply
    assertThatThrownBy(() -> Replies.split(reply(new long[] {T, -1 - 4L * 1_000_000}), new int[] {longs}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("expected");
  }
}
