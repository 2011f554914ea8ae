package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * envoyproxy/ratelimit's config reload test on a running service, over gRPC, with its runtime
 * directory and its {@code reload.yaml} unchanged: a file added to the directory is in force
 * once loaded, and its removal is too.
 */
class EnvoyUpstreamReloadTest {
  private static final Path UPSTREAM = Path.of("src/test/resources/envoy/upstream");

  @TempDir
  Path dir;

  private static RateLimitRequest request(String key) {
    return RateLimitRequest.newBuilder().setDomain("reload").addDescriptors(RateLimitDescriptor.newBuilder()
        .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(key).setValue("foo"))).build();
  }

  @Test
  void aFileAddedToTheDirectoryIsInForceOnceLoadedAndItsRemovalToo() throws Exception {
    try (Stream<Path> files = Files.list(UPSTREAM.resolve("integration"))) {
      for (Path f : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        Files.copy(f, dir.resolve(f.getFileName()));
      }
    }
    SluiceService.Settings s = SluiceService.Settings.of(dir).withPort(0).withPollInterval(Duration.ofMillis(50))
        .withDrainTimeout(Duration.ofSeconds(1));
    try (SluiceService service = SluiceService.start(s, MemoryStore.create())) {
      var envoy = new ServiceClient(service.port()).envoy();
      assertThat(envoy.shouldRateLimit(request("block"))).isEqualTo(RateLimitResponse.newBuilder()
          .setOverallCode(Code.OK).addStatuses(DescriptorStatus.newBuilder().setCode(Code.OK)).build());

      Files.copy(UPSTREAM.resolve("reload/reload.yaml"), dir.resolve("reload.yaml"));
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(30),
          () -> service.reloader().current().domains().containsKey("reload"));
      RateLimitResponse r = envoy.shouldRateLimit(request("key1"));
      DescriptorStatus st = r.getStatuses(0);
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(st.getCurrentLimit().getRequestsPerUnit()).isEqualTo(50);
      assertThat(st.getCurrentLimit().getUnit()).isEqualTo(Unit.SECOND);
      assertThat(st.getCurrentLimit().getName()).isEmpty();
      assertThat(st.getLimitRemaining()).isEqualTo(49);
      assertThat(st.getDurationUntilReset().getSeconds()).isEqualTo(1);
      assertThat(st.getDurationUntilReset().getNanos()).isZero();
      // Its requests_per_unit: 0 blocks.
      assertThat(envoy.shouldRateLimit(request("block")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);

      Files.delete(dir.resolve("reload.yaml"));
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(30),
          () -> !service.reloader().current().domains().containsKey("reload"));
      assertThat(envoy.shouldRateLimit(request("block")).getOverallCode()).isEqualTo(Code.OK);
    }
  }
}
