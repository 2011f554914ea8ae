package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §8 on a real server: stopped mid-traffic, restarted on its port, frozen with SIGSTOP.
 * Real time is used only where the network's timeouts are what is tested; the in-process
 * fallback of {@code failure_mode: local} runs on a fake clock.
 */
class FailureBehaviourTest {
  /** Its own server: these tests stop and freeze it. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  static final Duration STORE_TIMEOUT = Duration.ofMillis(200);
  /** What a busy 2-core machine may add to a timeout before a thread gets to run. */
  static final long SLACK_MS = 800;
  /**
   * Long enough for the client's reconnection attempts to have backed off well beyond a second:
   * a store that stayed down long must not stay degraded long after it is back.
   */
  static final long OUTAGE_MS = 10_000;
  /** The longest a decision may stay degraded once the server is back. */
  static final long RECOVERY_MS = 2_500;

  final FakeTicker ticker = new FakeTicker();
  final Rule open = Rule.builder("fb.open").window(1_000_000, Duration.ofMinutes(10))
      .failureMode(FailureMode.OPEN).build();
  final Rule closed = Rule.builder("fb.closed").window(1_000_000, Duration.ofMinutes(10))
      .failureMode(FailureMode.CLOSED).build();
  final Rule local = Rule.builder("fb.local").window(10, Duration.ofMinutes(10))
      .failureMode(FailureMode.LOCAL).build();
  final RecordingListener listener = new RecordingListener();
  CountingStore store;
  RateLimiter limiter;

  @BeforeEach
  void connect() {
    // The store's own defaults (command timeout, reconnection): what users get.
    store = new CountingStore(RedisStore.connect(redis.get().uri()));
  }

  @AfterEach
  void closeLimiter() {
    if (limiter != null) {
      limiter.close();
    } else {
      store.close();
    }
  }

  RateLimiter limiter(int maxInFlight) {
    limiter = Sluice.builder().rules(open, closed, local).store(store).ticker(ticker).localShare(0.5)
        .storeTimeout(STORE_TIMEOUT).maxInFlight(maxInFlight).listener(listener).build();
    return limiter;
  }

