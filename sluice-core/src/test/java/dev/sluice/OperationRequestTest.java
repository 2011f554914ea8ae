package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class OperationRequestTest {
  private final FakeTicker ticker = new FakeTicker();

  private static Rule rule(String name, long limit) {
    return Rule.builder(name).windows(List.of(Window.perSeconds(limit, 60))).build();
  }

  private static final Operation TOKEN = Operation.of("auth.createToken",
      OperationItem.of("per_user", "user:{user}").when("user"),
      OperationItem.of("anonymous", "ip:{ip}").unless("user"),
      OperationItem.of("per_ip", "ip:{ip}"),
      OperationItem.of("global", "all"));

  private static RuleSet rules(Attribute... attributes) {
    return RuleSet.of(rule("per_user", 5), rule("anonymous", 1), rule("per_ip", 10), rule("global", 100))
        .withOperations(List.of(TOKEN), List.of(attributes));
  }

  private RateLimiter limiter(RuleSet rules) {
    return Sluice.builder().rules(rules).ticker(ticker).build();
  }

  private static List<String> items(Decision d) {
    return d.items().stream().map(i -> i.rule() + "=" + i.key()).toList();
  }

  private static OperationRequest token(String user, String ip) {
    return Request.operation("auth.createToken").attribute("user", user).attribute("ip", ip).build();
  }

  @Test
  void aKnownCallerIsLimitedPerUserAndAnAnonymousOneByTheAnonymousRule() {
    try (RateLimiter l = limiter(rules())) {
      assertThat(items(l.acquire(token("42", "10.0.0.1"))))
          .containsExactly("per_user=user:42", "per_ip=ip:10.0.0.1", "global=all");
      assertThat(items(l.acquire(token(null, "10.0.0.1"))))
          .containsExactly("anonymous=ip:10.0.0.1", "per_ip=ip:10.0.0.1", "global=all");
    }
  }

  @Test
  void anOperationIsOneTransactionAllOrNothing() {
    try (RateLimiter l = limiter(rules())) {
      assertThat(l.acquire(token(null, "10.0.0.1")).allowed()).isTrue();
      Decision second = l.acquire(token(null, "10.0.0.1"));
      assertThat(second.allowed()).isFalse();
      // The denial by 'anonymous' consumed nothing of per_ip or global.
      assertThat(l.acquire(Request.of(Item.of("per_ip", "ip:10.0.0.1", 0), Item.of("global", "all", 0))).items())
          .extracting(i -> i.windows().get(0).remaining()).containsExactly(9L, 99L);
    }
  }

  @Test
  void keyTemplatesTakeLiteralTextBraceEscapesAndRepeatedPlaceholders() {
    RuleSet rs = RuleSet.of(rule("r", 5)).withOperations(List.of(
        Operation.of("op", OperationItem.of("r", "{{x}}:{a}/{b}/{a}"))), List.of());
    try (RateLimiter l = limiter(rs)) {
      Decision d = l.acquire(Request.operation("op").attribute("a", "1").attribute("b", "two").build());
      assertThat(items(d)).containsExactly("r={x}:1/two/1");
    }
  }

  @Test
  void ipAttributesAreGroupedByPrefixInCanonicalText() {
    RuleSet rs = rules(Attribute.ip("ip", 24, 64));
    assertThat(rs.resolve(token(null, "10.0.0.77")).items().get(0).key()).isEqualTo("ip:10.0.0.0/24");
    assertThat(rs.resolve(token(null, "::ffff:10.0.0.77")).items().get(0).key()).isEqualTo("ip:10.0.0.0/24");
    assertThat(rs.resolve(token(null, "::FFFF:a00:4d")).items().get(0).key()).isEqualTo("ip:10.0.0.0/24");
    assertThat(rs.resolve(token(null, "2001:DB8:0:0:1:2:3:4")).items().get(0).key()).isEqualTo("ip:2001:db8::/64");
    assertThat(rs.resolve(token(null, "2001:db8:0:7:ffff::1")).items().get(0).key()).isEqualTo("ip:2001:db8:0:7::/64");
  }

  @Test
  void ipAttributesWithoutGroupingAreCanonicalAddresses() {
    RuleSet rs = rules(Attribute.ip("ip", 16, Attribute.NO_GROUPING));
    assertThat(rs.resolve(token(null, "2001:0DB8:0000:0000:0000:0000:0000:0001")).items().get(0).key())
        .isEqualTo("ip:2001:db8::1");
    assertThat(rs.resolve(token(null, "192.168.7.9")).items().get(0).key()).isEqualTo("ip:192.168.0.0/16");
    RuleSet plain = rules(Attribute.ip("ip"));
    assertThat(plain.resolve(token(null, "2001:DB8:0:0:1:2:3:4")).items().get(0).key()).isEqualTo("ip:2001:db8::1:2:3:4");
    assertThat(plain.resolve(token(null, "192.168.7.9")).items().get(0).key()).isEqualTo("ip:192.168.7.9");
    assertThat(plain.resolve(token(null, "::")).items().get(0).key()).isEqualTo("ip:::");
    assertThat(plain.resolve(token(null, "1:0:0:2:0:0:0:3")).items().get(0).key()).isEqualTo("ip:1:0:0:2::3");
  }

  @Test
  void anIpAttributeThatIsNotAnAddressLiteralIsRefusedNamingItAndConsumesNothing() {
    try (RateLimiter l = limiter(rules(Attribute.ip("ip", 24, 64)))) {
      for (String bad : List.of("10.1", "010.0.0.1", "0x0a.0.0.1", "256.0.0.1", "1.2.3.4.5", "fe80::1%eth0", "[::1]",
          "localhost", "example.com", "::1::", "1:2:3:4:5:6:7:8:9", "12345::", " 10.0.0.1", "1.2.3.4:80", ":1",
          "1:2:3:4:5:6:7:8::", "١٠.0.0.1")) {
        assertThatThrownBy(() -> l.acquire(token("42", bad)), bad)
            .isInstanceOfSatisfying(InvalidAttributeException.class, e -> {
              assertThat(e.attribute()).isEqualTo("ip");
              assertThat(e.getMessage()).startsWith("attribute 'ip' must be an IPv4 or IPv6 address");
            });
      }
      assertThat(l.acquire(Request.of("global", "all", 0)).items().get(0).windows().get(0).remaining()).isEqualTo(100);
    }
  }

  @Test
  void aMissingAttributeIsRefusedNamingTheOperationTheRuleAndTheAttribute() {
    try (RateLimiter l = limiter(rules())) {
      assertThatThrownBy(() -> l.acquire(token("42", null)))
          .isInstanceOfSatisfying(MissingAttributeException.class, e -> {
            assertThat(e.operation()).isEqualTo("auth.createToken");
            assertThat(e.rule()).isEqualTo("per_ip");
            assertThat(e.attribute()).isEqualTo("ip");
            assertThat(e.getMessage())
                .isEqualTo("operation 'auth.createToken' needs attribute 'ip' (for the key of rule 'per_ip')");
          });
      // per_user came before per_ip, and was not consumed.
      assertThat(l.acquire(Request.of("per_user", "user:42", 0)).items().get(0).windows().get(0).remaining())
          .isEqualTo(5);
    }
  }

  @Test
  void aRequestThatLeavesOutEveryItemIsRefusedNotAdmittedUnlimited() {
    // 17 condition attributes: beyond what the definition's check tries, so the request is judged.
    java.util.List<OperationItem> items = new java.util.ArrayList<>();
    for (int i = 0; i < 17; i++) {
      items.add(OperationItem.of("global", "a" + i + ":{a" + i + "}").when("a" + i));
    }
    RuleSet rs = RuleSet.of(rule("global", 100)).withOperations(List.of(new Operation("wide", items)), List.of());
    try (RateLimiter l = limiter(rs)) {
      assertThatThrownBy(() -> l.acquire(Request.operation("wide").attribute("other", "x").build()))
          .isInstanceOfSatisfying(MissingAttributeException.class, e -> {
            assertThat(e.rule()).isNull();
            assertThat(e.attribute()).isEqualTo("a0");
          })
          .hasMessage("operation 'wide' has no item that applies to the attributes given");
      assertThat(items(l.acquire(Request.operation("wide").attribute("a3", "x").build()))).containsExactly("global=a3:x");
    }
  }

  @Test
  void anUnknownOperationIsRefusedByName() {
    try (RateLimiter l = limiter(rules())) {
      assertThatThrownBy(() -> l.acquire(Request.operation("nope").build()))
          .isInstanceOfSatisfying(UnknownOperationException.class, e -> assertThat(e.operation()).isEqualTo("nope"))
          .hasMessage("unknown operation 'nope'");
      assertThatThrownBy(() -> l.acquireAsync(Request.operation("nope").build()).toCompletableFuture().join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(UnknownOperationException.class);
    }
  }

  @Test
  void attributesAreBoundedInCountNameAndValue() {
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < OperationRequest.MAX_ATTRIBUTES + 1; i++) {
      many.put("a" + i, "v");
    }
    assertThatThrownBy(() -> OperationRequest.of("op", many)).isInstanceOf(InvalidAttributeException.class)
        .hasMessage("a request may carry at most 32 attributes, had 33");
    assertThatThrownBy(() -> Request.operation("op").attribute("bad name", "v").build())
        .isInstanceOf(InvalidAttributeException.class)
        .hasMessage("attribute 'bad name' is not a valid name: 1-64 letters, digits and _ . -");
    assertThatThrownBy(() -> Request.operation("op").attribute("user", "").build())
        .isInstanceOfSatisfying(InvalidAttributeException.class, e -> assertThat(e.attribute()).isEqualTo("user"));
    assertThatThrownBy(() -> Request.operation("op").attribute("user", "x".repeat(513)).build())
        .isInstanceOf(InvalidAttributeException.class)
        .hasMessage("attribute 'user' is 513 characters long; the maximum is 512");
  }

  @Test
  void theBuilderKeepsAttributesInTheOrderFirstSetAndANullValueRemovesOne() {
    OperationRequest.Builder b = Request.operation("op");
    for (int i = 0; i < 10; i++) {
      b.attribute("a" + i, "v" + i); // past the builder's first capacity
    }
    b.attribute("a3", "changed").attribute("a0", null).attribute("a7", null).attribute("never", null);
    Map<String, String> expected = new java.util.LinkedHashMap<>();
    for (int i = 1; i < 10; i++) {
      if (i != 7) {
        expected.put("a" + i, i == 3 ? "changed" : "v" + i);
      }
    }
    OperationRequest r = b.build();
    assertThat(r.attributes()).isEqualTo(expected).hasSameHashCodeAs(expected);
    assertThat(r.attributes().keySet()).containsExactlyElementsOf(expected.keySet());
    assertThat(r.attributes().get("a3")).isEqualTo("changed");
    assertThat(r.attributes().get("a0")).isNull();
    assertThat(r.attributes().containsKey("a7")).isFalse();
    // The builder goes on independently of what it built.
    b.attribute("a1", "later");
    assertThat(r.attributes().get("a1")).isEqualTo("v1");
    assertThat(Request.operation("op").build().attributes()).isEmpty();
  }

  @Test
  void attributesAreAnImmutableCopyOfTheMapGiven() {
    Map<String, String> given = new HashMap<>(Map.of("user", "42", "ip", "10.0.0.1"));
    OperationRequest r = OperationRequest.of("op", given);
    given.put("user", "43");
    assertThat(r.attributes()).isEqualTo(Map.of("user", "42", "ip", "10.0.0.1"));
    assertThat(r).isEqualTo(OperationRequest.of("op", Map.of("ip", "10.0.0.1", "user", "42")));
    assertThatThrownBy(() -> r.attributes().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> r.attributes().remove("user")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> r.attributes().entrySet().iterator().next().setValue("y"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void aKeyMadeTooLongByItsAttributesIsRefusedAsAnInvalidKey() {
    try (RateLimiter l = Sluice.builder().rules(rules()).ticker(ticker).maxKeyBytes(16).build()) {
      assertThatThrownBy(() -> l.acquire(token("x".repeat(20), "10.0.0.1")))
          .isInstanceOfSatisfying(InvalidKeyException.class, e -> assertThat(e.rule()).isEqualTo("per_user"));
    }
  }

  @Test
  void theRequestCostMultipliesEveryItemsCost() {
    RuleSet rs = RuleSet.of(rule("r", 100), rule("s", 100)).withOperations(List.of(Operation.of("op",
        OperationItem.of("r", "a").cost(3), OperationItem.of("s", "b"))), List.of());
    Request r = rs.resolve(Request.operation("op").cost(2).build());
    assertThat(r.items()).containsExactly(Item.of("r", "a", 6), Item.of("s", "b", 2));
    assertThatThrownBy(() -> rs.resolve(Request.operation("op").cost(Long.MAX_VALUE / 2).build()))
        .isInstanceOf(InvalidCostException.class);
    assertThatThrownBy(() -> Request.operation("op").cost(-1).build()).isInstanceOf(InvalidCostException.class);
  }

  @Test
  void tryAcquireAndTheAsyncAcquireTakeOperations() {
    try (RateLimiter l = limiter(rules())) {
      assertThat(l.tryAcquire(token(null, "10.0.0.1"))).isTrue();
      assertThat(l.tryAcquire(token(null, "10.0.0.1"))).isFalse();
      Decision d = l.acquireAsync(token("7", "10.0.0.2")).toCompletableFuture().join();
      assertThat(items(d)).containsExactly("per_user=user:7", "per_ip=ip:10.0.0.2", "global=all");
    }
  }

  @Test
  void tryAcquireRefusesAnOperationWithALeakyBucketItem() {
    Rule shaping = Rule.builder("shaping").algorithm(Algorithm.LEAKY_BUCKET).windows(List.of(Window.perSeconds(5, 1)))
        .build();
    RuleSet rs = RuleSet.of(shaping).withOperations(List.of(Operation.of("op", OperationItem.of("shaping", "k"))),
        List.of());
    try (RateLimiter l = limiter(rs)) {
      assertThatThrownBy(() -> l.tryAcquire(Request.operation("op").build()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaky_bucket");
    }
  }

  @Test
  void updateRulesReplacesRulesAndOperationsTogether() {
    try (RateLimiter l = limiter(rules())) {
      l.acquire(token("42", "10.0.0.1"));
      RuleSet next = RuleSet.of(rule("per_user", 5), rule("global", 100)).withOperations(List.of(
          Operation.of("other", OperationItem.of("global", "all"))), List.of());
      l.updateRules(next);
      assertThat(l.rules().operations()).extracting(Operation::name).containsExactly("other");
      assertThatThrownBy(() -> l.acquire(token("42", "10.0.0.1"))).isInstanceOf(UnknownOperationException.class);
      // The unchanged rule kept its state.
      assertThat(l.acquire(Request.operation("other").build()).items().get(0).windows().get(0).remaining())
          .isEqualTo(98);
    }
  }

  @Test
  void anOperationMustNotNameARuleOutsideItsSet() {
    assertThatThrownBy(() -> RuleSet.of(rule("r", 1)).withOperations(List.of(
        Operation.of("op", OperationItem.of("q", "k"))), List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("operation 'op' names rule 'q', which is not in the set");
  }

  @Test
  void acquireBlockingWaitsForAnOperationAsForItsItems() throws Exception {
    try (RateLimiter l = Sluice.builder().rules(rules()).ticker(ticker).sleeper(ticker).build()) {
      l.acquire(token(null, "10.0.0.1"));
      Decision d = l.acquireBlocking(token(null, "10.0.0.1"), Duration.ofMinutes(2));
      assertThat(d.allowed()).isTrue();
      assertThat(ticker.nowMicros()).isGreaterThanOrEqualTo(60_000_000L);
    }
  }
}
