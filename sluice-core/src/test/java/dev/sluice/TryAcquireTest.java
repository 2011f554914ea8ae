package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@link RateLimiter#tryAcquire} answers exactly {@code acquire(...).allowed()} and consumes
 * exactly as it does; on the memory store it takes a path of its own, so it is checked against
 * the full decision on twin limiters fed the same trace.
 */
class TryAcquireTest {
  private static final String[] KEYS = {"a", "b", "vip", "c"};

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

  private static RateLimiter limiter(Rule rule, FakeTicker ticker, long maxKeys) {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(maxKeys).automaticSweeps(false).build();
    return Sluice.builder().store(store).rules(rule).build();
  }

  @Property(tries = 300)
  void answersAndConsumesExactlyAsAcquire(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 0, max = 3) int algorithmIndex, @ForAll boolean shadow,
      @ForAll @IntRange(min = 2, max = 5) int maxKeys) {
    Algorithm[] algorithms = {Algorithm.SLIDING_LOG, Algorithm.SLIDING_WINDOW, Algorithm.FIXED_WINDOW,
        Algorithm.TOKEN_BUCKET};
    Rule rule = rule(algorithms[algorithmIndex], shadow);
    FakeTicker ticker = new FakeTicker();
    RateLimiter fast = limiter(rule, ticker, maxKeys);
    RateLimiter full = limiter(rule, ticker, maxKeys);
    List<Boolean> fastAnswers = new ArrayList<>();
    List<Boolean> fullAnswers = new ArrayList<>();
    for (Step s : trace) {
      ticker.advanceMicros(s.advanceMicros());
      fastAnswers.add(fast.tryAcquire("r", KEYS[s.key()], s.cost()));
      fullAnswers.add(full.acquire("r", KEYS[s.key()], s.cost()).allowed());
    }
    assertThat(fastAnswers).isEqualTo(fullAnswers);
    // Same state afterwards: every key's peek reports the same windows.
    for (String key : KEYS) {
      assertThat(fast.acquire("r", key, 0)).isEqualTo(full.acquire("r", key, 0));
    }
  }

  @Test
  void deniesOnceTheTightestWindowIsFullAndConsumesNothingWhenDenied() {
    FakeTicker ticker = new FakeTicker();
    RateLimiter limiter = limiter(rule(Algorithm.SLIDING_LOG, false), ticker, 100);
    assertThat(limiter.tryAcquire("r", "a")).isTrue();
    assertThat(limiter.tryAcquire("r", "a")).isTrue();
    assertThat(limiter.tryAcquire("r", "a")).isFalse();
    assertThat(limiter.acquire("r", "a", 0).items().get(0).windows())
        .extracting(WindowState::remaining).containsExactly(2L, 0L);
    ticker.advanceMillis(250);
    assertThat(limiter.tryAcquire("r", "a", 2)).isTrue();
    assertThat(limiter.acquire("r", "a", 0).items().get(0).windows())
        .extracting(WindowState::remaining).containsExactly(0L, 0L);
  }

  @Test
  void badInputIsRejectedAsAcquireRejectsItAndChangesNothing() {
    FakeTicker ticker = new FakeTicker();
    RateLimiter limiter = limiter(rule(Algorithm.SLIDING_LOG, false), ticker, 100);
    assertThatThrownBy(() -> limiter.tryAcquire("nope", "a"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown rule 'nope'");
    assertThatThrownBy(() -> limiter.tryAcquire("r", ""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key must not be empty");
    assertThatThrownBy(() -> limiter.tryAcquire("r", "k".repeat(513)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 513 bytes");
    assertThatThrownBy(() -> limiter.tryAcquire("r", "a", -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost must be >= 0, was -1");
    assertThat(limiter.acquire("r", "a", 0).items().get(0).windows())
        .extracting(WindowState::remaining).containsExactly(4L, 2L);
  }

  @Test
  void aShapingRuleIsRefusedBecauseItsWaitWouldBeLost() {
    Rule leaky = Rule.builder("shape").algorithm(Algorithm.LEAKY_BUCKET).window(2, Duration.ofSeconds(1)).build();
    RateLimiter limiter = Sluice.builder().rules(leaky).ticker(new FakeTicker()).build();
    assertThatThrownBy(() -> limiter.tryAcquire("shape", "a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'shape' is a leaky_bucket rule")
        .hasMessageContaining("use acquire or acquireBlocking");
    assertThat(limiter.acquire("shape", "a", 0).items().get(0).windows().get(0).remaining()).isEqualTo(2);
  }

  @Test
  void listenersStillSeeEveryDecision() {
    List<Decision> seen = new ArrayList<>();
    RateLimiter limiter = Sluice.builder()
        .rules(rule(Algorithm.TOKEN_BUCKET, false))
        .ticker(new FakeTicker())
        .listener(new DecisionListener() {
          @Override
          public void onDecision(Request request, Decision decision, long nanos) {
            seen.add(decision);
          }
        })
        .build();
    assertThat(limiter.tryAcquire("r", "a")).isTrue();
    assertThat(limiter.tryAcquire("r", "a")).isTrue();
    assertThat(limiter.tryAcquire("r", "a")).isFalse();
    assertThat(seen).extracting(Decision::allowed).containsExactly(true, true, false);
  }
}
