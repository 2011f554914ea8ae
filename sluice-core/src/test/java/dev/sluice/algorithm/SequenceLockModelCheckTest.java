package dev.sluice.algorithm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.ModelChecks;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.List;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link KeyState}'s lock and its lock-free read path, checked by Lincheck's model checker: it
 * runs small scenarios of concurrent decisions on one state under many thread interleavings,
 * switching threads at every shared read or write, and checks that every outcome is one some
 * sequential order of the same decisions on the locked path alone would give (linearizability).
 *
 * <p>The decisions are {@code MemoryStore.tryAcquire}'s steps on one state, without the map,
 * the byte budget or the sweeper: try {@link KeyState#deniesWithoutLock} when the previous
 * decision was a denial, else lock, clamp the time, evaluate, grow, commit, unlock; and
 * {@code acquire}'s, which try {@link KeyState#denialWithoutLock} and answer a report.
 *
 * <p>The real algorithms with a lock-free denial ({@code token_bucket}, {@code sliding_log}) only
 * add to their state while time stands still, so a read torn across a decision still denies only
 * what the later state denies, and they cannot show that the version is needed. That is shown on
 * {@link RestartingWindow}, a fixed window whose count restarts when the window moves: a read
 * torn across that restart denies what no state would. The broken variants below must be caught
 * on it by the same check, which shows that the check bites: the read path without the version's
 * second read (for a denial and for its report), the read path that trusts an odd (held)
 * version, and a lock taken by a read then a write instead of a compare-and-swap.
 *
 * <p>The model checker assumes sequentially consistent memory: it finds wrong interleavings, not
 * missing fences (the orderings the lock relies on are listed in {@code docs/algorithms.md}).
 * Tagged so that it runs in a JVM of its own (see {@code sluice-core/pom.xml}): Lincheck's agent
 * rewrites classes in the JVM it runs in.
 */
@Tag("model-check")
class SequenceLockModelCheckTest {

  static final long LIMIT = 2;
  static final long PERIOD = 1_000_000; // microseconds
  static final List<Window> WINDOWS = List.of(Window.of(LIMIT, Duration.ofSeconds(1)));
  static final Rule RULE = Rule.builder("r").window(LIMIT, Duration.ofSeconds(1)).build();
  /** Where the states start: the first window is full. */
  static final long T0 = 0;
  /** The second window: a fixed window restarts here, buckets and logs have room again. */
  static final long T1 = PERIOD;
  /** The third window. */
  static final long T2 = 2 * PERIOD;

  /**
   * The scenarios, chosen rather than generated so that every run checks the same races: each is
   * a list of threads, each thread a list of decisions.
   */
  private static final String[][][] SCENARIOS = {
    // a read torn across the window's restart; two commits under one lock
    {{"acquireOne"}, {"acquireOne"}},
    // two decisions that together exceed the limit: one must be denied
    {{"acquireTwo"}, {"acquireOne"}},
    // a read at a time behind the key's latest
    {{"acquireNext"}, {"acquireOne"}},
    // a denial remembered (the hint), then a later window
    {{"acquireOne", "acquireOne"}, {"acquireNext", "acquireOne"}},
    // three threads on one lock
    {{"acquireOne"}, {"acquireOne"}, {"acquireTwo"}},
    // a denial explained without the lock, torn across the window's restart or a commit
    {{"acquireOne"}, {"explainOne"}},
    {{"explainTwo"}, {"acquireOne", "explainOne"}},
    {{"explainOne", "explainOne"}, {"acquireTwo"}},
    // a denial explained alone, remembered, answered again, torn across a commit or the restart
    {{"explainOneAlone", "explainOneAlone"}, {"acquireTwo"}},
    {{"acquireOne"}, {"explainOneAlone"}},
  };

  /**
   * Interleavings explored per scenario, at most. Each broken variant below is caught within the
   * first 100; the rest is margin.
   */
  private static final int INVOCATIONS = 1_000;

  /**
   * The same check for every subject: the {@link #SCENARIOS} only, each explored under up to
   * {@link #INVOCATIONS} interleavings, every outcome compared with the locked decisions of
   * {@code specification} run one after another in some order.
   */
  private static ModelCheckingOptions options(Class<?> specification) {
    ModelCheckingOptions options = new ModelCheckingOptions()
        .iterations(0) // no generated scenarios
        .invocationsPerIteration(INVOCATIONS)
        .sequentialSpecification(specification);
    return ModelChecks.withScenarios(options, Decisions.class, SCENARIOS, null);
  }

  @Test
  void decisionsOnAFixedWindowThatRestartsAreLinearizable() {
    options(RestartingWindowLocked.class).check(RestartingWindowDecisions.class);
  }

  @Test
  void decisionsOnATokenBucketAreLinearizable() {
    options(TokenBucketLocked.class).check(TokenBucketDecisions.class);
  }

  @Test
  void decisionsOnASlidingLogAreLinearizable() {
    options(SlidingLogLocked.class).check(SlidingLogDecisions.class);
  }

  @Test
  void aReadPathWithoutTheVersionsSecondReadIsCaught() {
    assertThatThrownBy(() -> options(RestartingWindowLocked.class).check(WithoutSecondRead.class))
        .isInstanceOf(LincheckAssertionError.class)
        .hasMessageContaining("Invalid execution results");
  }

  @Test
  void aReadPathThatTrustsAHeldVersionIsCaught() {
    assertThatThrownBy(() -> options(RestartingWindowLocked.class).check(TrustingAHeldVersion.class))
        .isInstanceOf(LincheckAssertionError.class)
        .hasMessageContaining("Invalid execution results");
  }

  @Test
  void aReportReadWithoutTheVersionsSecondReadIsCaught() {
    assertThatThrownBy(() -> options(RestartingWindowLocked.class).check(ReportWithoutSecondRead.class))
        .isInstanceOf(LincheckAssertionError.class)
        .hasMessageContaining("Invalid execution results");
  }

  @Test
  void aLockTakenByAReadAndThenAWriteIsCaught() {
    assertThatThrownBy(() -> options(RestartingWindowLocked.class).check(ReadThenWriteLock.class))
        .isInstanceOf(LincheckAssertionError.class)
        .hasMessageContaining("Invalid execution results");
  }

  @Test
  void theWindowsStartFullAndRefillAtTheNextWindow() {
    // What the scenarios rely on, decided on the locked path alone.
    for (Decisions d : List.of(new RestartingWindowLocked(), new TokenBucketLocked(), new SlidingLogLocked())) {
      assertThat(d.state.denying).isTrue();
      assertThat(d.acquire(T0, 1)).as("the first window is full").isFalse();
      assertThat(d.acquireTwo()).isTrue();
      assertThat(d.acquireOne()).as("the second window is full").isFalse();
      assertThat(d.acquireNext()).isTrue();
    }
  }

  /**
   * One state and the decisions on it. Lincheck creates one per scenario; its operations are the
   * public methods marked {@link Operation}, and the sequential specification is the subclass
   * that always locks.
   */
  public abstract static class Decisions {
    final KeyState state = newState();

    Decisions() {
      // The first window is full, and the latest decision was a denial.
      acquire(T0, LIMIT);
      state.denying = true;
    }

    abstract KeyState newState();

    @Operation
    public boolean acquireOne() {
      return acquire(T1, 1);
    }

    @Operation
    public boolean acquireTwo() {
      return acquire(T1, 2);
    }

    @Operation
    public boolean acquireNext() {
      return acquire(T2, 1);
    }

    @Operation
    public ItemDecision explainOne() {
      return explain(T1, 1);
    }

    @Operation
    public ItemDecision explainTwo() {
      return explain(T1, 2);
    }

    /**
     * {@code acquire(rule, key)}'s one-item path on one state: a denial explained alone without
     * the lock, twice, the second answering the first's decision again when nothing moved
     * ({@link KeyState#denialAloneWithoutLock}); else the decision of {@link #explain}.
     */
    @Operation
    public ItemDecision explainOneAlone() {
      if (state.denying) {
        Decision first = denialAlone(T1, 1);
        Decision again = first == null ? null : denialAlone(T1, 1);
        if (again != null) {
          return again.items().get(0);
        }
      }
      return explain(T1, 1);
    }

    Decision denialAlone(long now, long cost) {
      return state.denialAloneWithoutLock(RULE, "k", cost, now);
    }

    /** {@code MemoryStore.acquire}'s one-item decision on one state: the same, with a report. */
    final ItemDecision explain(long requested, long cost) {
      KeyState s = state;
      ResolvedItem item = new ResolvedItem(RULE, "k", cost, WINDOWS);
      if (s.denying) {
        ItemDecision d = denialWithoutLock(item, requested);
        if (d != null) {
          return d;
        }
      }
      lock();
      try {
        long now = s.clamp(requested);
        Eval e = s.evaluate(now, cost);
        if (e.fits && cost > 0) {
          s.grow(now, cost);
          s.commit(now, cost, e);
        }
        s.denying = !e.fits;
        return s.decision(item, now, e);
      } finally {
        state.unlock();
      }
    }

    ItemDecision denialWithoutLock(ResolvedItem item, long now) {
      return state.denialWithoutLock(item, now);
    }

    /** {@code MemoryStore.tryAcquire} on one state. */
    final boolean acquire(long requested, long cost) {
      KeyState s = state;
      if (s.denying && deniesWithoutLock(requested, cost)) {
        return false;
      }
      lock();
      try {
        long now = s.clamp(requested);
        Eval e = s.evaluate(now, cost);
        if (e.fits && cost > 0) {
          s.grow(now, cost);
          s.commit(now, cost, e);
        }
        s.denying = !e.fits;
        return e.fits;
      } finally {
        state.unlock();
      }
    }

    boolean deniesWithoutLock(long now, long cost) {
      return state.deniesWithoutLock(now, cost);
    }

    void lock() {
      state.lock();
    }
  }

  /** One fixed window that restarts its count when the window moves: not monotone. */
  static final class RestartingWindow extends KeyState {
    private long window;
    private long count;

    RestartingWindow() {
      super(WINDOWS);
    }

    @Override
    boolean deniedRacy(long now, long cost) {
      long w = window;
      long c = count;
      return (w == now / PERIOD ? c : 0) + cost > LIMIT;
    }

    @Override
    void evaluate(long now, long cost, Eval e) {
      e.fits = (window == now / PERIOD ? count : 0) + cost <= LIMIT;
    }

    @Override
    public void commit(long now, long cost, Eval e) {
      long w = now / PERIOD;
      if (window != w) {
        window = w;
        count = 0; // a racy read between these two writes sees the new window's full count
      }
      count += cost;
    }

    @Override
    long remaining(long now, int i) {
      return LIMIT - (window == now / PERIOD ? count : 0);
    }

    @Override
    long resetMicros(long now, int i) {
      return 0;
    }

    @Override
    public boolean idle(long now) {
      return false;
    }

    @Override
    public long bytes() {
      return 0;
    }
  }

  public static class RestartingWindowDecisions extends Decisions {
    @Override
    KeyState newState() {
      return new RestartingWindow();
    }
  }

  public static class RestartingWindowLocked extends RestartingWindowDecisions {
    @Override
    boolean deniesWithoutLock(long now, long cost) {
      return false;
    }

    @Override
    ItemDecision denialWithoutLock(ResolvedItem item, long now) {
      return null;
    }

    @Override
    Decision denialAlone(long now, long cost) {
      return null;
    }
  }

  public static class TokenBucketDecisions extends Decisions {
    @Override
    KeyState newState() {
      return new TokenBucket(WINDOWS);
    }
  }

  public static class TokenBucketLocked extends TokenBucketDecisions {
    @Override
    boolean deniesWithoutLock(long now, long cost) {
      return false;
    }

    @Override
    ItemDecision denialWithoutLock(ResolvedItem item, long now) {
      return null;
    }

    @Override
    Decision denialAlone(long now, long cost) {
      return null;
    }
  }

  public static class SlidingLogDecisions extends Decisions {
    @Override
    KeyState newState() {
      return new SlidingLog(WINDOWS);
    }
  }

  public static class SlidingLogLocked extends SlidingLogDecisions {
    @Override
    boolean deniesWithoutLock(long now, long cost) {
      return false;
    }

    @Override
    ItemDecision denialWithoutLock(ResolvedItem item, long now) {
      return null;
    }

    @Override
    Decision denialAlone(long now, long cost) {
      return null;
    }
  }

  /** {@link KeyState#deniesWithoutLock} without the version's second read. */
  public static class WithoutSecondRead extends RestartingWindowDecisions {
    @Override
    boolean deniesWithoutLock(long now, long cost) {
      long v = state.version();
      if ((v & 1) != 0 || state.dead || now < state.lastSeen) {
        return false;
      }
      return state.deniedRacy(now, cost);
    }
  }

  /** {@link KeyState#deniesWithoutLock} without the check that the version was even (free). */
  public static class TrustingAHeldVersion extends RestartingWindowDecisions {
    @Override
    boolean deniesWithoutLock(long now, long cost) {
      long v = state.version();
      if (state.dead || now < state.lastSeen) {
        return false;
      }
      boolean denied = state.deniedRacy(now, cost);
      return denied && state.version() == v;
    }
  }

  /** {@link KeyState#denialWithoutLock} without the version's second read. */
  public static class ReportWithoutSecondRead extends RestartingWindowDecisions {
    @Override
    ItemDecision denialWithoutLock(ResolvedItem item, long now) {
      long v = state.version();
      if ((v & 1) != 0 || state.dead || now < state.lastSeen || !state.deniedRacy(now, item.cost())) {
        return null;
      }
      Eval e = new Eval(1);
      e.fits = true;
      e.startMicros = now;
      state.evaluate(now, item.cost(), e);
      return e.fits ? null : state.decision(item, now, e);
    }
  }

  /** {@link KeyState#lock} with a read and then a write where a compare-and-swap belongs. */
  public static class ReadThenWriteLock extends RestartingWindowDecisions {
    private static final VarHandle VERSION;

    static {
      try {
        VERSION = MethodHandles.privateLookupIn(KeyState.class, MethodHandles.lookup())
            .findVarHandle(KeyState.class, "version", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    @Override
    void lock() {
      while (true) {
        long v = (long) VERSION.getAcquire(state);
        if ((v & 1) == 0) {
          VERSION.setRelease(state, v + 1);
          return;
        }
        Thread.onSpinWait();
      }
    }
  }
}
