package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.server.envoy.EnvoyOptions;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Envoy options of {@code sluice serve} on a running service, over gRPC: without them the
 * answer carries no headers (nothing for Envoy to add to every proxied response) and no
 * metadata; each one turns on what envoyproxy/ratelimit's setting of the same meaning does.
 */
class EnvoyServeOptionsTest {
  @TempDir
  Path dir;

  private static RateLimitRequest request(String user) {
    return RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(RateLimitDescriptor.newBuilder()
        .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("user").setValue(user))).build();
  }

  private RateLimitResponse callTwice(EnvoyOptions options, String user) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), """
        domain: edge
        descriptors:
          - key: user
            metadata: {team: checkout}
            rate_limit: {unit: hour, requests_per_unit: 1}
        """);
    Files.writeString(dir.resolve("b.yaml"), """
        domain: edge
        descriptors:
          - key: ip
            rate_limit: {unit: hour, requests_per_unit: 1}
        """);
    SluiceService.Settings s = SluiceService.Settings.of(dir).withPort(0).withDrainTimeout(Duration.ofSeconds(1))
        .withEnvoy(options);
    try (SluiceService service = SluiceService.start(s, MemoryStore.create())) {
      var envoy = new ServiceClient(service.port()).envoy();
      envoy.shouldRateLimit(request(user));
      return envoy.shouldRateLimit(request(user));
    }
  }

  @Test
  void eachOptionDoesWhatItsEnvoySettingDoes() throws Exception {
    EnvoyOptions merge = EnvoyOptions.DEFAULT.withMergeDomains(true);
    RateLimitResponse plain = callTwice(merge, "a");
    assertThat(plain.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(plain.getResponseHeadersToAddList()).isEmpty();
    assertThat(plain.hasDynamicMetadata()).isFalse();
    assertThat(plain.getStatuses(0).getCurrentLimit().getName()).isEmpty();

    RateLimitResponse all = callTwice(merge.withResponseHeaders(true).withShadowMode(true).withDynamicMetadata(true),
        "b");
    assertThat(all.getOverallCode()).isEqualTo(Code.OK);
    assertThat(all.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(all.getResponseHeadersToAddList()).extracting(HeaderValue::getKey)
        .containsExactly("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
    assertThat(all.getResponseHeadersToAddList()).extracting(HeaderValue::getValue).noneMatch(v -> v.contains("envoy:"));
    // Over its limit, the descriptor did not pass: no metadata of its limit.
    assertThat(all.getDynamicMetadata().getFieldsOrThrow("domain").getStringValue()).isEqualTo("edge");
    assertThat(all.getDynamicMetadata().containsFields("metadata")).isFalse();
  }

  @Test
  void sluiceServeTakesTheOptions() throws Exception {
    Path conf = Files.createDirectory(dir.resolve("conf"));
    for (String f : new String[] {"a.yaml", "b.yaml"}) {
      Files.writeString(conf.resolve(f), "domain: edge\ndescriptors:\n  - key: " + f.charAt(0)
          + "\n    rate_limit: {unit: hour, requests_per_unit: 5}\n");
    }
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", conf.toString(),
        "--envoy-merge-domains", "--envoy-response-headers", "--envoy-shadow-mode", "--envoy-dynamic-metadata")) {
      var envoy = new ServiceClient(p.awaitPort()).envoy();
      RateLimitResponse r = envoy.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("edge")
          .addDescriptors(RateLimitDescriptor.newBuilder()
              .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("b").setValue("1"))).build());
      assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
      assertThat(r.getResponseHeadersToAddList()).extracting(HeaderValue::getKey)
          .containsExactly("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
      assertThat(r.getResponseHeadersToAddList().subList(0, 2)).extracting(HeaderValue::getValue)
          .containsExactly("5", "4");
      // Until the hour ends, in whole seconds.
      assertThat(Long.parseLong(r.getResponseHeadersToAdd(2).getValue())).isBetween(1L, 3600L);
      assertThat(r.getDynamicMetadata().getFieldsOrThrow("domain").getStringValue()).isEqualTo("edge");
    }
  }

  @Test
  void twoFilesOfOneDomainDoNotStartWithoutMerge() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> callTwice(EnvoyOptions.DEFAULT, "c"))
        .hasMessageContaining("duplicate domain 'edge'");
  }
}
