package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.internal.policy.DenialSketch.Entry;
import dev.sluice.internal.policy.MinuteSketches.Drained;
import dev.sluice.testing.FakeTicker;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class MinuteSketchesTest {
  private static final long MINUTE = 60_000_000L;
  /** The first microsecond of a minute. */
  private static final long M0 = Math.floorDiv(1_700_000_000_000_000L, MINUTE) * MINUTE;

  private final FakeTicker clock = new FakeTicker(M0);
  private final MinuteSketches sketches = new MinuteSketches(16, 3);

  private long minuteOf(long micros) {
    return Math.floorDiv(micros, MINUTE);
  }

  @Test
  void theLastMicrosecondOfAMinuteCountsForThatMinuteAndTheNextForTheNext() {
    clock.advanceMicros(MINUTE - 1);
    sketches.record("r", "a", 1, clock.nowMicros());
    clock.advanceMicros(1);
    sketches.record("r", "b", 1, clock.nowMicros());

    assertThat(sketches.top("r", 1, 10, clock.nowMicros())).containsExactly(new Entry("b", 1, 0));
    assertThat(sketches.top("r", 2, 10, clock.nowMicros()))
        .containsExactly(new Entry("a", 1, 0), new Entry("b", 1, 0));
    List<Drained> drained = sketches.drain();
    assertThat(drained).extracting(Drained::rule, Drained::minute)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("r", minuteOf(M0)),
            org.assertj.core.groups.Tuple.tuple("r", minuteOf(M0) + 1));
    assertThat(drained).extracting(d -> d.sketch().top(5))
        .containsExactly(List.of(new Entry("a", 1, 0)), List.of(new Entry("b", 1, 0)));
  }

  @Test
  void topMergesTheLastMinutesAskedForAndNoOthers() {
    sketches.record("r", "early", 10, clock.nowMicros());
    for (int m = 0; m < 10; m++) {
      sketches.record("r", "steady", 1, clock.nowMicros());
      sketches.record("other", "elsewhere", 50, clock.nowMicros());
      clock.advanceMillis(60_000);
    }
    clock.advanceMillis(-60_000); // back inside minute 9
    assertThat(sketches.top("r", 5, 10, clock.nowMicros())).containsExactly(new Entry("steady", 5, 0));
    assertThat(sketches.top("r", 10, 10, clock.nowMicros()))
        .containsExactly(new Entry("early", 10, 0), new Entry("steady", 10, 0));
    assertThat(sketches.merged("r", 10, clock.nowMicros()).total()).isEqualTo(20);
    assertThat(sketches.top("nobody", 10, 10, clock.nowMicros())).isEmpty();
  }

  @Test
  void aMinuteSixtyMinutesOnTakesTheSlotOfTheOldOne() {
    sketches.record("r", "old", 5, clock.nowMicros());
    clock.advanceMillis(59 * 60_000);
    assertThat(sketches.top("r", 60, 10, clock.nowMicros())).containsExactly(new Entry("old", 5, 0));
    clock.advanceMillis(60_000);
    assertThat(sketches.top("r", 60, 10, clock.nowMicros())).isEmpty();
    sketches.record("r", "new", 1, clock.nowMicros());
    assertThat(sketches.top("r", 60, 10, clock.nowMicros())).containsExactly(new Entry("new", 1, 0));
    // The old minute's undrained denials went with its slot.
    assertThat(sketches.drain()).extracting(Drained::minute).containsExactly(minuteOf(M0) + 60);
  }

  @Test
  void aDenialSixtyMinutesBeforeTheNewestOfItsRuleIsCountedAsLateAndNotKept() {
    sketches.record("r", "now", 1, M0 + 60 * MINUTE);
    sketches.record("r", "late", 4, M0);
    sketches.record("r", "justInTime", 2, M0 + MINUTE);
    assertThat(sketches.droppedAsLate()).isEqualTo(4);
    assertThat(sketches.drain()).extracting(Drained::minute)
        .containsExactly(minuteOf(M0) + 1, minuteOf(M0) + 60);
  }

  @Test
  void aRuleHoldsAtMostSixtyMinutes() {
    for (int m = 0; m < 200; m++) {
      sketches.record("r", "k", 1, M0 + m * MINUTE);
    }
    List<Drained> drained = sketches.drain();
    assertThat(drained).hasSize(60);
    assertThat(drained.get(0).minute()).isEqualTo(minuteOf(M0) + 140);
    assertThat(drained.get(59).minute()).isEqualTo(minuteOf(M0) + 199);
  }

  @Test
  void anUndrainedMinuteAnHourOlderThanItsRulesNewestIsNotHandedOut() {
    sketches.record("r", "old", 1, M0);
    sketches.record("r", "new", 1, M0 + 100 * MINUTE); // slot 40: minute 0's slot is left as it was
    assertThat(sketches.drain()).extracting(Drained::minute).containsExactly(minuteOf(M0) + 100);
    assertThat(sketches.drain()).isEmpty();
  }

  @Test
  void drainHandsOutWhatAccumulatedSinceTheLastDrainOnce() {
    sketches.record("r", "a", 3, clock.nowMicros());
    assertThat(sketches.drain()).singleElement().satisfies(d -> assertThat(d.sketch().total()).isEqualTo(3));
    assertThat(sketches.drain()).isEmpty();
    sketches.record("r", "a", 2, clock.nowMicros());
    assertThat(sketches.drain()).singleElement().satisfies(d -> {
      assertThat(d.minute()).isEqualTo(minuteOf(M0));
      assertThat(d.sketch().top(1)).containsExactly(new Entry("a", 2, 0));
    });
    // Drained denials belong to the store now; only what is undrained is read here.
    assertThat(sketches.top("r", 1, 10, clock.nowMicros())).isEmpty();
  }

  @Test
  void drainGoesByRuleThenMinute() {
    sketches.record("b", "k", 1, M0 + MINUTE);
    sketches.record("a", "k", 1, M0 + MINUTE);
    sketches.record("b", "k", 1, M0);
    assertThat(sketches.drain()).extracting(d -> d.rule() + "@" + (d.minute() - minuteOf(M0)))
        .containsExactly("a@1", "b@0", "b@1");
  }

  @Test
  void rulesBeyondTheBoundAreNotRecordedButCountedUntilOthersExpire() {
    sketches.record("r1", "k", 1, clock.nowMicros());
    sketches.record("r2", "k", 1, clock.nowMicros());
    sketches.record("r3", "k", 1, clock.nowMicros());
    sketches.record("r4", "k", 4, clock.nowMicros());
    assertThat(sketches.rules()).isEqualTo(3);
    assertThat(sketches.droppedForRules()).isEqualTo(4);
    assertThat(sketches.top("r4", 1, 10, clock.nowMicros())).isEmpty();

    clock.advanceMillis(59 * 60_000);
    sketches.record("r1", "k", 1, clock.nowMicros());
    assertThat(sketches.expire(clock.nowMicros())).isZero();
    clock.advanceMillis(60_000);
    assertThat(sketches.expire(clock.nowMicros())).isEqualTo(2); // r2 and r3; r1 had a denial 1 minute ago
    sketches.record("r4", "k", 1, clock.nowMicros());
    assertThat(sketches.top("r4", 1, 10, clock.nowMicros())).containsExactly(new Entry("k", 1, 0));
    assertThat(sketches.rules()).isEqualTo(2);
  }

  @Test
  void misuseIsRefusedWithAMessage() {
    assertThatThrownBy(() -> sketches.top("r", 0, 10, M0)).hasMessage("minutes must be between 1 and 60, was 0");
    assertThatThrownBy(() -> sketches.top("r", 61, 10, M0)).hasMessage("minutes must be between 1 and 60, was 61");
    assertThatThrownBy(() -> sketches.record("r", "k", 0, M0)).hasMessage("a count of denials must be positive, was 0");
    assertThatThrownBy(() -> sketches.record("r", "", 1, M0)).hasMessage("a sketch's key must not be empty");
    assertThatThrownBy(() -> new MinuteSketches(0, 10))
        .hasMessage("a sketch's capacity must be between 1 and 10000, was 0");
    assertThatThrownBy(() -> new MinuteSketches(16, 0)).hasMessage("the most rules recorded must be at least 1, was 0");
    assertThat(sketches.rules()).isZero();
  }

  /** Keys fewer than k, so the sketches are exact: a lost update would show as a missing count. */
  @Test
  void recordsFromManyThreadsAreAllCounted() throws InterruptedException {
    MinuteSketches shared = new MinuteSketches(128, 10);
    int threads = 4;
    int perThread = 20_000;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < perThread; i++) {
          // Two rules, two minutes, 50 keys; drains race with records from one thread.
          shared.record(i % 2 == 0 ? "a" : "b", "k" + i % 50, 1, M0 + (i % 3 == 0 ? MINUTE : 0));
        }
      });
      workers.add(w);
      w.start();
    }
    List<Drained> drained = new ArrayList<>();
    start.countDown();
    for (int i = 0; i < 100; i++) {
      drained.addAll(shared.drain());
    }
    for (Thread w : workers) {
      w.join();
    }
    drained.addAll(shared.drain());
    long total = drained.stream().mapToLong(d -> d.sketch().total()).sum();
    assertThat(total).isEqualTo((long) threads * perThread);
    DenialSketch a = new DenialSketch(128);
    drained.stream().filter(d -> d.rule().equals("a")).forEach(d -> a.merge(d.sketch()));
    // Rule a gets even i: keys k0, k2, ... k48, each 400 times per thread.
    assertThat(a.top(128)).hasSize(25).allSatisfy(e -> assertThat(e).isEqualTo(new Entry(e.key(), 1_600, 0)));
  }

  @Test
  void aRunOfOneKeyIsKeptWithItsMinuteWhenTheMinuteChanges() {
    for (int i = 0; i < 5; i++) {
      sketches.record("r", "a", 1, M0 + MINUTE - 1);
    }
    sketches.record("r", "a", 2, M0 + MINUTE);
    sketches.record("r", "a", 1, M0 + MINUTE);
    assertThat(sketches.top("r", 1, 10, M0)).containsExactly(new Entry("a", 5, 0));
    List<Drained> drained = sketches.drain();
    assertThat(drained).extracting(Drained::minute).containsExactly(minuteOf(M0), minuteOf(M0) + 1);
    assertThat(drained).extracting(d -> d.sketch().top(5))
        .containsExactly(List.of(new Entry("a", 5, 0)), List.of(new Entry("a", 3, 0)));
    sketches.record("r", "a", 1, M0 + MINUTE);
    assertThat(sketches.drain()).singleElement().satisfies(d -> assertThat(d.sketch().total()).isEqualTo(1));
  }

  /**
   * Runs of one hot key and single denials of others, from several threads over a minute change,
   * while drains and reads race them: fewer keys than k per sketch, so every drained count is exact
   * and a denial lost, counted twice or left behind in a thread's front would show.
   */
  @Test
  void runsOfOneKeyFromManyThreadsRacingDrainsAreEachDrainedExactlyOnce() throws InterruptedException {
    runsRacingDrains(4, 500_000);
  }

  /**
   * The same with twice as many threads as a rule has fronts, so that threads share fronts: their
   * adds without the lock race each other, other keys taking the front, and drains emptying it.
   */
  @Test
  void threadsSharingAFrontCountEachDenialExactlyOnce() throws InterruptedException {
    runsRacingDrains(2 * MinuteSketches.STRIPES, 40_000);
  }

  private void runsRacingDrains(int threads, int perThread) throws InterruptedException {
    MinuteSketches shared = new MinuteSketches(128, 10);
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    for (int t = 0; t < threads; t++) {
      int me = t;
      Thread w = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < perThread; i++) {
          long now = M0 + (i < perThread / 2 ? MINUTE - 1 : MINUTE);
          // 97 of 100 for the hot key, in runs; the others spread over 20 keys shared by all threads.
          shared.record("r", i % 100 < 97 ? "hot" : "k" + (i + me) % 20, 1, now);
        }
      });
      w.setUncaughtExceptionHandler((thread, e) -> failures.add(e));
      workers.add(w);
      w.start();
    }
    List<Drained> drained = new ArrayList<>();
    start.countDown();
    while (workers.stream().anyMatch(Thread::isAlive)) {
      drained.addAll(shared.drain());
      shared.merged("r", 2, M0 + MINUTE);
    }
    for (Thread w : workers) {
      w.join();
    }
    drained.addAll(shared.drain());
    assertThat(failures).isEmpty();
    Map<String, Long> counted = new HashMap<>();
    for (Drained d : drained) {
      assertThat(d.sketch().size()).isLessThan(128);
      for (Entry e : d.sketch().top(128)) {
        assertThat(e.error()).isZero();
        counted.merge(d.minute() - minuteOf(M0) + ":" + e.key(), e.count(), Long::sum);
      }
    }
    Map<String, Long> recorded = new HashMap<>();
    for (int t = 0; t < threads; t++) {
      for (int i = 0; i < perThread; i++) {
        String key = i % 100 < 97 ? "hot" : "k" + (i + t) % 20;
        recorded.merge((i < perThread / 2 ? 0 : 1) + ":" + key, 1L, Long::sum);
      }
    }
    assertThat(counted).isEqualTo(recorded);
    assertThat(shared.droppedAsLate()).isZero();
  }
}
