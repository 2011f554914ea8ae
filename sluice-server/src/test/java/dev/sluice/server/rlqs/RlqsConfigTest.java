package dev.sluice.server.rlqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigProblem;
import dev.sluice.server.config.ConfigFiles;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.testing.FakeTicker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code rlqs:} section of native files, as the service reads its configuration. */
class RlqsConfigTest {
  static final String RULES = """
      limits:
        - {name: api.global, mode: leased, algorithm: token_bucket, config: [{limit: 50000, period: 1s}]}
        - {name: tenant.requests, mode: leased, algorithm: token_bucket, config: [{limit: 20000, period: 1s}]}
        - {name: exact.one, config: [{limit: 10, period: 1s}]}
      """;
  static final String RLQS = """
      rlqs:
        - domain: edge
          buckets:
            - {when: {name: per_tenant}, rule: tenant.requests, key: "tenant:{tenant}"}
            - {when: {name: api}, rule: api.global, key: all}
          unmatched: deny
      """;

  @TempDir
  Path dir;

  static ServiceConfig load(String... files) throws ConfigException {
    Map<Path, String> texts = new LinkedHashMap<>();
    for (int i = 0; i < files.length; i++) {
      texts.put(Path.of("f" + i + ".yaml"), files[i]);
    }
    return ConfigFiles.load(texts);
  }

  static String problems(String... files) {
    try {
      load(files);
    } catch (ConfigException e) {
      return String.join("\n", e.problems().stream().map(ConfigProblem::toString).toList());
    }
    throw new AssertionError("expected the configuration to be refused");
  }

  @Test
  void theDocumentedExampleLoadsAndMapsBucketsToRulesAndKeys() throws ConfigException {
    ServiceConfig c = load(RULES + RLQS);
    RlqsDomain edge = c.rlqs().domain("edge");
    assertThat(edge.denyUnmatched()).isTrue();
    assertThat(edge.resolve(Map.of("name", "per_tenant", "tenant", "7")))
        .isEqualTo(new RlqsDomain.Target("tenant.requests", "tenant:7"));
    assertThat(edge.resolve(Map.of("name", "api", "x", "y"))).isEqualTo(new RlqsDomain.Target("api.global", "all"));
    // A template naming a value the bucket lacks does not map it: the next entry may, or none.
    assertThat(edge.resolve(Map.of("name", "per_tenant"))).isNull();
    assertThat(edge.resolve(Map.of("name", "other"))).isNull();
    // The rules of the file are all there, the section changes none of them.
    assertThat(c.rules().get("api.global")).isNotNull();
  }

  @Test
  void aFileOfTheSectionAloneMapsRulesOfOtherFiles() throws ConfigException {
    ServiceConfig c = load(RULES, RLQS);
    assertThat(c.rlqs().domains()).containsOnlyKeys("edge");
    assertThat(c.rlqs().domain("edge").buckets()).hasSize(2);
  }

  @Test
  void unmatchedDefaultsToAllow() throws ConfigException {
    ServiceConfig c = load(RULES, """
        rlqs:
          - domain: edge
            buckets: []
        """);
    assertThat(c.rlqs().domain("edge").denyUnmatched()).isFalse();
  }

  @Test
  void anUnknownRuleIsAnErrorAtItsName() {
    assertThat(problems(RULES, """
        rlqs:
          - domain: edge
            buckets:
              - {rule: nope, key: all}
        """)).isEqualTo("f1.yaml:4:16: rlqs domain 'edge' maps buckets to rule 'nope', which no file defines");
  }

  @Test
  void aRuleThatIsNotLeasedIsRefused() {
    assertThat(problems(RULES, """
        rlqs:
          - domain: edge
            buckets:
              - rule: exact.one
                key: all
        """)).startsWith("f1.yaml:4:15: rlqs domain 'edge' maps buckets to rule 'exact.one', which is not 'mode: leased'");
  }

