package dev.sluice.config.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Resolving descriptors against a domain, as the service and the Spring Boot starter both do. */
class EnvoyDomainTest {
  private static final String EDGE = """
      domain: edge
      descriptors:
        - key: remote_address
          rate_limit: {unit: minute, requests_per_unit: 5}
        - key: generic_key
          value: api
          descriptors:
            - key: user
              rate_limit: {name: per_user, unit: second, requests_per_unit: 2}
        - key: plan
          value: free*
          rate_limit: {name: free, unit: hour, requests_per_unit: 10, replaces: [{name: per_user}]}
        - key: banned
          rate_limit: {unit: day, requests_per_unit: 0}
      """;

  private static EnvoyDomain edge() throws Exception {
    return EnvoyConfigParser.parse("edge.yaml", EDGE);
  }

  private static List<EnvoyEntry> d(String... kv) {
    EnvoyEntry[] e = new EnvoyEntry[kv.length / 2];
    for (int i = 0; i < e.length; i++) {
      e[i] = new EnvoyEntry(kv[2 * i], kv[2 * i + 1]);
    }
    return List.of(e);
  }

  @Test
  void aDescriptorMatchesItsLimitAndIsCountedUnderItsEntries() throws Exception {
    EnvoyMatch m = edge().match(d("generic_key", "api", "user", "ada/x"));
    assertThat(m.limit().rule().name()).isEqualTo("envoy:edge/generic_key:api/user");
    assertThat(m.key()).isEqualTo("generic_key=api/user=ada%2Fx");
    // A limit applies only to a descriptor that ends at its depth.
    assertThat(edge().match(d("generic_key", "api"))).isNull();
    assertThat(edge().match(d("generic_key", "other", "user", "ada"))).isNull();
  }

  @Test
  void replacesDropsTheReplacedLimitAndAZeroLimitBlocksTheRequest() throws Exception {
    EnvoyResolution r = edge().resolve(List.of(d("generic_key", "api", "user", "ada"), d("plan", "free-1")));
    assertThat(r.matches().get(0)).isNull();
    assertThat(r.matches().get(1).limit().name()).isEqualTo("free");
    assertThat(r.blocked()).isFalse();

    EnvoyResolution b = edge().resolve(List.of(d("remote_address", "10.0.0.1"), d("banned", "x"), d("none", "y")));
    assertThat(b.blocked()).isTrue();
    assertThat(b.matches().get(0).limit().rule()).isNotNull();
    assertThat(b.matches().get(1).limit().blocked()).isTrue();
    assertThat(b.matches().get(2)).isNull();
  }

  @Test
  void mayMatchTellsWhetherDescriptorsOfTheseKeysCouldEverMeetALimit() throws Exception {
    EnvoyDomain e = edge();
    assertThat(e.mayMatch(List.of("remote_address"), Arrays.asList((String) null))).isTrue();
    assertThat(e.mayMatch(List.of("generic_key", "user"), Arrays.asList("api", null))).isTrue();
    assertThat(e.mayMatch(List.of("generic_key", "user"), Arrays.asList(null, null))).isTrue();
    assertThat(e.mayMatch(List.of("generic_key", "user"), Arrays.asList("web", null))).isFalse();
    assertThat(e.mayMatch(List.of("generic_key"), Arrays.asList("api"))).isFalse();
    assertThat(e.mayMatch(List.of("plan"), Arrays.asList("free-tier"))).isTrue();
    assertThat(e.mayMatch(List.of("plan"), Arrays.asList("paid"))).isFalse();
    assertThat(e.mayMatch(List.of("user"), Arrays.asList((String) null))).isFalse();
    assertThatThrownBy(() -> e.mayMatch(List.of("a"), List.of())).isInstanceOf(IllegalArgumentException.class);
    assertThat(e.limitedDescriptors()).containsExactly("banned", "generic_key:api/user", "plan:free*",
        "remote_address");
  }

  @Test
  void partsDoNotOverlapTheSuffix() {
    // "ab*b": "ab" then "b" after it; "ab" alone holds the prefix but not a separate suffix.
    assertThat(EnvoyDescriptors.matches("ab*b".split("\\*", -1), "ab")).isFalse();
    assertThat(EnvoyDescriptors.matches("ab*b".split("\\*", -1), "abb")).isTrue();
    assertThat(EnvoyDescriptors.matches("a*b*c".split("\\*", -1), "abc")).isTrue();
    assertThat(EnvoyDescriptors.matches("a*bc*c".split("\\*", -1), "abc")).isFalse();
    assertThat(EnvoyDescriptors.matches("*".split("\\*", -1), "")).isTrue();
  }

  @Test
  void theMetadataIsPlainValues() throws Exception {
    EnvoyDomain m = EnvoyConfigParser.parse("m.yaml", """
        domain: m
        descriptors:
          - key: k
            rate_limit: {unit: second, requests_per_unit: 1}
            metadata: {a: 1, b: [x, true], c: null, d: {e: f}}
        """);
    assertThat(m.match(d("k", "v")).limit().metadata()).containsEntry("a", 1.0)
        .containsEntry("b", List.of("x", true)).containsEntry("c", null).containsEntry("d", java.util.Map.of("e", "f"));
  }
}
