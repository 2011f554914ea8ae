package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class RequestValidationTest {
  final FakeTicker ticker = new FakeTicker();
  final Rule rule = Rule.builder("api").window(5, Duration.ofSeconds(60)).build();
  final RateLimiter limiter = Sluice.builder().rules(rule).ticker(ticker).build();

  @Test
  void unknownRuleIsRejectedNamingIt() {
    assertThatThrownBy(() -> limiter.acquire("no.such.rule", "k"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown rule 'no.such.rule'");
  }

  @Test
  void emptyKeyIsRejectedNamingTheRule() {
    assertThatThrownBy(() -> limiter.acquire("api", ""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key must not be empty")
        .hasMessageContaining("'api'");
  }

  @Test
  void keyLengthIsCountedInUtf8Bytes() {
    assertThatCode(() -> limiter.acquire("api", "k".repeat(512))).doesNotThrowAnyException();
    assertThatCode(() -> limiter.acquire("api", "\u00e9".repeat(256))).doesNotThrowAnyException();
    assertThatCode(() -> limiter.acquire("api", "\u20ac".repeat(170))).doesNotThrowAnyException();
    assertThatCode(() -> limiter.acquire("api", "😀".repeat(128))).doesNotThrowAnyException();

    assertThatThrownBy(() -> limiter.acquire("api", "k".repeat(513)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 513 bytes of UTF-8")
        .hasMessageContaining("maximum is 512").hasMessageContaining("'api'");
    // 512 characters, but 1024 bytes.
    assertThatThrownBy(() -> limiter.acquire("api", "\u00e9".repeat(512)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 1024 bytes");
    assertThatThrownBy(() -> limiter.acquire("api", "\u20ac".repeat(171)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 513 bytes");
    assertThatThrownBy(() -> limiter.acquire("api", "😀".repeat(128) + "k"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 513 bytes");
    // ASCII first, then wider characters: every part counted at its own width.
    assertThatCode(() -> limiter.acquire("api", "user:" + "\u20ac".repeat(169))).doesNotThrowAnyException();
    assertThatThrownBy(() -> limiter.acquire("api", "user:" + "\u20ac".repeat(169) + "\u00e9"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 514 bytes");
    assertThatCode(() -> limiter.acquire("api", "user:" + "\u00e9".repeat(253) + "k")).doesNotThrowAnyException();
  }

  @Test
  void configuredKeyLimitApplies() {
    RateLimiter small = Sluice.builder().rules(rule).ticker(ticker).maxKeyBytes(8).build();
    assertThatCode(() -> small.acquire("api", "12345678")).doesNotThrowAnyException();
    assertThatThrownBy(() -> small.acquire("api", "123456789"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 9 bytes")
        .hasMessageContaining("maximum is 8");
    assertThatThrownBy(() -> small.acquire("api", "\u00e9\u00e9\u00e9\u00e9\u00e9"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 10 bytes");
  }

  /** Such a key has no UTF-8 form: encoders replace the lone surrogate, so distinct keys would collide. */
  @Test
  void keyWithALoneSurrogateIsRejected() {
    assertThatThrownBy(() -> limiter.acquire("api", "a\ud800"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("surrogate").hasMessageContaining("'api'");
    assertThatThrownBy(() -> limiter.acquire("api", "\udc00b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("surrogate");
    assertThatCode(() -> limiter.acquire("api", "\ud83d\ude00")).doesNotThrowAnyException();
  }

  @Test
  void negativeCostIsRejectedNamingTheCost() {
    assertThatThrownBy(() -> limiter.acquire("api", "k", -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost must be >= 0, was -1");
  }

  @Test
  void repeatedItemsWhoseCostsOverflowAreRejectedNamingTheItem() {
    assertThatThrownBy(() -> limiter.acquire(Request.of(Item.of("api", "k", Long.MAX_VALUE), Item.of("api", "k", 1))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'api'").hasMessageContaining("'k'");
  }

  @Test
  void requestNeedsAnItem() {
    assertThatThrownBy(() -> Request.of(List.of())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least one item");
  }

  @Test
  void badRequestNeverChangesState() {
    Rule other = Rule.builder("other").window(5, Duration.ofSeconds(60)).build();
    RateLimiter two = Sluice.builder().rules(rule, other).ticker(ticker).build();
    List<Request> bad = List.of(
        Request.of(Item.of("api", "k"), Item.of("missing", "k")),
        Request.of(Item.of("api", "k"), Item.of("other", "")),
        Request.of(Item.of("api", "k"), Item.of("other", "x".repeat(513))),
        Request.of(Item.of("other", "k"), Item.of("api", "k", Long.MAX_VALUE), Item.of("api", "k", 1)));
    for (Request r : bad) {
      assertThatThrownBy(() -> two.acquire(r)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> two.acquireAsync(r).toCompletableFuture().join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalArgumentException.class);
    }
    assertThat(two.acquire("api", "k", 0).items().get(0).windows().get(0).remaining()).isEqualTo(5);
    assertThat(two.acquire("other", "k", 0).items().get(0).windows().get(0).remaining()).isEqualTo(5);
  }

  @Test
  void acquireAsyncReportsValidationErrorsThroughTheStage() {
    assertThatCode(() -> limiter.acquireAsync(Request.of("no.such.rule", "k"))).doesNotThrowAnyException();
    assertThatThrownBy(() -> limiter.acquireAsync(Request.of("no.such.rule", "k")).toCompletableFuture().join())
        .hasCauseInstanceOf(IllegalArgumentException.class).hasMessageContaining("no.such.rule");
  }
}
