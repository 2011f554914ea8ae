package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static dev.sluice.server.envoy.EnvoyUpstreamWildcardTest.UPSTREAM_CONFIG;
import static dev.sluice.server.envoy.EnvoyUpstreamWildcardTest.limitOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * envoyproxy/ratelimit's config test suite ({@code test/config}, its files unchanged), run
 * through {@code check-config} and the service: every file accepted or refused as upstream
 * does, refusals placed at their line and column, and the limits its tests expect from matching.
 */
class EnvoyUpstreamConfigSuiteTest {
  @TempDir
  Path dir;

  private static Cli.Run check(Path... paths) {
    String[] args = Stream.concat(Stream.of("check-config"), Stream.of(paths).map(Path::toString))
        .toArray(String[]::new);
    return Cli.run(args);
  }

  /** Refused: exit 2, the file named with a line and column, and upstream's reason. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "bad_limit_unit.yaml     | :6:13: invalid rate limit unit 'foo'",
      "bad_yaml.yaml           | :2:1: not valid YAML",
      "duplicate_key.yaml      | :6:5: duplicate descriptor composite key 'test-domain/key1:value1'",
      "empty_domain.yaml       | :1:1: config file cannot have an empty domain",
      "empty_key.yaml          | :3:5: descriptor has an empty key",
      "misspelled_key.yaml     | :5:5: unknown field 'ratelimit' in a descriptor",
      "misspelled_key2.yaml    | :7:7: unknown field 'requestsperunit' in rate_limit",
      "non_map_list.yaml       | :3:5: a descriptor must be a mapping, was 'a'",
      "non_string_key.yaml     | :1:1: unknown field '0.25' in an Envoy rate limit file",
      "replaces_empty.yaml     | :10:15: should not have an empty replaces entry",
      "replaces_self.yaml      | :10:15: replaces should not contain the name of its own rate limit 'self'",
      "unlimited_with_unit.yaml| :6:13: should not specify rate limit unit when unlimited",
  })
  void refusedAsUpstreamRefusesIt(String file, String error) {
    Path f = UPSTREAM_CONFIG.resolve(file);
    Cli.Run r = check(f);
    assertThat(r.exit()).as(r.all()).isEqualTo(2);
    assertThat(r.all()).contains(f + error);
  }

  /**
   * Accepted; exit 1 where the file uses a field that only names Envoy's statsd metrics
   * ({@code detailed_metric}, {@code value_to_metric}), which check-config says changes nothing.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "basic_config.yaml     | 1 | 1 warning: 9 rules in 1 file",
      "duplicate_domain.yaml | 0 | ok: 0 rules in 1 file",
      "merge_domain_key1.yaml| 0 | ok: 1 rule in 1 file",
      "merge_domain_key2.yaml| 0 | ok: 1 rule in 1 file",
      "metadata.yaml         | 0 | ok: 3 rules in 1 file",
      "shadowmode_config.yaml| 0 | ok: 4 rules in 1 file",
      "share_threshold.yaml  | 1 | 3 warnings: 13 rules in 1 file",
      "wildcard.yaml         | 0 | ok: 6 rules in 1 file",
  })
  void acceptedAsUpstreamAcceptsIt(String file, int exit, String summary) {
    Cli.Run r = check(UPSTREAM_CONFIG.resolve(file));
    assertThat(r.exit()).as(r.all()).isEqualTo(exit);
    assertThat(r.all()).contains(summary);
  }

  @Test
  void everyUpstreamFileIsCovered() throws Exception {
    try (Stream<Path> files = Files.list(UPSTREAM_CONFIG)) {
      assertThat(files.filter(f -> f.toString().endsWith(".yaml")).count()).isEqualTo(20);
    }
  }

  @Test
  void aSecondFileOfTheSameDomainIsRefusedUnlessDomainsMerge() throws Exception {
    Files.copy(UPSTREAM_CONFIG.resolve("basic_config.yaml"), dir.resolve("a.yaml"));
    Files.copy(UPSTREAM_CONFIG.resolve("duplicate_domain.yaml"), dir.resolve("b.yaml"));
    Cli.Run dup = check(dir);
    assertThat(dup.exit()).isEqualTo(2);
    assertThat(dup.all()).contains(dir.resolve("b.yaml") + ":1:9: duplicate domain 'test-domain'");

    Path merge = Files.createDirectory(dir.resolve("merge"));
    Files.copy(UPSTREAM_CONFIG.resolve("merge_domain_key1.yaml"), merge.resolve("1.yaml"));
    Files.copy(UPSTREAM_CONFIG.resolve("merge_domain_key2.yaml"), merge.resolve("2.yaml"));
    assertThat(check(merge).exit()).isEqualTo(2);
    Cli.Run merged = Cli.run("check-config", "--envoy-merge-domains", merge.toString());
    assertThat(merged.exit()).as(merged.all()).isZero();
    assertThat(merged.all()).contains("ok: 2 rules in 2 files");
    try (EnvoyHarness h = EnvoyHarness.load(merge, EnvoyOptions.DEFAULT.withMergeDomains(true))) {
      assertThat(limitOf(h, "test-domain", d("key1", "value1"))).isEqualTo(10);
      assertThat(limitOf(h, "test-domain", d("key2", "value2"))).isEqualTo(20);
    }

    // Upstream's TestDuplicateKeyDomainMerge: the same file twice, merged, repeats a descriptor.
    Path twice = Files.createDirectory(dir.resolve("twice"));
    Files.copy(UPSTREAM_CONFIG.resolve("merge_domain_key1.yaml"), twice.resolve("1.yaml"));
    Files.copy(UPSTREAM_CONFIG.resolve("merge_domain_key1.yaml"), twice.resolve("2.yaml"));
    Cli.Run again = Cli.run("check-config", "--envoy-merge-domains", twice.toString());
    assertThat(again.exit()).isEqualTo(2);
    assertThat(again.all()).contains(twice.resolve("2.yaml")
        + ":5:5: duplicate descriptor composite key 'test-domain/key1:value1' (also in " + twice.resolve("1.yaml"));
  }

  /** Upstream's TestBasicConfig: which limit each descriptor gets, and its name. */
  @Test
  void basicConfigMatchesAsUpstreamExpects() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("basic_config.yaml"))) {
      String dom = "test-domain";
      assertThat(h.call("foo_domain", d("key1", "value1")).getStatuses(0).hasCurrentLimit()).isFalse();
      assertThat(limitOf(h, dom, d("key1", "something"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("key1", "value1"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("key2", "value2", "subkey", "subvalue"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("key5", "value5", "subkey5", "subvalue"))).isEqualTo(-1);
      assertLimit(h.call(dom, d("key1", "value1", "subkey1", "something")), 5, Unit.SECOND, "");
      assertLimit(h.call(dom, d("key1", "value1", "subkey1", "subvalue1")), 10, Unit.SECOND, "");
      assertLimit(h.call(dom, d("key2", "something")), 20, Unit.MINUTE, "");
      assertLimit(h.call(dom, d("key2", "value2")), 30, Unit.MINUTE, "");
      assertThat(limitOf(h, dom, d("key2", "value3"))).isEqualTo(-1);
      assertLimit(h.call(dom, d("key3", "foo")), 1, Unit.HOUR, "");
      assertLimit(h.call(dom, d("key4", "foo")), 1, Unit.DAY, "key4_rate_limit");
      RateLimitResponse.DescriptorStatus unlimited = h.call(dom, d("key6", "foo")).getStatuses(0);
      assertThat(unlimited.getCode()).isEqualTo(Code.OK);
      assertThat(Integer.toUnsignedLong(unlimited.getLimitRemaining())).isEqualTo(4_294_967_295L);
      assertLimit(h.call(dom, d("key7", "unspecified_value")), 70, Unit.MINUTE, "");
      assertLimit(h.call(dom, d("key7", "another_value")), 70, Unit.MINUTE, "");
    }
  }

  /** Upstream's TestConfigLimitOverride: a descriptor's own limit is reported, unnamed. */
  @Test
  void aLimitOverrideIsTheLimitReported() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("basic_config.yaml"))) {
      RateLimitDescriptor day = d("key1", "value1", "subkey1", "something").toBuilder()
          .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(10)
              .setUnit(RateLimitUnit.DAY)).build();
      assertLimit(h.call("test-domain", day), 10, Unit.DAY, "");
      RateLimitDescriptor hour = day.toBuilder().setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
          .setRequestsPerUnit(42).setUnit(RateLimitUnit.HOUR)).build();
      assertLimit(h.call("test-domain", hour), 42, Unit.HOUR, "");
    }
  }

  /** Upstream's TestShadowModeConfig: shadow descriptors answer OK over their limit. */
  @Test
  void shadowModeConfigAsUpstreamExpects() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("shadowmode_config.yaml"))) {
      String dom = "test-domain";
      RateLimitResponse enforced = h.callTimes(6, dom, d("key1", "value1", "subkey1", "something"));
      assertThat(enforced.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertLimit(enforced, 5, Unit.SECOND, "");
      RateLimitResponse shadow = h.callTimes(11, dom, d("key1", "value1", "subkey1", "subvalue1"));
      assertThat(shadow.getOverallCode()).isEqualTo(Code.OK);
      assertThat(shadow.getStatuses(0).getCode()).isEqualTo(Code.OK);
      assertThat(shadow.getStatuses(0).getLimitRemaining()).isZero();
      assertLimit(shadow, 10, Unit.SECOND, "");
      assertThat(h.callTimes(21, dom, d("key2", "something")).getOverallCode()).isEqualTo(Code.OK);
      assertThat(h.callTimes(31, dom, d("key2", "value2")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    }
  }

  private static void assertLimit(RateLimitResponse r, int perUnit, Unit unit, String name) {
    RateLimitResponse.RateLimit l = r.getStatuses(0).getCurrentLimit();
    assertThat(l.getRequestsPerUnit()).isEqualTo(perUnit);
    assertThat(l.getUnit()).isEqualTo(unit);
    assertThat(l.getName()).isEqualTo(name);
  }
}
