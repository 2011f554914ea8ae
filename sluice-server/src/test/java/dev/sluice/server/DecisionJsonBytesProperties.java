package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link DecisionJson} writes exactly the bytes of the hand-written writer it replaced, for any
 * decision: text with escapes, control characters, characters of two, three and four bytes,
 * U+2028/U+2029, any number. Lone surrogates are not generated: the limiter rejects such keys.
 */
class DecisionJsonBytesProperties {
  @Property(tries = 1000)
  void theWriterWritesTheSameBytesAsTheHandWrittenOneItReplaced(@ForAll("decisions") Decision d, @ForAll long t) {
    assertThat(DecisionJson.httpBody(d).toStringUtf8()).isEqualTo(ReferenceDecisionJson.httpBody(d).toStringUtf8());
    assertThat(DecisionJson.httpBody(d).array()).isEqualTo(ReferenceDecisionJson.httpBody(d).array());
    StringBuilder a = new StringBuilder("x");
    StringBuilder b = new StringBuilder("x");
    DecisionJson.appendReplayLine(a, t, d);
    ReferenceDecisionJson.appendReplayLine(b, t, d);
    assertThat(a.toString()).isEqualTo(b.toString());
    for (ItemDecision it : d.items()) {
      StringBuilder x = new StringBuilder();
      StringBuilder y = new StringBuilder();
      DecisionJson.string(x, it.key());
      ReferenceDecisionJson.string(y, it.key());
      assertThat(x.toString()).isEqualTo(y.toString());
    }
  }

  @Provide
  Arbitrary<Decision> decisions() {
    Arbitrary<WindowState> window = Combinators.combine(numbers(), numbers(), numbers(), numbers(), numbers(),
        Arbitraries.of(true, false)).as(WindowState::new);
    Arbitrary<ItemDecision> item = Combinators.combine(text(), text(), numbers(), Arbitraries.of(true, false),
        Arbitraries.of(DenyReason.class), window.list().ofMinSize(1).ofMaxSize(3), Arbitraries.of(true, false),
        numbers())
        .as((rule, key, cost, allowed, reason, ws, shadow, blocked) ->
            new ItemDecision(rule, key, Math.abs(cost % 1000), allowed, reason, 0, ws, shadow, blocked));
    Arbitrary<ItemDecision> leasedOrNot = Combinators.combine(item, Arbitraries.of(true, false)).as((i, leased) ->
        new ItemDecision(i.rule(), i.key(), i.cost(), i.allowed(), i.reason(), i.waitMs(), i.windows(), i.shadow(),
            i.blockedMs(), leased));
    return Combinators.combine(Arbitraries.of(true, false), numbers(), numbers(), leasedOrNot.list().ofMinSize(1).ofMaxSize(4),
        Arbitraries.of(true, false)).as(Decision::new);
  }

  Arbitrary<String> text() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(20),
        Arbitraries.strings().all().ofMaxLength(20),
        Arbitraries.strings().withCharRange('\u0000', '\u00ff').ofMaxLength(20),
        Arbitraries.strings().withChars("\"\\\n\r\t\b\f\u0000\u001f\u007f\u0080\u07ff\u0800\u2028\u2029\uffff"
            + "é€/😀").ofMaxLength(10),
        Arbitraries.of("😀", "a😀b", "\uD83D\uDE00\uD83D\uDE00", "名前", "\uDBFF\uDFFF", ""))
        .filter(s -> s.codePoints().noneMatch(cp -> cp >= 0xD800 && cp <= 0xDFFF));
  }

  Arbitrary<Long> numbers() {
    return Arbitraries.oneOf(Arbitraries.longs(),
        Arbitraries.of(0L, -1L, 9L, 10L, 99L, 100L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1,
            999_999_999_999_999_999L, 1_000_000_000_000_000_000L));
  }
}
