package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.algorithm.TokenBucket;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The Redis store reports a one-item decision by the key's value (the value read, for a denial;
 * written, for an admission), and the algorithm's {@link ScriptAlgorithm} reads it. Here the
 * memory store decides a random trace, the value the script would keep for the same admissions
 * is written byte by byte in its documented layout ({@code docs/redis-internals.md}, "State
 * formats"), and after every step the report read from that value must be the memory store's own
 * report of the step.
 */
class StoredValueProperties {
  private static final long T0 = 1_700_000_000_000_000L;
  private static final Window THREE_HOURS = Window.of(500, Duration.ofHours(3));

  /** One request: the clock moves (an explicit time may go back), then {@code cost} is asked for. */
  record Step(long advanceMicros, long cost) {}

  @Provide
  Arbitrary<List<Window>> windows() {
    Arbitrary<Window> w = Combinators.combine(
        Arbitraries.longs().between(1, 12), Arbitraries.longs().between(1, 5_000))
        .as((limit, millis) -> Window.of(limit, Duration.ofMillis(millis)));
    return w.list().ofMinSize(1).ofMaxSize(3).uniqueElements(Window::period);
  }

  @Provide
  Arbitrary<List<Step>> traces() {
    return Combinators.combine(Arbitraries.longs().between(-200_000, 800_000), Arbitraries.longs().between(0, 4))
        .as(Step::new).list().ofMinSize(1).ofMaxSize(60);
  }

  @Property(tries = 300)
  void aSlidingLogValueReportsAsTheMemoryStateThatHoldsTheSameUnits(@ForAll("windows") List<Window> windows,
      @ForAll("traces") List<Step> trace, @ForAll boolean sixByteSlots, @ForAll @IntRange(max = 40) int spareSlots,
      @ForAll long layoutSeed, @ForAll boolean liveLimit) {
    List<Window> ws = new ArrayList<>(windows);
    if (sixByteSlots) {
      ws.add(THREE_HOURS); // a window over 2^31 µs widens every slot to 6 bytes
    }
    // Under a live limit the key's windows are not its rule's, and its value ends with 14 more bytes.
    Rule rule = Rule.builder("log").algorithm(Algorithm.SLIDING_LOG)
        .windows(liveLimit ? List.of(Window.of(7, Duration.ofMinutes(7))) : ws).build();
    List<Long> units = new ArrayList<>();
    Random layout = new Random(layoutSeed);
    replay(rule, ws, trace, (last, now, t, cost, fits) -> {
      if (fits) {
        for (long u = 0; u < cost; u++) {
          units.add(t);
        }
      }
      byte[] value = logValue(ws, units, last, spareSlots, layout);
      int length = value.length + (liveLimit ? 14 : 0);
      // Somewhere inside a reply, as the store hands it over (the live limit's end: any bytes).
      byte[] reply = new byte[length + 24];
      layout.nextBytes(reply);
      System.arraycopy(value, 0, reply, 16, value.length);
      return ScriptAlgorithm.SLIDING_LOG.report(new ResolvedItem(rule, "k", cost, ws), fits, reply, 16, length, now);
    });
  }

  @Property(tries = 300)
  void aTokenBucketValueReportsAsTheMemoryStateWithTheSameArrivalTimes(@ForAll("windows") List<Window> ws,
      @ForAll("traces") List<Step> trace) {
    Rule rule = Rule.builder("tokens").algorithm(Algorithm.TOKEN_BUCKET).windows(ws).build();
    // What token_bucket.lua's commit writes: TAT = max(TAT, t) + cost * T, from no TAT at all.
    long[] tat = new long[ws.size()];
    replay(rule, ws, trace, (last, now, t, cost, fits) -> {
      if (fits) {
        for (int i = 0; i < ws.size(); i++) {
          Window w = ws.get(i);
          tat[i] = Math.max(tat[i], t) + cost * TokenBucket.emissionInterval(w.limit(), w.periodMicros());
        }
      }
      ByteBuffer value = buffer(12 + 8 * ws.size() + StoredValue.trailer(ws.size())).putInt(0x5eed)
          .putLong(last);
      for (long x : tat) {
        value.putLong(x);
      }
      for (Window w : ws) {
        value.putLong(w.limit()).putLong(w.periodMicros());
      }
      value.putInt(0xf00d).putShort((short) ws.size());
      return ScriptAlgorithm.TOKEN_BUCKET.report(item(rule, cost), fits, value.array(), 0, value.capacity(), now);
    });
  }

  @Example
  void aValueOfTheWrongSizeIsRefusedWithItsSize() {
    Rule log = Rule.builder("log").algorithm(Algorithm.SLIDING_LOG).window(3, Duration.ofSeconds(1)).build();
    Rule tokens = Rule.builder("tokens").algorithm(Algorithm.TOKEN_BUCKET).window(3, Duration.ofSeconds(1)).build();
    byte[] b = new byte[64];

    assertThatThrownBy(() -> ScriptAlgorithm.SLIDING_LOG.report(item(log, 1), false, b, 0, 38, T0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("a sliding_log value of 38 bytes");
    // 36 + 4 bytes: one slot, which cannot hold a head at 0 and two units
    ByteBuffer twoInOne = buffer(40).putInt(0).putLong(T0).putLong(T0).putInt(0).putInt(2);
    assertThatThrownBy(() -> ScriptAlgorithm.SLIDING_LOG.report(item(log, 1), false, twoInOne.array(), 0, 40, T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a sliding_log value holding 2 units at 0 in 1 slots");
    assertThatThrownBy(() -> ScriptAlgorithm.TOKEN_BUCKET.report(item(tokens, 1), false, b, 0, 28, T0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("a token_bucket value of 28 bytes for 1 windows");
  }

  /**
   * The value after a step, read back: given the latest time the key has seen (the value's), the
   * time asked for and the time decided at (never before the key's latest), the cost and the
   * verdict.
   */
  private interface StoredAfter {
    List<WindowState> read(long last, long now, long t, long cost, boolean fits);
  }

  /**
   * Decides each step of {@code trace} on a memory store, an item of {@code rule} with windows
   * {@code ws} at the step's explicit time, and checks that the value written for it reads as
   * the memory store's report of the step.
   */
  private static void replay(Rule rule, List<Window> ws, List<Step> trace, StoredAfter stored) {
    MemoryStore memory = MemoryStore.builder().automaticSweeps(false).build();
    long now = T0;
    long last = Long.MIN_VALUE;
    for (Step step : trace) {
      now += step.advanceMicros();
      // Time never goes backwards for one key: a step decides at the latest time the key has seen.
      last = Math.max(last, now);
      ItemDecision d = memory.decideSync(new Batch(List.of(new ResolvedItem(rule, "k", step.cost(), ws)), now)).get(0);
      assertThat(stored.read(last, now, last, step.cost(), d.allowed())).as("at %d µs, cost %d", now - T0, step.cost())
          .isEqualTo(d.windows());
    }
  }

  private static ResolvedItem item(Rule rule, long cost) {
    return new ResolvedItem(rule, "k", cost, rule.windows());
  }

  /**
   * sliding_log.lua's value holding the newest units the log keeps (up to the largest limit):
   * fingerprint, latest time, base, head, size, seq, then a ring of at least one slot, each a
   * unit's time less base, the newest before head. Where the ring starts, how many slots it has
   * spare, the base and the spare slots' bytes are drawn from {@code layout}: none may matter.
   */
  private static byte[] logValue(List<Window> ws, List<Long> units, long last, int spare, Random layout) {
    long longest = 0;
    long cap = 0;
    for (Window w : ws) {
      longest = Math.max(longest, w.periodMicros());
      cap = Math.max(cap, w.limit());
    }
    int width = ScriptAlgorithm.slotWidth(longest);
    int size = (int) Math.min(units.size(), cap);
    List<Long> kept = units.subList(units.size() - size, units.size());
    long base = (size > 0 ? kept.get(0) : last) - layout.nextInt(1_000);
    int len = Math.max(1, size + spare);
    int head = layout.nextInt(len);
    byte[] slots = new byte[len * width];
    layout.nextBytes(slots);
    ByteBuffer ring = ByteBuffer.wrap(slots).order(ByteOrder.LITTLE_ENDIAN);
    for (int k = 1; k <= size; k++) {
      long offset = kept.get(size - k) - base;
      int at = Math.floorMod(head - k, len) * width;
      if (width == 4) {
        ring.putInt(at, (int) offset);
      } else if (width == 6) {
        ring.putInt(at, (int) offset).putShort(at + 4, (short) (offset >>> 32));
      } else {
        ring.putLong(at, offset);
      }
    }
    return buffer(36 + slots.length).putInt(0x5eed).putLong(last).putLong(base).putInt(head).putInt(size)
        .putLong(units.size()).put(slots).array();
  }

  private static ByteBuffer buffer(int bytes) {
    return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }
}
