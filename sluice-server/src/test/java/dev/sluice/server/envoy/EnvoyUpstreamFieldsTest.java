package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static dev.sluice.server.envoy.EnvoyUpstreamWildcardTest.UPSTREAM_CONFIG;
import static dev.sluice.server.envoy.EnvoyUpstreamWildcardTest.limitOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.sluice.config.ConfigException;
import dev.sluice.config.envoy.EnvoyConfigParser;
import dev.sluice.server.cli.Cli;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * envoyproxy/ratelimit's fields added since late 2025 — {@code share_threshold},
 * {@code quota_mode}, {@code metadata}, {@code value_to_metric}, {@code detailed_metric} — on its
 * own test files where they exist, with the meaning its config and service tests give them.
 */
class EnvoyUpstreamFieldsTest {
  private static final String QUOTAS = """
      domain: quota-domain
      descriptors:
        - key: regular
          rate_limit: {unit: minute, requests_per_unit: 5}
        - key: quota1
          quota_mode: true
          rate_limit: {unit: minute, requests_per_unit: 3}
        - key: quota2
          quota_mode: true
          rate_limit: {unit: minute, requests_per_unit: 5}
        - key: quietquota
          quota_mode: true
          shadow_mode: true
          rate_limit: {unit: minute, requests_per_unit: 1}
      """;

  @TempDir
  Path dir;

