package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A rule the store cannot decide is refused when it is given to the store; a store error that is
 * not an outage fails the request under every failure mode instead of being decided by it.
 */
class MisconfigurationTest {
  final FakeTicker ticker = new FakeTicker();

  /** A remote-looking store over the memory store that refuses rules and requests as told. */
  static final class RefusingStore implements Store {
    final MemoryStore memory;
    final AtomicInteger rulesChanged = new AtomicInteger();
    volatile String refusedRule;
    /** How a decision fails: null, it does not. */
    volatile RuntimeException failure;
    volatile boolean throwsAtOnce;

    RefusingStore(FakeTicker ticker) {
      memory = MemoryStore.builder().ticker(ticker).build();
    }

    @Override
    public void check(Rule rule) {
      if (rule.name().equals(refusedRule)) {
        throw UnsupportedRuleException.window(rule, null, rule.windows().get(0), "this store supports limits up to 9");
      }
    }

    @Override
    public CompletionStage<List<ItemDecision>> decide(Batch batch) {
      RuntimeException f = failure;
      if (f == null) {
        return memory.decide(batch);
      }
      if (throwsAtOnce) {
        throw f;
      }
      return CompletableFuture.failedFuture(f);
    }

    @Override
    public CompletionStage<Void> reset(String rule, String key) {
      return memory.reset(rule, key);
    }

    @Override
    public void rulesChanged(RuleSet before, RuleSet after) {
      rulesChanged.incrementAndGet();
      memory.rulesChanged(before, after);
    }

    @Override
    public CompletionStage<Boolean> ping() {
      return CompletableFuture.completedFuture(true);
    }

    @Override
    public String describe() {
      return "refusing store";
    }

    @Override
    public void close() {
      memory.close();
    }
  }

  static final class Recording implements DecisionListener {
    final List<Decision> decisions = new CopyOnWriteArrayList<>();
    final List<Throwable> errors = new CopyOnWriteArrayList<>();

    @Override
    public void onDecision(Request request, Decision decision, long storeNanos) {
      decisions.add(decision);
    }

    @Override
    public void onStoreError(Request request, Throwable error) {
      errors.add(error);
    }
  }

  final RefusingStore store = new RefusingStore(ticker);
  final Recording listener = new Recording();

  static Rule rule(String name, long limit, FailureMode mode) {
    return Rule.builder(name).window(limit, Duration.ofMinutes(1)).failureMode(mode).build();
  }

  @ParameterizedTest
  @EnumSource(FailureMode.class)
  void aRequestTheStoreCouldNotDecideFailsUnderEveryFailureModeInsteadOfBeingDecidedByIt(FailureMode mode) {
    RateLimiter limiter = Sluice.builder().rules(rule("r", 5, mode)).store(store).ticker(ticker).listener(listener)
        .build();
    StoreException refused = new StoreException("the store refused the decision: WRONGTYPE");
    store.failure = refused;
    for (boolean atOnce : new boolean[] {false, true}) {
      store.throwsAtOnce = atOnce;
      assertThatThrownBy(() -> limiter.acquire("r", "k")).isSameAs(refused);
      assertThatThrownBy(() -> limiter.tryAcquire("r", "k")).isSameAs(refused);
      assertThatThrownBy(() -> limiter.acquireAsync(Request.of("r", "k")).toCompletableFuture().join())
          .isInstanceOf(CompletionException.class).hasCause(refused);
    }
    assertThat(listener.decisions).as("no decision, degraded or not").isEmpty();
    assertThat(listener.errors).hasSize(6).containsOnly(refused);

    store.failure = null;
    Decision d = limiter.acquire("r", "k");
    assertThat(d.degraded()).isFalse();
    assertThat(d.items().get(0).windows().get(0).remaining()).as("nothing was consumed by the failures").isEqualTo(4);
  }

  @Test
  void anIllegalArgumentFromTheStoreFailsTheRequestAsAValidationErrorDoes() {
    RateLimiter limiter = Sluice.builder().rules(rule("r", 5, FailureMode.OPEN)).store(store).ticker(ticker).build();
    store.failure = new IllegalArgumentException("explicit time is outside what the store supports");
    assertThatThrownBy(() -> limiter.acquire("r", "k")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("explicit time is outside what the store supports");
  }

  @Test
  void otherStoreErrorsAreOutagesThatFailureModesDecide() {
    RateLimiter limiter = Sluice.builder().rules(rule("r", 5, FailureMode.OPEN)).store(store).ticker(ticker).build();
    store.failure = new IllegalStateException("connection refused");
    Decision d = limiter.acquire("r", "k");
    assertThat(d.allowed()).isTrue();
    assertThat(d.degraded()).isTrue();
  }

  @Test
  void aRuleTheStoreRefusesFailsTheBuildNamingRuleWindowAndMaximum() {
    store.refusedRule = "big";
    assertThatThrownBy(() -> Sluice.builder().rules(rule("ok", 5, FailureMode.OPEN), rule("big", 10, FailureMode.OPEN))
        .store(store).build())
        .isInstanceOf(UnsupportedRuleException.class)
        .hasMessage("rule 'big': window 10 per 1m: this store supports limits up to 9")
        .extracting(e -> ((UnsupportedRuleException) e).rule()).isEqualTo("big");
  }

  @Test
  void newRulesTheStoreRefusesLeaveTheRulesInForceAndTheirState() {
    RateLimiter limiter = Sluice.builder().rules(rule("ok", 5, FailureMode.OPEN)).store(store).ticker(ticker).build();
    limiter.acquire("ok", "k");
    RuleSet before = limiter.rules();
    store.refusedRule = "big";
    assertThatThrownBy(() -> limiter.updateRules(RuleSet.of(rule("ok", 7, FailureMode.OPEN),
        rule("big", 10, FailureMode.OPEN))))
        .isInstanceOf(UnsupportedRuleException.class).hasMessageContaining("rule 'big'");
    assertThat(limiter.rules()).isSameAs(before);
    assertThat(store.rulesChanged).as("the store was not told of rules that were refused").hasValue(0);
    assertThat(limiter.acquire("ok", "k").items().get(0).windows().get(0).remaining()).isEqualTo(3);
  }

  @Test
  void theMemoryStoreRefusesASlidingLogWindowAboveItsLargestLimitAtBuild() {
    Rule huge = Rule.builder("huge").window(1L << 31, Duration.ofHours(1)).build();
    assertThatThrownBy(() -> Sluice.builder().rules(huge).ticker(ticker).build())
        .isInstanceOf(UnsupportedRuleException.class)
        .hasMessage("rule 'huge': window 2147483648 per 1h: the memory store's sliding_log supports limits up to "
            + "2147483639; use sliding_window for larger limits");
    Rule tiered = Rule.builder("tiered").window(10, Duration.ofSeconds(1))
        .override(new KeyOverride(List.of("a", "b*"), List.of(new Window(1L << 31, Duration.ofMillis(1500)))))
        .build();
    assertThatThrownBy(() -> Sluice.builder().rules(tiered).ticker(ticker).build())
        .hasMessageStartingWith("rule 'tiered', override 'a', 'b*': window 2147483648 per 1500ms: ");
  }
}
