package dev.sluice.server.rlqs;

import static dev.sluice.server.rlqs.ProxyStream.bucket;
import static dev.sluice.server.rlqs.ProxyStream.usage;
import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service as {@code sluice serve} starts it ({@link SluiceService#start}): the store it is
 * given reaches the Rate Limit Quota Service, next to Envoy's rate limit service on the same port.
 */
class RlqsServeTest {
  @TempDir
  Path dir;

  @Test
  void sluiceServeAnswersStreamRateLimitQuotasFromTheStoreItWasGiven() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - {name: api.global, mode: leased, config: [{limit: 6000, period: 1m}]}
        """);
    Files.writeString(dir.resolve("rlqs.yaml"), """
        rlqs:
          - domain: edge
            buckets:
              - {when: {name: api}, rule: api.global, key: all}
        """);
    try (SluiceService service = SluiceService.start(SluiceService.Settings.of(dir).withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.builder().build())) {
      RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub = GrpcClients.builder("http://127.0.0.1:"
          + service.port()).build(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub.class);
      try (ProxyStream p = new ProxyStream(stub, "edge")) {
        BucketId id = bucket("name", "api");
        RateLimitQuotaResponse r = p.exchange(usage(id, 0, 10, 1000));
        assertThat(r.getBucketAction(0).getBucketId()).isEqualTo(id);
        // 6,000 per minute, alone: 10 tokens every 100 ms.
        assertThat(r.getBucketAction(0).getQuotaAssignmentAction().getRateLimitStrategy().getTokenBucket()
            .getTokensPerFill().getValue()).isEqualTo(10);
        assertThat(service.limiter().acquire("api.global", "all", 0).items().get(0).windows().get(0).remaining())
            .isEqualTo(6000 - (10 + 10 * 21));
      }
      try (ProxyStream unknown = new ProxyStream(stub, "other")) {
        unknown.report(usage(bucket("name", "api"), 0, 1, 1000));
        assertThat(unknown.end().getCode()).isEqualTo(Status.Code.NOT_FOUND);
      }
    }
  }
}
