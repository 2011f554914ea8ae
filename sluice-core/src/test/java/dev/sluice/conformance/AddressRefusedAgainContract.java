package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.Ban;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An address refused again and again is banned, whichever limit refuses it: with the rules of
 * docs/policies.md's worked example, an anonymous script retrying from one address is refused by
 * {@code anonymous} (5 a minute) long before {@code per_ip} (30 a minute) would refuse it itself,
 * and {@code per_ip} still bans its network on the tenth denial. Through a limiter from
 * {@code Sluice.builder()}, on each store.
 */
public abstract class AddressRefusedAgainContract {
  static final Duration BAN = Duration.ofMinutes(15);

  /** A limiter from {@code Sluice.builder()} with {@code rules} on the store under test. */
  protected abstract RateLimiter limiter(RuleSet rules);

  protected static RuleSet rules() {
    try {
      return ConfigLoader.parse(WorkedExample.yaml(), "policies.md").rules();
    } catch (ConfigException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void sixtyAnonymousRequestsFromOneAddressEndInABanOfItsNetwork() throws Exception {
    try (RateLimiter limiter = limiter(rules())) {
      List<String> outcomes = new ArrayList<>();
      Decision last = null;
      for (int i = 0; i < 60; i++) {
        last = limiter.acquire(OperationRequest.of("auth.createToken", Map.of("ip", "198.51.100.9")));
        outcomes.add(outcome(last));
      }
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        // 5 admitted; denied by `anonymous` 10 times, the tenth starting the ban; then banned.
        expected.add(i < 5 ? "allowed" : i < 15 ? "anonymous:limit_exceeded" : "per_ip:banned");
      }
      assertThat(outcomes).isEqualTo(expected);
      ItemDecision ban = last.items().stream().filter(d -> d.rule().equals("per_ip")).findFirst().orElseThrow();
      assertThat(ban.key()).isEqualTo("ip:198.51.100.0/24");
      assertThat(ban.retryAfterMs()).isBetween(BAN.toMillis() - 60_000, BAN.toMillis());
      assertThat(last.retryAfterMs()).isEqualTo(ban.retryAfterMs());
      // Another network is not banned.
      assertThat(limiter.acquire(OperationRequest.of("auth.createToken", Map.of("ip", "192.0.2.1"))).allowed())
          .isTrue();
      // Recorded as an automatic ban, written just after the decision that learned it.
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      List<String> banned;
      do {
        banned = limiter.policies().bans("per_ip", null, 10).toCompletableFuture().join().items().stream()
            .map(Ban::key).toList();
      } while (banned.isEmpty() && System.nanoTime() < deadline && sleep());
      assertThat(banned).containsExactly("ip:198.51.100.0/24");
    }
  }

  private static boolean sleep() {
    try {
      Thread.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    return true;
  }

  /** "allowed", or the banned item's rule and reason, or else the first denied item's. */
  private static String outcome(Decision d) {
    if (d.allowed()) {
      return "allowed";
    }
    for (ItemDecision it : d.items()) {
      // The store that finds a ban in force still reports the request's other items as decided.
      if (it.reason() == DenyReason.BANNED && !it.shadow()) {
        return it.rule() + ":" + it.reason().wireName();
      }
    }
    for (ItemDecision it : d.items()) {
      if (!it.allowed() && !it.shadow()) {
        return it.rule() + ":" + it.reason().wireName();
      }
    }
    return "denied";
  }
}
