package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class DecisionJsonTest {
  static final ObjectMapper JSON = new ObjectMapper();

  /** A decision denied by one rule, with a shadow rule that would have denied too. */
  private static Decision deniedWithAShadowItem(String key) {
    try (RateLimiter limiter = Sluice.builder().ticker(new FakeTicker()).rules(
        Rule.builder("enforced").window(1, Duration.ofSeconds(10)).build(),
        Rule.builder("watched").window(1, Duration.ofSeconds(10)).shadow(true).build()).build()) {
      Request r = new Request(List.of(new Item("enforced", key, 1), new Item("watched", key, 1)), 0);
      limiter.acquire(r);
      return limiter.acquire(r);
    }
  }

  @Test
  void theHttpBodyIsTheReplayLineWithoutTPlusReasonAndShadow() throws Exception {
    Decision d = deniedWithAShadowItem("ip:1");
    StringBuilder line = new StringBuilder();
    DecisionJson.appendReplayLine(line, 1234, d);
    ObjectNode replay = (ObjectNode) JSON.readTree(line.toString());
    ObjectNode http = (ObjectNode) JSON.readTree(DecisionJson.httpBody(d).array());

    assertThat(replay.remove("t").asLong()).isEqualTo(1234);
    assertThat(http.get("items")).extracting(i -> i.get("reason").asText())
        .containsExactly("limit_exceeded", "limit_exceeded");
    assertThat(http.get("items").get(1).get("shadow").asBoolean()).isTrue();
    assertThat(http.get("items").get(0).has("shadow")).isFalse();
    for (JsonNode item : http.get("items")) {
      ((ObjectNode) item).remove(List.of("reason", "shadow"));
    }
    assertThat(replay).isEqualTo(http);
    assertThat(replay.get("allowed").asBoolean()).isFalse();
  }

  @Test
  void aBannedItemSaysBannedWithTheTimeLeftAndADenyListedOneSaysNeverWhileOthersLeaveBlockedMsOut()
      throws Exception {
    WindowState w = new WindowState(10, 60_000, 9, 0, 6_000, false);
    Decision d = Decision.of(List.of(
        new ItemDecision("login", "ip:1", 1, false, DenyReason.BANNED, 0, List.of(), false, 42_000),
        new ItemDecision("per_ip", "ip:2", 1, false, DenyReason.DENY_LISTED, 0, List.of(), false, WindowState.NEVER),
        new ItemDecision("global", "all", 1, true, DenyReason.NONE, 0, List.of(w), false)), false);
    JsonNode http = JSON.readTree(DecisionJson.httpBody(d).array());
    assertThat(http.get("retryAfterMs").asLong()).isEqualTo(WindowState.NEVER);
    JsonNode banned = http.get("items").get(0);
    assertThat(banned.get("reason").asText()).isEqualTo("banned");
    assertThat(banned.get("blockedMs").asLong()).isEqualTo(42_000);
    assertThat(banned.get("windows")).isEmpty();
    JsonNode listed = http.get("items").get(1);
    assertThat(listed.get("reason").asText()).isEqualTo("deny_listed");
    assertThat(listed.get("blockedMs").asLong()).isEqualTo(-1);
    assertThat(http.get("items").get(2).has("blockedMs")).isFalse();

    StringBuilder line = new StringBuilder();
    DecisionJson.appendReplayLine(line, 0, d);
    assertThat(line.toString()).doesNotContain("blockedMs");
    assertThat(DecisionJson.httpBody(d).toStringUtf8())
        .isEqualTo(ReferenceDecisionJson.httpBody(d).toStringUtf8());
  }

  @Test
  void anItemAnsweredFromALeaseSaysLeasedInTheHttpBodyAndNoOtherItemDoes() throws Exception {
    WindowState w = new WindowState(1000, 1_000, 998, 0, 1_000, false);
    Decision d = Decision.of(List.of(
        new ItemDecision("api", "all", 1, true, DenyReason.NONE, 0, List.of(w), false, 0, true),
        new ItemDecision("per_user", "user:1", 1, true, DenyReason.NONE, 0, List.of(w), false)), false);
    JsonNode http = JSON.readTree(DecisionJson.httpBody(d).array());
    assertThat(http.get("items").get(0).get("leased").asBoolean()).isTrue();
    assertThat(http.get("items").get(1).has("leased")).isFalse();
    assertThat(DecisionJson.httpBody(d).toStringUtf8()).contains("\"cost\":1,\"leased\":true,\"windows\"")
        .isEqualTo(ReferenceDecisionJson.httpBody(d).toStringUtf8());
    StringBuilder line = new StringBuilder();
    DecisionJson.appendReplayLine(line, 0, d);
    assertThat(line.toString()).doesNotContain("leased");
  }

  @Test
  void keysAreEscapedSoThatTheyReadBackExactly() throws Exception {
    String key = "a\"b\\c\nd\te\u0001f\u2028g é";
    Decision d = deniedWithAShadowItem(key);
    StringBuilder line = new StringBuilder();
    DecisionJson.appendReplayLine(line, 0, d);
    assertThat(line.toString()).doesNotContain("\n").doesNotContain("\u2028");
    assertThat(JSON.readTree(line.toString()).get("items").get(0).get("key").asText()).isEqualTo(key);
    String body = DecisionJson.httpBody(d).toStringUtf8();
    assertThat(JSON.readTree(body).get("items").get(1).get("key").asText()).isEqualTo(key);
  }
}
