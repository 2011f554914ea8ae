package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.FakeTicker;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A request with repeated (rule, key) pairs decides as the request of its distinct pairs, each of
 * their summed cost, in the order first seen: on one limiter the requests as drawn, on another
 * (same rules, same clock) their pairs merged by hand. Requests of up to 20 items, so that both the
 * way a few items are compared and the way many are looked up are exercised.
 */
class RepeatedItemsProperties {
  private static final String[] RULES = {"a", "b", "c"};
  private static final String[] KEYS = {"k1", "k2", "k3"};

  record Step(List<Item> items, long advanceMillis) {}

  private static RuleSet rules() {
    return RuleSet.of(
        Rule.builder("a").windows(List.of(Window.perSeconds(6, 10))).build(),
        Rule.builder("b").algorithm(Algorithm.TOKEN_BUCKET).windows(List.of(Window.perSeconds(9, 5))).build(),
        Rule.builder("c").algorithm(Algorithm.FIXED_WINDOW).windows(List.of(Window.perSeconds(12, 20))).build());
  }

  /** The distinct pairs of {@code items} in the order first seen, each with its summed cost. */
  private static List<Item> merged(List<Item> items) {
    Map<String, Item> byPair = new LinkedHashMap<>();
    for (Item it : items) {
      byPair.merge(it.rule() + "/" + it.key(), it, (p, q) -> Item.of(p.rule(), p.key(), p.cost() + q.cost()));
    }
    return new ArrayList<>(byPair.values());
  }

  @Property(tries = 300)
  void aRequestDecidesAsItsDistinctItemsOfSummedCost(@ForAll("steps") List<Step> steps) {
    FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
    try (RateLimiter asDrawn = Sluice.builder().rules(rules()).ticker(ticker).build();
        RateLimiter byHand = Sluice.builder().rules(rules()).ticker(ticker).build()) {
      for (Step s : steps) {
        ticker.advanceMillis(s.advanceMillis);
        List<Item> distinct = merged(s.items);
        Decision a = asDrawn.acquire(Request.of(s.items));
        Decision b = byHand.acquire(Request.of(distinct));
        assertThat(a.allowed()).isEqualTo(b.allowed());
        assertThat(a.retryAfterMs()).isEqualTo(b.retryAfterMs());
        assertThat(a.items()).hasSize(s.items.size());
        for (int i = 0; i < s.items.size(); i++) {
          Item it = s.items.get(i);
          ItemDecision d = a.items().get(i);
          ItemDecision e = b.items().get(indexOf(distinct, it));
          // Each request item is reported at its own cost, with its pair's decision.
          assertThat(d.rule()).isEqualTo(it.rule());
          assertThat(d.key()).isEqualTo(it.key());
          assertThat(d.cost()).isEqualTo(it.cost());
          assertThat(d.windows()).isEqualTo(e.windows());
          assertThat(d.reason()).isEqualTo(e.reason());
        }
      }
    }
  }

  private static int indexOf(List<Item> distinct, Item it) {
    for (int j = 0; j < distinct.size(); j++) {
      if (distinct.get(j).rule().equals(it.rule()) && distinct.get(j).key().equals(it.key())) {
        return j;
      }
    }
    throw new AssertionError("no pair for " + it);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Item> item = Combinators.combine(Arbitraries.of(RULES), Arbitraries.of(KEYS),
        Arbitraries.longs().between(0, 3)).as(Item::of);
    Arbitrary<List<Item>> items = item.list().ofMinSize(1).ofMaxSize(20);
    return Combinators.combine(items, Arbitraries.longs().between(0, 4_000)).as(Step::new).list().ofMinSize(1)
        .ofMaxSize(30);
  }
}