  @Test
  void rulesFollowTheirFailureModeWhileTheServerIsDownAndStopDegradingByThemselvesSoonAfterItIsBack()
      throws Exception {
    RateLimiter limiter = limiter(Sluice.DEFAULT_MAX_IN_FLIGHT);
    for (Rule r : List.of(open, closed, local)) {
      Decision d = limiter.acquire(Request.of(r.name(), "before"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.degraded()).isFalse();
    }
    try (Traffic traffic = new Traffic(limiter, 2)) {
      awaitTrue("traffic decided by the server", 10_000, () -> traffic.served.get() >= 20);

      redis.get().stop();
      long stopped = System.nanoTime();
      try {
        awaitTrue("traffic to see the outage", 5_000, () -> traffic.degraded.get() > 0);
        for (boolean async : new boolean[] {false, true}) {
          Decision o = timed(limiter, async, Request.of("fb.open", "down"));
          assertThat(o.allowed()).isTrue();
          assertThat(o.degraded()).isTrue();
          assertThat(o.items().get(0).reason()).isEqualTo(DenyReason.NONE);

          Decision c = timed(limiter, async, Request.of("fb.closed", "down"));
          assertThat(c.allowed()).isFalse();
          assertThat(c.degraded()).isTrue();
          assertThat(c.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);
          assertThat(c.retryAfterMs()).isZero();
        }
        // Half of 10 in process, on the fake clock: five pass, the sixth waits the whole period.
        List<Decision> locals = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          locals.add(timed(limiter, i % 2 == 1, Request.of("fb.local", "down")));
        }
        assertThat(locals).allSatisfy(d -> {
          assertThat(d.degraded()).isTrue();
          assertThat(d.items().get(0).windows().get(0).limit()).isEqualTo(5);
        });
        assertThat(locals).extracting(Decision::allowed).containsExactly(true, true, true, true, true, false);
        assertThat(locals.get(5).items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
        assertThat(locals.get(5).retryAfterMs()).isEqualTo(Duration.ofMinutes(10).toMillis());
        long outageLeft = OUTAGE_MS - (System.nanoTime() - stopped) / 1_000_000;
        if (outageLeft > 0) {
          Thread.sleep(outageLeft);
        }
      } finally {
        redis.get().restart();
      }

      // Nothing here reconnects: the client does so by itself.
      long back = System.nanoTime();
      awaitTrue("a decision that is no longer degraded", RECOVERY_MS,
          () -> !limiter.acquire(Request.of("fb.closed", "probe")).degraded());
      System.out.printf("FailureBehaviourTest: decided by the server again %d ms after a restart that ended a %d ms"
          + " outage%n", (System.nanoTime() - back) / 1_000_000, OUTAGE_MS);
      for (boolean async : new boolean[] {false, true}) {
        for (Rule r : List.of(open, closed)) {
          Decision d = timed(limiter, async, Request.of(r.name(), "after"));
          assertThat(d.allowed()).isTrue();
          assertThat(d.degraded()).isFalse();
        }
      }
      // The server's limit of 10 again, not the in-process share of 5.
      for (int i = 0; i < 6; i++) {
        Decision d = limiter.acquire(Request.of("fb.local", "after"));
        assertThat(d.allowed()).isTrue();
        assertThat(d.degraded()).isFalse();
        assertThat(d.items().get(0).windows().get(0).remaining()).isEqualTo(9 - i);
      }
      int servedBefore = traffic.served.get();
      awaitTrue("traffic decided by the server again", 10_000, () -> traffic.served.get() > servedBefore);
      traffic.close();
      assertThat(traffic.slowestMs.get()).as("no decision waited much beyond the store timeout")
          .isLessThanOrEqualTo(STORE_TIMEOUT.toMillis() + SLACK_MS);
      assertThat(traffic.wrong.get()).as("degraded traffic decided by its failure mode").isZero();
    }
    assertThat(listener.degraded.get()).isPositive();
    assertThat(listener.storeErrors).as("every degraded decision reported its store error")
        .hasSize(listener.degraded.get());
  }

  @Test
  void aFrozenServerDegradesWithinTheStoreTimeoutWithoutPilingUpThreadsOrCalls() throws Exception {
    int maxInFlight = 64;
    RateLimiter limiter = limiter(maxInFlight);
    for (int i = 0; i < 20; i++) {
      assertThat(limiter.acquire(Request.of("fb.closed", "warm")).degraded()).isFalse();
      assertThat(limiter.acquireAsync(Request.of("fb.open", "warm")).toCompletableFuture().join().degraded())
          .isFalse();
    }
    ThreadPoolExecutor callers = (ThreadPoolExecutor) Executors.newFixedThreadPool(4);
    callers.prestartAllCoreThreads();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    int threadsBefore = threads.getThreadCount();
    threads.resetPeakThreadCount();
    store.resetMostWaiting();
    listener.clear();
    int callsBefore = store.calls();
    int callsDuringStall;
    long pausedMs;
    List<Decision> decisions = new ArrayList<>();
    long slowestSyncMs = 0;

    long pausedAt = System.nanoTime();
    redis.get().pause();
    try {
      List<Future<Long>> syncCallers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        syncCallers.add(callers.submit(() -> {
          long slowest = 0;
          for (int i = 0; i < 10; i++) {
            long start = System.nanoTime();
            Decision d = limiter.acquire(Request.of("fb.closed", "stall"));
            slowest = Math.max(slowest, (System.nanoTime() - start) / 1_000_000);
            synchronized (decisions) {
              decisions.add(d);
            }
          }
          return slowest;
        }));
      }
      List<CompletableFuture<Decision>> burst = new ArrayList<>();
      for (int i = 0; i < 3_000; i++) {
        burst.add(limiter.acquireAsync(Request.of("fb.closed", "stall")).toCompletableFuture());
      }
      long burstEnd = System.nanoTime();
      for (CompletableFuture<Decision> f : burst) {
        long leftMs = STORE_TIMEOUT.toMillis() + SLACK_MS - (System.nanoTime() - burstEnd) / 1_000_000;
        synchronized (decisions) {
          decisions.add(f.get(Math.max(leftMs, 0), TimeUnit.MILLISECONDS));
        }
      }
      for (Future<Long> c : syncCallers) {
        slowestSyncMs = Math.max(slowestSyncMs, c.get(30, TimeUnit.SECONDS));
      }
      callsDuringStall = store.calls() - callsBefore;
    } finally {
      pausedMs = (System.nanoTime() - pausedAt) / 1_000_000;
      redis.get().resume();
      callers.shutdownNow();
    }

    assertThat(decisions).hasSize(3_040).allSatisfy(d -> {
      assertThat(d.degraded()).isTrue();
      assertThat(d.allowed()).isFalse();
      assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);
    });
    assertThat(slowestSyncMs).as("a blocked caller waited at most about the store timeout")
        .isLessThanOrEqualTo(STORE_TIMEOUT.toMillis() + SLACK_MS);
    assertThat(store.mostWaiting()).as("calls waiting for the frozen server at once").isEqualTo(maxInFlight);
    assertThat(callsDuringStall).as("calls beyond the bound were never made").isLessThan(3_040);
    assertThat(listener.storeErrors).hasSize(3_040);
    assertThat(listener.storeErrors).filteredOn(e -> e instanceof RejectedExecutionException).isNotEmpty();
    assertThat(listener.storeErrors).filteredOn(e -> e instanceof TimeoutException).isNotEmpty();
    int grew = threads.getPeakThreadCount() - threadsBefore;
    System.out.printf("FailureBehaviourTest: frozen server: %d calls made for 3,040 decisions, at most %d waiting,"
        + " threads +%d at peak, slowest blocked caller %d ms, stalled %d ms%n", callsDuringStall, store.mostWaiting(),
        grew, slowestSyncMs, pausedMs);
    assertThat(grew).as("threads started while 3,040 decisions met a frozen server").isLessThanOrEqualTo(4);

