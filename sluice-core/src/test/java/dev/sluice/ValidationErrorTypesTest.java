package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.InstanceOfAssertFactories.type;

import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * Each kind of bad request has a type of its own, thrown by the limiter's one validator on every
 * path (acquire, acquireAsync, tryAcquire, reset), so that front ends tell them apart by type
 * rather than by the words of a message.
 */
class ValidationErrorTypesTest {
  final Rule rule = Rule.builder("api").window(5, Duration.ofSeconds(60)).build();
  final RateLimiter limiter = Sluice.builder().rules(rule).ticker(new FakeTicker()).maxKeyBytes(8).build();

  @Test
  void anUnknownRuleIsAnUnknownRuleExceptionOnEveryPath() {
    assertThatThrownBy(() -> limiter.acquire("nope", "k")).asInstanceOf(type(UnknownRuleException.class))
        .satisfies(e -> assertThat(e.rule()).isEqualTo("nope"));
    assertThatThrownBy(() -> limiter.tryAcquire("nope", "k")).isInstanceOf(UnknownRuleException.class);
    assertThatThrownBy(() -> limiter.acquireAsync(Request.of("nope", "k")).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class).hasCauseInstanceOf(UnknownRuleException.class);
    assertThatThrownBy(() -> limiter.reset("nope", "k").toCompletableFuture().join())
        .hasCauseInstanceOf(UnknownRuleException.class);
  }

  @Test
  void aBadKeyIsAnInvalidKeyExceptionNamingTheItemItsLengthAndTheProblem() {
    assertThatThrownBy(() -> limiter.acquire("api", "")).asInstanceOf(type(InvalidKeyException.class))
        .satisfies(e -> {
          assertThat(e.rule()).isEqualTo("api");
          assertThat(e.item()).isZero();
          assertThat(e.keyBytes()).isZero();
          assertThat(e.problem()).isEqualTo("must not be empty");
        });
    assertThatThrownBy(() -> limiter.acquire(Request.of(Item.of("api", "ok"), Item.of("api", "\u00e9\u00e9\u00e9\u00e9\u00e9"))))
        .asInstanceOf(type(InvalidKeyException.class))
        .satisfies(e -> {
          assertThat(e.item()).isEqualTo(1);
          assertThat(e.keyBytes()).isEqualTo(10);
          assertThat(e.problem()).isEqualTo("is 10 bytes of UTF-8; the maximum is 8");
        });
    assertThatThrownBy(() -> limiter.acquire("api", "ab\udc00")).asInstanceOf(type(InvalidKeyException.class))
        .satisfies(e -> {
          assertThat(e.keyBytes()).isEqualTo(-1);
          assertThat(e.problem()).isEqualTo("has a lone surrogate (U+DC00) at index 2; a key must be valid Unicode");
        });
    assertThatThrownBy(() -> limiter.tryAcquire("api", "123456789")).isInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> limiter.acquireAsync(Request.of("api", "")).toCompletableFuture().join())
        .hasCauseInstanceOf(InvalidKeyException.class);
  }

  @Test
  void resetChecksItsKeyAsAcquireDoes() {
    assertThatThrownBy(() -> limiter.reset("api", "").toCompletableFuture().join())
        .hasCauseInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> limiter.reset("api", "\ud800").toCompletableFuture().join())
        .hasCauseInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> limiter.reset("api", "123456789").toCompletableFuture().join())
        .hasCauseInstanceOf(InvalidKeyException.class);
  }

  @Test
  void aBadCostIsAnInvalidCostExceptionNamingTheCost() {
    assertThatThrownBy(() -> limiter.acquire("api", "k", -3)).asInstanceOf(type(InvalidCostException.class))
        .satisfies(e -> {
          assertThat(e.rule()).isEqualTo("api");
          assertThat(e.cost()).isEqualTo(-3);
        });
    assertThatThrownBy(() -> limiter.tryAcquire("api", "k", -3)).isInstanceOf(InvalidCostException.class);
    assertThatThrownBy(() -> limiter.acquire(Request.of(Item.of("api", "k", Long.MAX_VALUE), Item.of("api", "k", 2))))
        .asInstanceOf(type(InvalidCostException.class))
        .satisfies(e -> assertThat(e.cost()).isEqualTo(2));
  }

  /** An item checked before the costs of repeated items are added: the message never echoes a key the limiter refuses. */
  @Test
  void aRepeatedItemWithABadKeyIsAnInvalidKeyNotAnOverflow() {
    String tooLong = "x".repeat(9);
    assertThatThrownBy(() -> limiter.acquire(Request.of(Item.of("api", tooLong, Long.MAX_VALUE),
        Item.of("api", tooLong, 1)))).isInstanceOf(InvalidKeyException.class);
  }
}
