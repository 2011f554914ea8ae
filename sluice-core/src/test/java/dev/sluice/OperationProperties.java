package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.FakeTicker;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * An operation request decides exactly as the items it stands for, sent directly: on one limiter
 * by operation, on another (same rules, same clock) by the items an independent reading of the
 * operation gives, every decision is the same.
 */
class OperationProperties {
  /** Addresses and the /24 or /64 network each stands for. */
  private static final String[][] IPS = {
      {"10.0.0.1", "10.0.0.0/24"}, {"10.0.0.200", "10.0.0.0/24"}, {"::ffff:10.0.0.9", "10.0.0.0/24"},
      {"10.0.1.1", "10.0.1.0/24"}, {"2001:db8::1", "2001:db8::/64"}, {"2001:DB8:0:0:ffff::2", "2001:db8::/64"},
      {"2001:db8:0:1::1", "2001:db8:0:1::/64"}};

  private static final Operation OP = Operation.of("op",
      OperationItem.of("per_user", "user:{user}").when("user"),
      OperationItem.of("anonymous", "ip:{ip}").unless("user"),
      OperationItem.of("per_ip", "ip:{ip}").cost(2),
      OperationItem.of("per_client", "{client}@{ip}").when("client"),
      OperationItem.of("global", "all"));

  /** One step: who asks (absent attributes are null), at what cost, after how long. */
  record Step(String user, int ip, String client, long cost, long advanceMillis) {}

  private static Rule rule(String name, long limit, long periodSeconds, Algorithm a) {
    return Rule.builder(name).algorithm(a).windows(List.of(Window.perSeconds(limit, periodSeconds))).build();
  }

  private static RuleSet rules() {
    return RuleSet.of(
            rule("per_user", 3, 10, Algorithm.SLIDING_LOG),
            rule("anonymous", 2, 10, Algorithm.FIXED_WINDOW),
            rule("per_ip", 8, 20, Algorithm.TOKEN_BUCKET),
            rule("per_client", 4, 5, Algorithm.SLIDING_WINDOW),
            rule("global", 25, 30, Algorithm.SLIDING_LOG))
        .withOperations(List.of(OP), List.of(Attribute.ip("ip", 24, 64)));
  }

  /** The items of {@link #OP} for a step, read from its definition by hand. */
  private static List<Item> expected(Step s) {
    String ip = IPS[s.ip][1];
    List<Item> items = new ArrayList<>();
    if (s.user != null) {
      items.add(Item.of("per_user", "user:" + s.user, s.cost));
    } else {
      items.add(Item.of("anonymous", "ip:" + ip, s.cost));
    }
    items.add(Item.of("per_ip", "ip:" + ip, 2 * s.cost));
    if (s.client != null) {
      items.add(Item.of("per_client", s.client + "@" + ip, s.cost));
    }
    items.add(Item.of("global", "all", s.cost));
    return items;
  }

  @Property(tries = 200)
  void anOperationDecidesExactlyAsItsItemsSentDirectly(@ForAll("steps") List<Step> steps) {
    FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
    try (RateLimiter byOperation = Sluice.builder().rules(rules()).ticker(ticker).build();
        RateLimiter byItems = Sluice.builder().rules(rules()).ticker(ticker).build()) {
      for (Step s : steps) {
        ticker.advanceMillis(s.advanceMillis);
        OperationRequest op = Request.operation("op").attribute("user", s.user).attribute("ip", IPS[s.ip][0])
            .attribute("client", s.client).cost(s.cost).build();
        Decision a = byOperation.acquire(op);
        Decision b = byItems.acquire(Request.of(expected(s)));
        assertThat(a).isEqualTo(b);
      }
    }
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<String> user = Arbitraries.of("1", "2", "3").injectNull(0.4);
    Arbitrary<Integer> ip = Arbitraries.integers().between(0, IPS.length - 1);
    Arbitrary<String> client = Arbitraries.of("web", "cli").injectNull(0.5);
    Arbitrary<Long> cost = Arbitraries.longs().between(0, 2);
    Arbitrary<Long> advance = Arbitraries.longs().between(0, 3_000);
    return Combinators.combine(user, ip, client, cost, advance).as(Step::new).list().ofMinSize(1).ofMaxSize(60);
  }
}
