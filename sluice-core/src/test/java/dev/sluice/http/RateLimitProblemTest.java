package dev.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.BanPolicy;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.Request;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The problem bodies that explain denials, from decisions the limiter makes. */
class RateLimitProblemTest {
  private final FakeTicker ticker = new FakeTicker();

  private RateLimiter limiter(Rule... rules) {
    return Sluice.builder().rules(rules).ticker(ticker).build();
  }

  @Test
  void aDeniedWindowIsQuotaExceededNamingThePolicyAsTheHeadersDo() {
    try (RateLimiter l = limiter(Rule.builder("auth.createToken")
        .window(Window.of(20, Duration.ofMinutes(1))).window(Window.of(5, Duration.ofSeconds(3))).build())) {
      Decision d = null;
      for (int i = 0; i < 6; i++) {
        d = l.acquire("auth.createToken", "ip:10.0.0.1");
      }
      RateLimitProblem p = RateLimitProblem.of(d);
      assertThat(p.type()).isEqualTo(RateLimitProblem.QUOTA_EXCEEDED);
      assertThat(p.status()).isEqualTo(429);
      assertThat(p.violatedPolicies()).containsExactly("auth.createToken.3s");
      assertThat(p.detail()).isEqualTo("auth.createToken.3s: 5 per 3s exceeded").doesNotContain("10.0.0.1");
      // The same name the RateLimit-Policy field gives the window, without its quotes.
      assertThat(new RateLimitHeaders().of(d).policy()).contains("\"auth.createToken.3s\";q=5;w=3");
    }
  }

  @Test
  void aCostThatCanNeverFitSaysSo() {
    try (RateLimiter l = limiter(Rule.builder("upload").window(Window.of(10, Duration.ofSeconds(1))).build())) {
      RateLimitProblem p = RateLimitProblem.of(l.acquire("upload", "u", 11));
      assertThat(p.type()).isEqualTo(RateLimitProblem.QUOTA_EXCEEDED);
      assertThat(p.detail()).isEqualTo("upload.1s: 10 per 1s, the cost can never fit");
    }
  }

  @Test
  void aBanIsAbnormalUsageNamingItsRule() {
    try (RateLimiter l = limiter(Rule.builder("login").window(Window.of(100, Duration.ofSeconds(1)))
        .ban(new BanPolicy(2, Duration.ofMinutes(1), Duration.ofMinutes(15))).build())) {
      l.policies().ban("login", "ip:10.0.0.7", Instant.ofEpochMilli(ticker.nowMicros() / 1000 + 60_000))
          .toCompletableFuture().join();
      RateLimitProblem p = RateLimitProblem.of(l.acquire("login", "ip:10.0.0.7"));
      assertThat(p.type()).isEqualTo(RateLimitProblem.ABNORMAL_USAGE_DETECTED);
      assertThat(p.status()).isEqualTo(429);
      assertThat(p.violatedPolicies()).containsExactly("login");
      assertThat(p.detail()).isEqualTo("login: banned");
    }
  }

  @Test
  void shadowItemsAreNotViolatedPolicies() {
    try (RateLimiter l = limiter(Rule.builder("enforced").window(Window.of(1, Duration.ofSeconds(1))).build(),
        Rule.builder("watched").window(Window.of(1, Duration.ofSeconds(1))).shadow(true).build())) {
      Request r = Request.of(Item.of("enforced", "k", 1), Item.of("watched", "k", 1));
      l.acquire(r);
      Decision d = l.acquire(r);
      assertThat(d.allowed()).isFalse();
      assertThat(RateLimitProblem.of(d).violatedPolicies()).containsExactly("enforced.1s");
    }
  }

  @Test
  void theListOfPoliciesIsBoundedInCountAndBytes() {
    List<Rule> rules = new ArrayList<>();
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      String name = "r" + i + "-" + "x".repeat(100);
      rules.add(Rule.builder(name).window(Window.of(1, Duration.ofSeconds(1))).build());
      items.add(Item.of(name, "k", 2));
    }
    try (RateLimiter l = limiter(rules.toArray(Rule[]::new))) {
      RateLimitProblem p = RateLimitProblem.of(l.acquire(Request.of(items.toArray(Item[]::new))));
      assertThat(p.violatedPolicies()).hasSizeLessThanOrEqualTo(RateLimitProblem.MAX_POLICIES).isNotEmpty();
      assertThat(String.join("", p.violatedPolicies()).length()).isLessThanOrEqualTo(RateLimitProblem.MAX_POLICY_BYTES);
      assertThat(p.detail().length()).isLessThanOrEqualTo(RateLimitProblem.MAX_POLICY_BYTES + 5);
    }
  }

  @Test
  void anAllowedDecisionHasNoProblem() {
    try (RateLimiter l = limiter(Rule.builder("r").window(Window.of(1, Duration.ofSeconds(1))).build())) {
      Decision d = l.acquire("r", "k");
      assertThatThrownBy(() -> RateLimitProblem.of(d)).isInstanceOf(IllegalArgumentException.class);
    }
  }
}
