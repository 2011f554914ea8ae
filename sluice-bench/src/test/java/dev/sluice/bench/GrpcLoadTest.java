package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.grpc.GrpcClients;
import com.linecorp.armeria.common.util.EventLoopGroups;
import dev.sluice.Ticker;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gRPC load generator counts what the service answered, and nothing else. */
class GrpcLoadTest {

  @Test
  void requestsCarryOneDescriptorPerKeyInTheAuthDomain() {
    RateLimitRequest[] r = GrpcLoad.requests(3);
    assertThat(r).hasSize(3);
    assertThat(r[2].getDomain()).isEqualTo("auth");
    assertThat(r[2].getDescriptors(0).getEntries(0).getKey()).isEqualTo("user");
    assertThat(r).extracting(q -> q.getDescriptors(0).getEntries(0).getValue())
        .containsExactly("user:0000000", "user:0000001", "user:0000002");
  }

  @Test
  void callersCountTheAnswersTheServiceGaveAndNoMoreThanTheRuleAdmits(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("envoy.yaml"), GrpcLoad.ENVOY);
    // The store's clock stands still: every call is decided at one instant, so the rule admits
    // exactly five (Envoy-format rules count in fixed windows, and a real clock could cross a
    // 3 s boundary during the run and admit five more).
    Ticker frozen = () -> 1_800_000_000_000_000L;
    try (SluiceService service = SluiceService.start(
            SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0), MemoryStore.builder().ticker(frozen).build());
        ClientFactory factory = ClientFactory.builder().workerGroup(EventLoopGroups.newEventLoopGroup(1), true)
            .build()) {
      RateLimitServiceGrpc.RateLimitServiceStub stub = GrpcClients.builder("http://127.0.0.1:" + service.port())
          .factory(factory).build(RateLimitServiceGrpc.RateLimitServiceStub.class);

      GrpcLoad.Stats s = GrpcLoad.drive(stub, GrpcLoad.requests(1), 4, 1);

      assertThat(s.errors).isZero();
      assertThat(s.ok).isBetween(0L, 5L);
      if (s.done > 20) {
        // The five admitted calls were the first decided: answered within the run.
        assertThat(s.ok).isEqualTo(5);
      }
      long recorded = 0;
      for (int i = 0; i < s.buckets.length(); i++) {
        recorded += s.buckets.get(i);
      }
      assertThat(recorded).as("every counted call has its latency recorded").isEqualTo(s.done);
      // drive returns when every caller has stopped: the service decided each call sent, the
      // counted ones and at most one per caller that completed after the end
      double decided = service.registry().find("sluice.decisions").counters().stream()
          .mapToDouble(c -> c.count()).sum();
      assertThat((long) decided - s.done).isBetween(0L, 4L);
    }
  }
}
