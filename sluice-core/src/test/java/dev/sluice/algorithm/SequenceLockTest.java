package dev.sluice.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Window;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link KeyState#deniesWithoutLock} trusts a racy read only if no decision held the lock during
 * it. Races that tear a read are too rare to provoke on demand, so the state here stands in for
 * one: its racy check can make another decision happen in the middle of the read.
 */
class SequenceLockTest {

  /** A state whose racy check always says "denied", after running {@link #during} if set. */
  private static final class Probe extends KeyState {
    Runnable during;

    Probe() {
      super(List.of(Window.of(1, Duration.ofSeconds(1))));
    }

    @Override
    boolean deniedRacy(long now, long cost) {
      if (during != null) {
        during.run();
      }
      return true;
    }

    @Override
    void evaluate(long now, long cost, Eval e) {
      e.fits = true;
    }

    @Override
    public void commit(long now, long cost, Eval e) {}

    @Override
    long remaining(long now, int i) {
      return 1;
    }

    @Override
    long resetMicros(long now, int i) {
      return 0;
    }

    @Override
    public boolean idle(long now) {
      return true;
    }

    @Override
    public long bytes() {
      return 0;
    }
  }

  @Test
  void aReadDuringWhichAnotherDecisionRanIsNotTrusted() {
    Probe s = new Probe();
    assertThat(s.deniesWithoutLock(10, 1)).as("nothing ran meanwhile").isTrue();

    s.during = () -> {
      s.lock(); // another decision commits while the state is being read
      s.unlock();
    };
    assertThat(s.deniesWithoutLock(10, 1)).isFalse();

    s.during = null;
    assertThat(s.deniesWithoutLock(10, 1)).as("a quiet read is trusted again").isTrue();
  }

  @Test
  void aHeldLockOrAnEarlierTimeOrADeadStateSendsTheDecisionToTheLock() {
    Probe s = new Probe();
    s.lock();
    assertThat(s.deniesWithoutLock(10, 1)).as("held").isFalse();
    s.unlock();

    s.lastSeen = 20;
    assertThat(s.deniesWithoutLock(10, 1)).as("before the latest time seen").isFalse();
    assertThat(s.deniesWithoutLock(20, 1)).isTrue();

    s.dead = true;
    assertThat(s.deniesWithoutLock(30, 1)).as("evicted").isFalse();
  }

  @Test
  void everyLockingAndUnlockingMovesTheVersionAndLeavesItEvenWhenFree() {
    Probe s = new Probe();
    long v = s.version();
    assertThat(v % 2).isZero();
    s.lock();
    assertThat(s.version()).isEqualTo(v + 1);
    s.unlock();
    assertThat(s.version()).isEqualTo(v + 2);
  }
}
