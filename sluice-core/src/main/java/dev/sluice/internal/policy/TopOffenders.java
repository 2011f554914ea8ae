package dev.sluice.internal.policy;

import dev.sluice.policy.Offender;
import dev.sluice.Ticker;
import dev.sluice.memory.MemoryPolicyStore;
import dev.sluice.spi.DenialSketches;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The top offenders of one limiter: its denials counted per (rule, minute) in
 * {@link MinuteSketches}, handed to the store about once a second ({@link DenialSketches#addDenials},
 * where every instance's are merged), and read back merged over the minutes asked for.
 *
 * <p>A flush runs when a denial finds the last one a second old, on each tick of the policy
 * poll, and before each {@link #top} (so this instance's own denials are never missing from its
 * answer). A flush that fails loses that second's counts: the sketch is a statistic, not state,
 * and the decisions are unaffected.
 */
public final class TopOffenders implements DenialRecorder {
  static final long FLUSH_MICROS = 1_000_000;

  private final DenialSketches store;
  private final Ticker ticker;
  private final MinuteSketches sketches = new MinuteSketches();
  private final AtomicLong nextFlush = new AtomicLong(Long.MIN_VALUE);

  public TopOffenders(DenialSketches store, Ticker ticker) {
    this.store = store;
    this.ticker = ticker;
    if (store instanceof MemoryPolicyStore m) {
      m.denialMerge(TopOffenders::merge);
    }
  }

  @Override
  public void denied(String rule, String key, long atMicros) {
    long now = atMicros == UNREAD ? ticker.nowMicros() : atMicros;
    sketches.record(rule, key, 1, now);
    flushIfDue(now);
  }

  /** Flushes if the last flush is a second old. */
  void flushIfDue(long nowMicros) {
    long due = nextFlush.get();
    if (nowMicros >= due && nextFlush.compareAndSet(due, nowMicros + FLUSH_MICROS)) {
      flush();
    }
  }

  public void tick() {
    flushIfDue(ticker.nowMicros());
  }

  /** Hands what was counted since the last flush to the store; completes when the store has it. */
  CompletionStage<Void> flush() {
    sketches.expire(ticker.nowMicros());
    List<CompletableFuture<Void>> sent = new ArrayList<>();
    for (MinuteSketches.Drained d : sketches.drain()) {
      try {
        sent.add(store.addDenials(d.rule(), d.minute(), d.sketch().encode()).toCompletableFuture()
            .exceptionally(e -> null));
      } catch (RuntimeException e) {
        // Lost counts of a statistic; the next flush goes on.
      }
    }
    return CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0]));
  }

  /** The {@code count} most denied keys of {@code rule} over the last {@code minutes}, across instances. */
  CompletionStage<List<Offender>> top(String rule, int minutes, int count) {
    long nowMinute = Math.floorDiv(ticker.nowMicros(), 60_000_000L);
    return flush().thenCompose(x -> store.denials(rule, nowMinute - minutes + 1, nowMinute)).thenApply(stored -> {
      DenialSketch all = new DenialSketch();
      for (String s : stored) {
        all.merge(DenialSketch.decode(s));
      }
      List<Offender> out = new ArrayList<>();
      for (DenialSketch.Entry e : all.top(count)) {
        out.add(new Offender(e.key(), e.count(), e.error()));
      }
      return out;
    });
  }

  private static String merge(String a, String b) {
    DenialSketch s = DenialSketch.decode(a);
    s.merge(DenialSketch.decode(b));
    return s.encode();
  }
}
