package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

/**
 * The one-pass reader of acquire bodies accepts exactly what the tree reader accepts, with the
 * same items, and every body it does not take gets the tree reader's error: random bodies close
 * to the plain shape (fields repeated, missing, of the wrong type, in any order; costs at the
 * edges of a long; lists at the item limit; trailing garbage; truncation) decide the same way.
 */
class RequestJsonProperties {
  private final RequestJson json = new RequestJson();

  @Property(tries = 3000, edgeCases = EdgeCasesMode.NONE)
  void theOnePassReaderAgreesWithTheTreeReader(@ForAll("bodies") String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    String tree = outcome(() -> json.acquireTree(b));
    assertThat(outcome(() -> json.acquire(b))).as(body).isEqualTo(tree);
    Statistics.collect(tree.startsWith("ok") ? "accepted" : tree.split(" ")[2]);
  }

  @Example
  void plainBodiesAreAccepted() throws Exception {
    byte[] one = "{\"key\":\"k\",\"cost\":0,\"rule\":\"api.call\"}".getBytes(StandardCharsets.UTF_8);
    assertThat(json.acquire(one).request().items()).singleElement()
        .satisfies(it -> assertThat(it.key() + "/" + it.cost()).isEqualTo("k/0"));
    byte[] two = " {\"items\":[{\"rule\":\"api.call\",\"key\":\"a\"},{\"rule\":\"api.call\",\"key\":\"b\",\"cost\":3}]} "
        .getBytes(StandardCharsets.UTF_8);
    assertThat(json.acquire(two).request().items()).extracting(it -> it.key() + "/" + it.cost())
        .containsExactly("a/1", "b/3");
  }

  private interface Read {
    Object read() throws ApiException;
  }

  private static String outcome(Read r) {
    try {
      return "ok " + r.read();
    } catch (ApiException e) {
      return "error " + e.status + " " + e.code + " " + e.getMessage();
    }
  }

  @Provide
  Arbitrary<String> bodies() {
    Arbitrary<String> listed = Combinators.combine(
            Arbitraries.oneOf(Arbitraries.of(0, 100, 101).flatMap(n -> plainItem().list().ofSize(n)),
                item().list().ofMinSize(1).ofMaxSize(4)),
            Arbitraries.of("", "", "", ",\"rule\":\"api.call\"", ",\"items\":[]"),
            Arbitraries.of("", "", "", "{\"rule\":\"api.call\",\"key\":\"x\"},"))
        .as((items, extra, prefix) -> "{\"items\":[" + prefix + String.join(",", items) + "]" + extra + "}");
    Arbitrary<String> other = Arbitraries.of("", " ", "[]", "[1]", "\"s\"", "7", "null", "{}", "{\"items\":{}}",
        "{\"items\":[1]}", "{\"items\":null}", "{\"items\":[[]]}");
    Arbitrary<String> body = Arbitraries.frequencyOf(Tuple.of(5, item()), Tuple.of(4, listed), Tuple.of(1, other));
    Arbitrary<String> tail = Arbitraries.frequency(Tuple.of(12, ""), Tuple.of(2, " \n"), Tuple.of(1, " x"),
        Tuple.of(1, "{}"), Tuple.of(1, "]"), Tuple.of(1, "}"));
    return Combinators.combine(body, tail, Arbitraries.integers().between(0, 20))
        .as((b, t, cut) -> cut == 0 && !b.isEmpty() ? b.substring(0, b.length() / 2) : b + t);
  }

  /** Fields that make a plain item, in any order, sometimes with one more of any kind. */
  private static Arbitrary<String> item() {
    Arbitrary<String> extra = Arbitraries.of(
        "\"rule\":\"api.call\"", "\"rule\":\"nope\"", "\"rule\":7", "\"rule\":null", "\"rule\":[\"api.call\"]",
        "\"key\":\"k\"", "\"key\":\"\"", "\"key\":\"\\u00e9\\u20ac\"", "\"key\":[\"k\"]", "\"key\":null",
        "\"key\":\"" + "€".repeat(171) + "\"", "\"key\":\"" + "€".repeat(170) + "\"",
        "\"key\":\"" + "k".repeat(513) + "\"", "\"key\":\"\\ud800\"",
        "\"cost\":0", "\"cost\":-0", "\"cost\":3", "\"cost\":-1", "\"cost\":1.5", "\"cost\":1e2",
        "\"cost\":2.0", "\"cost\":9223372036854775807", "\"cost\":9223372036854775808",
        "\"cost\":-9223372036854775809", "\"cost\":\"1\"", "\"cost\":null", "\"cost\":true", "\"cost\":{}",
        "\"weight\":2", "\"items\":[]", "\"\":1");
    Arbitrary<List<String>> base = Combinators.combine(
            Arbitraries.frequency(Tuple.of(6, "\"rule\":\"api.call\""), Tuple.of(1, "\"rule\":\"nope\""),
                Tuple.of(1, "\"rule\":7"), Tuple.of(1, "")),
            Arbitraries.frequency(Tuple.of(6, "\"key\":\"k\""), Tuple.of(1, "\"key\":\"\""),
                Tuple.of(1, "\"key\":\"" + "€".repeat(171) + "\""), Tuple.of(1, "")),
            Arbitraries.of("", "", "\"cost\":0", "\"cost\":7", "\"cost\":9223372036854775807", "\"cost\":-1",
                "\"cost\":1.0"))
        .as((r, k, c) -> Stream.of(r, k, c).filter(f -> !f.isEmpty()).collect(Collectors.toList()));
    return Combinators.combine(base, extra.list().ofMaxSize(1), Arbitraries.integers().between(0, 3))
        .as((b, e, keep) -> {
          List<String> all = new ArrayList<>(b);
          if (keep == 0) {
            all.addAll(e);
          }
          return all;
        })
        .flatMap(Arbitraries::shuffle)
        .map(fs -> "{" + String.join(",", fs) + "}");
  }

  private static Arbitrary<String> plainItem() {
    return Arbitraries.strings().alpha().ofMaxLength(4)
        .map(k -> "{\"rule\":\"api.call\",\"key\":\"" + k + "\",\"cost\":" + k.length() + "}");
  }
}
