package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.grpc.GrpcClients;
import com.linecorp.armeria.common.util.EventLoopGroups;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
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
    try (SluiceService service = SluiceService.start(
            SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0), MemoryStore.create());
        ClientFactory factory = ClientFactory.builder().workerGroup(EventLoopGroups.newEventLoopGroup(1), true)
            .build()) {
      RateLimitServiceGrpc.RateLimitServiceStub stub = GrpcClients.builder("http://127.0.0.1:" + service.port())
          .factory(factory).build(RateLimitServiceGrpc.RateLimitServiceStub.class);

      long started = System.nanoTime();
      GrpcLoad.Stats s = GrpcLoad.drive(stub, GrpcLoad.requests(1), 4, 1);
      long elapsed = System.nanoTime() - started;

      assertThat(s.errors).isZero();
      // Calls are sent for 1 s, but on a busy machine a cold service may decide some of them
      // seconds later. Every decision falls within the elapsed time, so the rule (20 per 60 s,
      // 5 per 3 s) admits at most 5 per started 3 s of it, and at most 20.
      long threeSecondSpans = elapsed / TimeUnit.SECONDS.toNanos(3) + 1;
      assertThat(s.ok).isBetween(0L, Math.min(20L, 5L * threeSecondSpans));
      assertThat(s.ok).as("answers counted as admitted").isLessThanOrEqualTo(s.done);
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