  @Test
  void shareThresholdValuesOfAWildcardShareOneCounter() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("share_threshold.yaml"))) {
      String dom = "test-domain";
      for (int i = 0; i < 100; i++) {
        String file = i % 2 == 0 ? "files/a.pdf" : "files/c" + i + ".txt";
        assertThat(h.call(dom, d("files", file)).getOverallCode()).as("call %d", i).isEqualTo(Code.OK);
      }
      RateLimitResponse over = h.call(dom, d("files", "files/b.csv"));
      assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(over.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(100);
      // An explicit value keeps its own limit and counter; the wildcard's values share theirs.
      assertThat(limitOf(h, dom, d("file", "test1"))).isEqualTo(50);
      assertThat(h.call(dom, d("file", "test2")).getStatuses(0).getLimitRemaining()).isEqualTo(99);
      assertThat(h.call(dom, d("file", "test23")).getStatuses(0).getLimitRemaining()).isEqualTo(98);
      assertThat(h.call(dom, d("file", "test1")).getStatuses(0).getLimitRemaining()).isEqualTo(48);
      // Nested middle wildcards, both shared: any tenant and resource they match, one counter.
      assertThat(h.call(dom, d("tenant", "t1prod", "resource", "resAv2")).getStatuses(0).getLimitRemaining())
          .isEqualTo(59);
      assertThat(h.call(dom, d("tenant", "t99prod", "resource", "resBBBv2")).getStatuses(0).getLimitRemaining())
          .isEqualTo(58);
      // The parent shared, the child wildcard not: a counter per child value.
      assertThat(h.call(dom, d("path", "path/foo", "file", "file/doc1", "type", "pdf")).getStatuses(0)
          .getLimitRemaining()).isEqualTo(119);
      assertThat(h.call(dom, d("path", "path/bar", "file", "file/doc2", "type", "pdf")).getStatuses(0)
          .getLimitRemaining()).isEqualTo(119);
      assertThat(h.call(dom, d("path", "path/bar", "file", "file/doc1", "type", "pdf")).getStatuses(0)
          .getLimitRemaining()).isEqualTo(118);
      assertThat(limitOf(h, dom, d("multiroute", "svcABCrpc"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("midpath", "/api/v2"))).isEqualTo(-1);
    }
  }

  @Test
  void shareThresholdNeedsAWildcard() {
    assertThatThrownBy(() -> EnvoyConfigParser.parse("s.yaml", """
        domain: d
        descriptors:
          - key: files
            value: exact
            share_threshold: true
            rate_limit: {unit: minute, requests_per_unit: 1}
        """)).isInstanceOf(ConfigException.class).hasMessage("s.yaml:5:22: share_threshold can only be used "
        + "with wildcard values (containing '*'), but found key 'files_exact'");
  }

  @Test
  void quotaModeLimitsDenyOnlyWhenAllOfTheRequestsAreOver() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml(QUOTAS)) {
      h.callTimes(3, "quota-domain", d("quota1", "x"));
      // One quota over, another not: OK, the status still says which one is over.
      RateLimitResponse some = h.call("quota-domain", d("quota1", "x"), d("quota2", "x"));
      assertThat(some.getOverallCode()).isEqualTo(Code.OK);
      assertThat(some.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(some.getStatuses(0).getLimitRemaining()).isZero();
      assertThat(some.getStatuses(1).getCode()).isEqualTo(Code.OK);
      // Every quota limit of the request over: OVER_LIMIT, beside a regular limit that is fine.
      RateLimitResponse all = h.call("quota-domain", d("regular", "r"), d("quota1", "x"));
      assertThat(all.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(all.getStatuses(0).getCode()).isEqualTo(Code.OK);
      assertThat(all.getStatuses(1).getCode()).isEqualTo(Code.OVER_LIMIT);
      // A quota in shadow mode is never over.
      RateLimitResponse quiet = h.callTimes(3, "quota-domain", d("quietquota", "q"));
      assertThat(quiet.getOverallCode()).isEqualTo(Code.OK);
      assertThat(quiet.getStatuses(0).getCode()).isEqualTo(Code.OK);
      // A regular limit over denies whatever the quotas say.
      h.callTimes(5, "quota-domain", d("regular", "s"));
      RateLimitResponse regular = h.call("quota-domain", d("regular", "s"), d("quota2", "y"));
      assertThat(regular.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(regular.getStatuses(1).getCode()).isEqualTo(Code.OK);
    }
  }

  @Test
  void metadataOfThePassedLimitsIsInTheDynamicMetadataWhenAsked() throws Exception {
    Path file = UPSTREAM_CONFIG.resolve("metadata.yaml");
    try (EnvoyHarness h = EnvoyHarness.load(file)) {
      assertThat(h.call("test-domain", d("key2", "a")).hasDynamicMetadata()).isFalse();
    }
    try (EnvoyHarness h = EnvoyHarness.load(file, EnvoyOptions.DEFAULT.withDynamicMetadata(true))) {
      RateLimitResponse r = h.call("test-domain", d("key1", "value1", "subkey1", "x"), d("key2", "a"));
      Struct m = r.getDynamicMetadata();
      assertThat(m.getFieldsOrThrow("domain").getStringValue()).isEqualTo("test-domain");
      assertThat(m.getFieldsOrThrow("descriptors").getListValue().getValues(0).getStructValue()
          .getFieldsOrThrow("entries").getListValue().getValuesList()).extracting(Value::getStringValue)
          .containsExactly("key1=value1", "subkey1=x");
      Struct passed = m.getFieldsOrThrow("metadata").getStructValue();
      assertThat(passed.getFieldsOrThrow("name").getStringValue()).isEqualTo("service_1");
      assertThat(passed.getFieldsOrThrow("service_with_quota").getStructValue().getFieldsOrThrow("name")
          .getStringValue()).isEqualTo("service_2");
      // The first descriptor over its limit (5 per second): only the other one's metadata.
      RateLimitResponse over = h.callTimes(5, "test-domain", d("key1", "value1", "subkey1", "x"), d("key2", "b"));
      assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      Struct left = over.getDynamicMetadata().getFieldsOrThrow("metadata").getStructValue();
      assertThat(left.getFieldsMap()).containsOnlyKeys("service_with_quota");
    }
  }

  @Test
  void theFirstPassedLimitsMetadataWinsAndMappingsMerge() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: m
        descriptors:
          - key: a
            metadata: {name: first, nested: {x: 1}}
            rate_limit: {unit: minute, requests_per_unit: 5}
          - key: b
            metadata: {name: second, other: true, nested: {y: [1, two]}}
            rate_limit: {unit: minute, requests_per_unit: 5}
        """, EnvoyOptions.DEFAULT.withDynamicMetadata(true))) {
      Struct m = h.call("m", d("a", "1"), d("b", "1")).getDynamicMetadata().getFieldsOrThrow("metadata")
          .getStructValue();
      assertThat(m.getFieldsOrThrow("name").getStringValue()).isEqualTo("first");
      assertThat(m.getFieldsOrThrow("other").getBoolValue()).isTrue();
      Struct nested = m.getFieldsOrThrow("nested").getStructValue();
      assertThat(nested.getFieldsOrThrow("x").getNumberValue()).isEqualTo(1.0);
      assertThat(nested.getFieldsOrThrow("y").getListValue().getValues(1).getStringValue()).isEqualTo("two");
    }
  }

  @Test
  void metadataMustBeAMapping() {
    assertThatThrownBy(() -> EnvoyConfigParser.parse("m.yaml", """
        domain: d
        descriptors:
          - key: a
            metadata: just text
            rate_limit: {unit: minute, requests_per_unit: 1}
        """)).isInstanceOf(ConfigException.class).hasMessage("m.yaml:4:15: metadata must be a mapping, was "
        + "'just text'");
  }

  @Test
  void metricOnlyFieldsLoadWithAWarningNamingThemAndCheckConfigSaysSo() throws Exception {
    Path f = Files.writeString(dir.resolve("a.yaml"), """
        domain: d
        descriptors:
          - key: route
            value_to_metric: true
            rate_limit: {unit: minute, requests_per_unit: 1}
          - key: user
            detailed_metric: true
            quota_mode: true
        """);
    Cli.Run r = Cli.run("check-config", f.toString());
    assertThat(r.exit()).as(r.all()).isEqualTo(1);
    assertThat(r.all()).contains(f + ":4:5: warning: value_to_metric only names envoyproxy/ratelimit's own statsd "
        + "metrics; Sluice's metrics are per rule, so it changes nothing here")
        .contains(f + ":7:5: warning: detailed_metric only names")
        .contains(f + ":8:5: warning: quota_mode applies to a limit, and this descriptor has no rate_limit")
        .contains("3 warnings: 1 rule in 1 file").doesNotContain("ok");
    // Upstream's own file with all of them loads, and limits.
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("share_threshold.yaml"))) {
      assertThat(limitOf(h, "test-domain", d("route", "api/v1", "method", "GET"))).isEqualTo(60);
      assertThat(limitOf(h, "test-domain", d("service", "svc/user", "endpoint", "get"))).isEqualTo(80);
      assertThat(h.config.warnings()).extracting(w -> w.message().split(" ")[0])
          .containsExactlyInAnyOrder("value_to_metric", "detailed_metric", "value_to_metric");
    }
  }
}
