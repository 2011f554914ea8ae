package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import dev.sluice.testing.FlakyStore.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link RateLimiter#tryAcquireAsync} answers {@code acquireAsync(...).allowed()} and consumes as
 * it does, on each of its three paths: a local store (the store's own boolean), a remote-looking
 * one (the store's {@code tryAcquireAsync}, with timeout, bound and failure modes), and a limiter
 * with listeners (the full decision, for them).
 */
class TryAcquireAsyncTest {
  private static final String[] KEYS = {"a", "b", "vip", "c"};

  /** Where the limiter's store is, which decides the path taken. */
  enum Path {
    LOCAL, REMOTE, LISTENED
  }

  record Step(int key, long cost, long advanceMicros) {}

  @Provide
  Arbitrary<List<Step>> traces() {
    Arbitrary<Step> step = Combinators.combine(
        Arbitraries.integers().between(0, KEYS.length - 1),
        Arbitraries.longs().between(0, 3),
        Arbitraries.longs().between(0, 400_000))
        .as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(200);
  }

  private static Rule rule(Algorithm algorithm, boolean shadow) {
    return Rule.builder("r")
        .algorithm(algorithm)
        .window(4, Duration.ofMillis(900))
        .window(2, Duration.ofMillis(250))
        .override(new KeyOverride(List.of("vip"), List.of(new Window(7, Duration.ofMillis(500)))))
        .shadow(shadow)
        .build();
  }

  private static RateLimiter limiter(Path path, FakeTicker ticker, Rule... rules) {
    Store memory = MemoryStore.builder().ticker(ticker).build();
    Sluice.Builder b = Sluice.builder().rules(rules).ticker(ticker)
        .store(path == Path.REMOTE ? new FlakyStore(memory) : memory);
    if (path == Path.LISTENED) {
      b.listener(new DecisionListener() {});
    }
    return b.build();
  }

  private static boolean join(CompletionStage<Boolean> stage) {
    return stage.toCompletableFuture().join();
  }

  @Property(tries = 200)
  void answersAndConsumesExactlyAsAcquireAsyncOnEveryPath(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 0, max = 3) int algorithmIndex, @ForAll boolean shadow,
      @ForAll @IntRange(min = 0, max = 2) int pathIndex) {
    Algorithm[] algorithms = {Algorithm.SLIDING_LOG, Algorithm.SLIDING_WINDOW, Algorithm.FIXED_WINDOW,
        Algorithm.TOKEN_BUCKET};
    Rule rule = rule(algorithms[algorithmIndex], shadow);
    FakeTicker ticker = new FakeTicker();
    RateLimiter fast = limiter(Path.values()[pathIndex], ticker, rule);
    RateLimiter full = limiter(Path.LOCAL, ticker, rule);
    List<Boolean> fastAnswers = new ArrayList<>();
    List<Boolean> fullAnswers = new ArrayList<>();
    for (Step s : trace) {
      ticker.advanceMicros(s.advanceMicros());
      fastAnswers.add(join(fast.tryAcquireAsync("r", KEYS[s.key()], s.cost())));
      fullAnswers.add(full.acquireAsync(Request.of("r", KEYS[s.key()], s.cost())).toCompletableFuture().join()
          .allowed());
    }
    assertThat(fastAnswers).isEqualTo(fullAnswers);
    for (String key : KEYS) {
      assertThat(fast.acquire("r", key, 0)).isEqualTo(full.acquire("r", key, 0));
    }
  }

  @ParameterizedTest
  @EnumSource(Path.class)
  void oneUnitIsTheDefaultCostAndADenialConsumesNothing(Path path) {
    RateLimiter limiter = limiter(path, new FakeTicker(), rule(Algorithm.SLIDING_LOG, false));
    assertThat(join(limiter.tryAcquireAsync("r", "a"))).isTrue();
    assertThat(join(limiter.tryAcquireAsync("r", "a", 2))).as("3 units in the 2/250ms window").isFalse();
    assertThat(join(limiter.tryAcquireAsync("r", "a"))).isTrue();
    assertThat(join(limiter.tryAcquireAsync("r", "a"))).isFalse();
    assertThat(limiter.acquire("r", "a", 0).items().get(0).windows())
        .extracting(WindowState::remaining).containsExactly(2L, 0L);
  }

  @ParameterizedTest
  @EnumSource(Path.class)
  void badInputFailsTheStageWithWhatTryAcquireThrowsAndChangesNothing(Path path) {
    Rule leaky = Rule.builder("shape").algorithm(Algorithm.LEAKY_BUCKET).window(2, Duration.ofSeconds(1)).build();
    RateLimiter limiter = limiter(path, new FakeTicker(), rule(Algorithm.SLIDING_LOG, false), leaky);
    List<Function<RateLimiter, Object>> calls = List.of(
        l -> l.tryAcquire("nope", "a"), l -> l.tryAcquire("r", ""), l -> l.tryAcquire("r", "k".repeat(513)),
        l -> l.tryAcquire("r", "a\uD800b"), l -> l.tryAcquire("r", "a", -1), l -> l.tryAcquire("shape", "a"),
        l -> l.tryAcquire("r", null));
    List<Function<RateLimiter, CompletionStage<Boolean>>> asyncCalls = List.of(
        l -> l.tryAcquireAsync("nope", "a"), l -> l.tryAcquireAsync("r", ""),
        l -> l.tryAcquireAsync("r", "k".repeat(513)), l -> l.tryAcquireAsync("r", "a\uD800b"),
        l -> l.tryAcquireAsync("r", "a", -1), l -> l.tryAcquireAsync("shape", "a"), l -> l.tryAcquireAsync("r", null));
    for (int i = 0; i < calls.size(); i++) {
      Function<RateLimiter, Object> call = calls.get(i);
      Throwable thrown = catchThrowable(() -> call.apply(limiter));
      assertThat(thrown).as("call %d throws", i).isNotNull();
      CompletionStage<Boolean> stage = asyncCalls.get(i).apply(limiter);
      assertThatThrownBy(() -> join(stage)).as("call %d", i)
          .isInstanceOf(CompletionException.class)
          .cause().isInstanceOf(thrown.getClass()).hasMessage(thrown.getMessage());
    }
    assertThat(limiter.acquire("r", "a", 0).items().get(0).windows())
        .extracting(WindowState::remaining).containsExactly(4L, 2L);
    assertThat(limiter.acquire("shape", "a", 0).items().get(0).windows().get(0).remaining()).isEqualTo(2);
  }

  private static Throwable catchThrowable(Runnable r) {
    try {
      r.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  @Test
  void listenersSeeEveryDecision() {
    List<Decision> seen = new CopyOnWriteArrayList<>();
    RateLimiter limiter = Sluice.builder().rules(rule(Algorithm.TOKEN_BUCKET, false)).ticker(new FakeTicker())
        .listener(new DecisionListener() {
          @Override
          public void onDecision(Request request, Decision decision, long nanos) {
            seen.add(decision);
          }
        })
        .build();
    assertThat(join(limiter.tryAcquireAsync("r", "a"))).isTrue();
    assertThat(join(limiter.tryAcquireAsync("r", "a"))).isTrue();
    assertThat(join(limiter.tryAcquireAsync("r", "a"))).isFalse();
    assertThat(seen).extracting(Decision::allowed).containsExactly(true, true, false);
  }

  /** SPEC §8, as {@link FailureModeTest} checks it for decisions. */
  static final class WhenTheStoreFails {
    final FakeTicker ticker = new FakeTicker();
    final FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
    final RateLimiter limiter;

    WhenTheStoreFails(int maxInFlight) {
      limiter = Sluice.builder()
          .rules(rule("open", FailureMode.OPEN, false), rule("closed", FailureMode.CLOSED, false),
              rule("local", FailureMode.LOCAL, false), rule("closed.shadow", FailureMode.CLOSED, true))
          .store(store).ticker(ticker).localShare(0.5).storeTimeout(Duration.ofMillis(50)).maxInFlight(maxInFlight)
          .build();
    }

    static Rule rule(String name, FailureMode mode, boolean shadow) {
      return Rule.builder(name).window(4, Duration.ofSeconds(60)).failureMode(mode).shadow(shadow).build();
    }

    boolean admits(String rule) {
      return join(limiter.tryAcquireAsync(rule, "k"));
    }
  }

  @ParameterizedTest
  @EnumSource(value = Mode.class, names = {"FAILS", "THROWS", "HANGS"})
  void rulesFollowTheirFailureModeWhenTheStoreFails(Mode mode) {
    WhenTheStoreFails t = new WhenTheStoreFails(Sluice.DEFAULT_MAX_IN_FLIGHT);
    t.store.mode(mode);
    assertThat(t.admits("open")).isTrue();
    assertThat(t.admits("closed")).isFalse();
    assertThat(t.admits("closed.shadow")).as("a shadow rule never denies").isTrue();
    assertThat(List.of(t.admits("local"), t.admits("local"), t.admits("local")))
        .as("half of 4, held in process").containsExactly(true, true, false);
    t.store.mode(Mode.UP);
    assertThat(t.limiter.acquire("local", "k", 0).items().get(0).windows().get(0).remaining())
        .as("the store saw none of the outage's requests").isEqualTo(4);
  }

  @Test
  void storeCallsInFlightAreBoundedAndTheRestDecidedByFailureModesAtOnce() {
    WhenTheStoreFails t = new WhenTheStoreFails(2);
    t.store.mode(Mode.HANGS);
    // Two calls take the two slots and hang (each caller is let go at the timeout; the calls stay).
    assertThat(t.admits("open")).isTrue();
    assertThat(t.admits("open")).isTrue();
    int calls = t.store.decideCalls();
    CompletableFuture<Boolean> third = t.limiter.tryAcquireAsync("closed", "k").toCompletableFuture();
    assertThat(third).as("decided without waiting for the timeout").isCompletedWithValue(false);
    assertThat(t.store.decideCalls()).as("no call made beyond the bound").isEqualTo(calls);
  }

  @Test
  void aRequestTheStoreCouldNotDecideFailsTheStageUnderEveryFailureMode() {
    FakeTicker ticker = new FakeTicker();
    MisconfigurationTest.RefusingStore store = new MisconfigurationTest.RefusingStore(ticker);
    RateLimiter limiter = Sluice.builder().store(store).ticker(ticker)
        .rules(WhenTheStoreFails.rule("open", FailureMode.OPEN, false),
            WhenTheStoreFails.rule("local", FailureMode.LOCAL, false))
        .build();
    StoreException refused = new StoreException("the store refused the decision: WRONGTYPE");
    store.failure = refused;
    for (boolean atOnce : new boolean[] {false, true}) {
      store.throwsAtOnce = atOnce;
      for (String rule : List.of("open", "local")) {
        assertThatThrownBy(() -> join(limiter.tryAcquireAsync(rule, "k")))
            .isInstanceOf(CompletionException.class).hasCause(refused);
      }
    }
    store.failure = null;
    assertThat(limiter.acquire("local", "k", 0).items().get(0).windows().get(0).remaining())
        .as("nothing was consumed by the failures").isEqualTo(4);
  }
}
