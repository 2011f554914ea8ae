package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The HTTP body, written straight into UTF-8 bytes, reads back as the decision it was written
 * from, and as the replay line reads it: any text in rules and keys (escapes, characters of two,
 * three and four bytes), any number.
 */
class DecisionJsonProperties {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Property(tries = 500)
  void theHttpBodyReadsBackAsTheDecision(@ForAll("text") String rule, @ForAll("text") String key,
      @ForAll("numbers") long a, @ForAll("numbers") long b, @ForAll("numbers") long c) throws Exception {
    ItemDecision it = new ItemDecision(rule, key, Math.abs(a % 1000), false, DenyReason.COST_EXCEEDS_LIMIT, 0,
        List.of(new WindowState(a, b, c, a, b, true), new WindowState(c, a, b, WindowState.NEVER, c, false)), false);
    Decision d = new Decision(false, c, b, List.of(it, it), true);
    JsonNode http = JSON.readTree(DecisionJson.httpBody(d).array());
    StringBuilder line = new StringBuilder();
    DecisionJson.appendReplayLine(line, 7, d);
    JsonNode replay = JSON.readTree(line.toString());

    assertThat(http.get("retryAfterMs").asLong()).isEqualTo(c);
    assertThat(http.get("waitMs").asLong()).isEqualTo(b);
    assertThat(http.get("degraded").asBoolean()).isTrue();
    JsonNode item = http.get("items").get(1);
    assertThat(item.get("rule").asText()).isEqualTo(rule);
    assertThat(item.get("key").asText()).isEqualTo(key);
    assertThat(item.get("reason").asText()).isEqualTo("cost_exceeds_limit");
    JsonNode w = item.get("windows");
    assertThat(List.of(w.get(0).get("limit").asLong(), w.get(0).get("periodMs").asLong(),
        w.get(0).get("remaining").asLong(), w.get(1).get("retryAfterMs").asLong(), w.get(1).get("resetAfterMs").asLong()))
        .containsExactly(a, b, c, WindowState.NEVER, c);
    assertThat(w.get(0).get("exceeded").asBoolean()).isTrue();
    assertThat(w.get(1).get("exceeded").asBoolean()).isFalse();
    assertThat(replay.get("items")).isEqualTo(withoutServiceFields(http.get("items")));
  }

  private static JsonNode withoutServiceFields(JsonNode items) {
    JsonNode copy = items.deepCopy();
    for (JsonNode i : copy) {
      ((com.fasterxml.jackson.databind.node.ObjectNode) i).remove(List.of("reason", "shadow"));
    }
    return copy;
  }

  @Provide
  Arbitrary<String> text() {
    // Valid Unicode only: lone surrogates never reach a decision (the limiter rejects such keys).
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(20),
        Arbitraries.strings().withChars("\"\\\n\r\t\u0000\u001f\u007f\u2028\u2029é€/").ofMaxLength(10),
        Arbitraries.of("😀", "a😀b", "\uD83D\uDE00\uD83D\uDE00", "名前", "")
    ).filter(s -> s.codePoints().noneMatch(cp -> cp >= 0xD800 && cp <= 0xDFFF));
  }

  @Provide
  Arbitrary<Long> numbers() {
    return Arbitraries.oneOf(Arbitraries.longs(),
        Arbitraries.of(0L, -1L, 9L, 10L, 99L, 100L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1,
            999_999_999_999_999_999L, 1_000_000_000_000_000_000L));
  }
}
