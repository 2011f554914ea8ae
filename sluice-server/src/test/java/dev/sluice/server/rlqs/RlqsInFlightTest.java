package dev.sluice.server.rlqs;

import static dev.sluice.server.rlqs.ProxyStream.bucket;
import static dev.sluice.server.rlqs.ProxyStream.usage;
import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.ConfigReloader;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quota streams last as long as their proxies: they are not requests in flight, and a service
 * bounded to two of those still opens more streams and still answers its API.
 */
class RlqsInFlightTest {
  @TempDir
  Path dir;

  @Test
  void quotaStreamsDoNotHoldTheRequestsInFlightBound() throws Exception {
    Files.writeString(dir.resolve("sluice.yaml"), AbstractRlqsTest.CONFIG);
    MemoryStore store = MemoryStore.builder().build();
    try (RateLimiter limiter = Sluice.builder().store(store).build();
        ConfigReloader reloader = new ConfigReloader(dir, limiter, (ok, c, e) -> { }, Clock.systemUTC())) {
      SluiceServer server = SluiceServer.builder().limiter(limiter).store(store).config(reloader)
          .prometheus(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).port(0).maxInFlight(2)
          .drainTimeout(Duration.ofSeconds(1)).build().start();
      List<ProxyStream> streams = new ArrayList<>();
      try {
        RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub = GrpcClients.builder("http://127.0.0.1:"
            + server.port()).build(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub.class);
        for (int i = 0; i < 4; i++) {
          ProxyStream p = new ProxyStream(stub, "edge");
          streams.add(p);
          BucketId id = bucket("name", "per_tenant", "tenant", "inflight" + i);
          assertThat(p.exchange(usage(id, 0, 1, 1000)).getBucketAction(0).getQuotaAssignmentAction()
              .getRateLimitStrategy().hasTokenBucket()).isTrue();
        }
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + server.port() + "/v1/acquire")).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"small\",\"key\":\"k\",\"cost\":0}")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      } finally {
        streams.forEach(ProxyStream::close);
        server.close();
      }
    }
  }
}