    awaitTrue("a decision that is no longer degraded", 10_000,
        () -> !limiter.acquire(Request.of("fb.open", "resumed")).degraded());
    awaitTrue("the late answers", 10_000, () -> store.waiting() == 0);
    // Every call made during the stall ran when the server resumed, though its caller had long
    // been denied as degraded: the store over-counts (never over-admits) by the calls in flight.
    // (Decisions that queued behind the store's calls in flight are sent when those return, unless
    // they waited the command timeout, 1 s: only a stall near that long could leave some uncounted.)
    Decision peek = limiter.acquire(Request.of("fb.closed", "stall", 0));
    assertThat(peek.degraded()).isFalse();
    long remaining = peek.items().get(0).windows().get(0).remaining();
    if (pausedMs < 800) {
      assertThat(remaining).as("stalled %d ms", pausedMs).isEqualTo(1_000_000 - callsDuringStall);
    } else {
      assertThat(remaining).as("stalled %d ms", pausedMs).isBetween(1_000_000L - callsDuringStall, 1_000_000L);
    }
  }

  /** Decides, checking that the decision came within the store timeout (and some slack). */
  static Decision timed(RateLimiter limiter, boolean async, Request r) throws Exception {
    long start = System.nanoTime();
    Decision d = async
        ? limiter.acquireAsync(r).toCompletableFuture().get(STORE_TIMEOUT.toMillis() + SLACK_MS, TimeUnit.MILLISECONDS)
        : limiter.acquire(r);
    assertThat((System.nanoTime() - start) / 1_000_000).as("decided within the store timeout")
        .isLessThanOrEqualTo(STORE_TIMEOUT.toMillis() + SLACK_MS);
    return d;
  }

  /** Polls a network condition every 20 ms; fails naming it after {@code timeoutMs}. */
  static void awaitTrue(String what, long timeoutMs, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeoutMs + " ms waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  /** Sync decisions on the open and closed rules from a few threads until closed. */
  static final class Traffic implements AutoCloseable {
    final AtomicInteger served = new AtomicInteger();
    final AtomicInteger degraded = new AtomicInteger();
    /** Degraded decisions that did not follow their rule's failure mode. */
    final AtomicInteger wrong = new AtomicInteger();
    final AtomicLong slowestMs = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ExecutorService threads;
    private final List<Future<?>> loops = new ArrayList<>();

    Traffic(RateLimiter limiter, int n) {
      threads = Executors.newFixedThreadPool(n);
      for (int t = 0; t < n; t++) {
        String rule = t % 2 == 0 ? "fb.open" : "fb.closed";
        loops.add(threads.submit(() -> {
          while (running.get()) {
            long start = System.nanoTime();
            Decision d = limiter.acquire(Request.of(rule, "traffic"));
            slowestMs.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
            if (!d.degraded()) {
              served.incrementAndGet();
            } else {
              degraded.incrementAndGet();
              if (d.allowed() != rule.equals("fb.open")) {
                wrong.incrementAndGet();
              }
            }
          }
          return null;
        }));
      }
    }

    @Override
    public void close() throws Exception {
      running.set(false);
      for (Future<?> f : loops) {
        f.get(10, TimeUnit.SECONDS);
      }
      threads.shutdownNow();
    }
  }
}