  @Test
  void anUnclosedBraceIsAnErrorButAValueWhenDoesNotGuaranteeIsFine() throws ConfigException {
    assertThat(problems(RULES, """
        rlqs:
          - domain: edge
            buckets:
              - {when: {name: x}, rule: api.global, key: "tenant:{tenant"}
        """)).isEqualTo("f1.yaml:4:50: key template 'tenant:{tenant' has a '{' at position 8 that is never closed; "
        + "write '{{' for a literal brace");
    load(RULES, """
        rlqs:
          - domain: edge
            buckets:
              - {when: {name: x}, rule: api.global, key: "user:{user}"}
        """);
  }

  @Test
  void duplicateDomainsAreRefusedInOneFileAndAcrossFiles() {
    assertThat(problems(RULES, """
        rlqs:
          - {domain: edge, buckets: []}
          - {domain: edge, buckets: []}
        """)).isEqualTo("f1.yaml:3:14: duplicate rlqs domain 'edge' (first at f1.yaml:2:14)");
    assertThat(problems(RULES, RLQS, RLQS)).isEqualTo("f2.yaml:2:13: duplicate rlqs domain 'edge' (first at "
        + "f1.yaml:2:13)");
  }

  @Test
  void badFieldsAreErrorsNamingTheirPlace() {
    assertThat(problems(RULES, """
        rlqs:
          - domain: edge
            buckets: []
            unmatched: maybe
        """)).isEqualTo("f1.yaml:4:16: 'unmatched' must be allow or deny, found the string \"maybe\"");
    assertThat(problems(RULES, """
        rlqs:
          - domain: edge
            bucket: []
        """)).contains("f1.yaml:3:5: unknown field 'bucket' in an rlqs domain (expected one of: domain, buckets, "
        + "unmatched)");
    assertThat(problems(RULES, """
        rlqs:
          - buckets: []
        """)).isEqualTo("f1.yaml:2:5: an rlqs domain needs 'domain'");
    assertThat(problems(RULES, """
        rlqs: {domain: edge}
        """)).isEqualTo("f1.yaml:1:7: 'rlqs' must be a list of domains, found a mapping");
    assertThat(problems(RULES, """
        rlqs:
          - domain: edge
            buckets:
              - {when: {name: ~}, key: all}
        """)).contains("f1.yaml:4:23: the value of 'name' in 'when' must be a non-empty text")
        .contains("f1.yaml:4:9: a bucket mapping needs 'rule'");
  }

  @Test
  void theLibraryLoaderStillRefusesTheSectionItDoesNotRead() {
    assertThatThrownBy(() -> ConfigLoader.parse(RULES + RLQS, "lib.yaml")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("unknown field 'rlqs'");
  }

  @Test
  void aBadSectionNeverReplacesAGoodConfiguration() throws Exception {
    Path file = dir.resolve("sluice.yaml");
    Files.writeString(file, RULES + RLQS);
    FakeTicker ticker = new FakeTicker();
    try (RateLimiter limiter = Sluice.builder().ticker(ticker).build();
        ConfigReloader reloader = new ConfigReloader(file, limiter, (ok, c, e) -> { }, Clock.systemUTC())) {
      assertThat(reloader.current().rlqs().domain("edge")).isNotNull();
      Files.writeString(file, RULES + RLQS.replace("api.global, key: all", "nope, key: all"));
      Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() - 60_000));
      assertThat(reloader.check()).isFalse();
      assertThat(reloader.status().lastError()).contains("rule 'nope', which no file defines");
      assertThat(reloader.current().rlqs().domain("edge").buckets().get(1).rule()).isEqualTo("api.global");
      Files.writeString(file, RULES + RLQS.replace("domain: edge", "domain: edge2"));
      Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() - 30_000));
      assertThat(reloader.check()).isTrue();
      assertThat(reloader.current().rlqs().domains()).containsOnlyKeys("edge2");
    }
  }
}
