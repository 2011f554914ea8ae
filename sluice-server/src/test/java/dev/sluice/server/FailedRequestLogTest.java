package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.ItemDecision;
import dev.sluice.StoreException;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A flood of failing requests does not flood the log: a failure that is not the client's is
 * logged at most once per kind every 10 s, with the count of those held back; a client's mistake
 * is not logged at WARN at all. Before, every failed request wrote a WARN line.
 */
class FailedRequestLogTest {
  /** Fails every decision with an error of the request (a script error), not an outage. */
  static final class ErringStore implements Store {
    @Override
    public CompletionStage<List<ItemDecision>> decide(Batch batch) {
      return CompletableFuture.failedFuture(new StoreException("ERR script error"));
    }

    @Override
    public CompletionStage<Void> reset(String rule, String key) {
      return CompletableFuture.failedFuture(new StoreException("ERR script error"));
    }

    @Override
    public CompletionStage<Boolean> ping() {
      return CompletableFuture.completedFuture(true);
    }

    @Override
    public String describe() {
      return "erring";
    }

    @Override
    public void close() {}
  }

  @TempDir
  Path dir;
  SluiceService service;
  ServiceClient client;
  final ByteArrayOutputStream err = new ByteArrayOutputStream();
  PrintStream original;

  @BeforeEach
  void start() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), "limits:\n  - name: api\n    config:\n      - {limit: 10, period: 1h}\n");
    Files.writeString(dir.resolve("edge.yaml"), "domain: edge\ndescriptors:\n  - key: ip\n"
        + "    rate_limit: {unit: hour, requests_per_unit: 10}\n");
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), new ErringStore());
    client = new ServiceClient(service.port());
    original = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void stop() {
    System.setErr(original);
    service.close();
  }

  private List<String> warnings() {
    return Arrays.stream(err.toString(StandardCharsets.UTF_8).split("\n")).filter(l -> l.contains(" WARN ")).toList();
  }

  @Test
  void aFloodOfFailingRequestsLogsOneLinePerKindInTenSeconds() throws Exception {
    for (int i = 0; i < 200; i++) {
      assertThat(client.post("/v1/acquire", "{\"rule\":\"api\",\"key\":\"k" + i + "\"}").statusCode()).isEqualTo(503);
    }
    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = client.envoy();
    RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(RateLimitDescriptor
        .newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("ip").setValue("1"))).build();
    for (int i = 0; i < 200; i++) {
      try {
        stub.shouldRateLimit(req);
      } catch (StatusRuntimeException e) {
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      }
    }
    System.err.flush();
    assertThat(warnings()).filteredOn(l -> l.contains("request failed")).singleElement()
        .satisfies(l -> assertThat(l).contains("ERR script error"));
    assertThat(warnings()).filteredOn(l -> l.contains("rate limit decision failed")).hasSize(1);
  }

  @Test
  void clientMistakesAreNotLoggedAtWarn() throws Exception {
    for (int i = 0; i < 50; i++) {
      assertThat(client.post("/v1/acquire", "{\"rule\":\"nope\",\"key\":\"k\"}").statusCode()).isEqualTo(400);
      assertThat(client.post("/v1/acquire", "{\"rule\":").statusCode()).isEqualTo(400);
      assertThat(client.post("/v1/acquire", "{\"rule\":\"api\",\"key\":\"k\",\"cost\":-1}").statusCode())
          .isEqualTo(400);
      assertThat(client.post("/nowhere", "{}").statusCode()).isEqualTo(404);
    }
    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = client.envoy();
    for (int i = 0; i < 50; i++) {
      try {
        stub.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("").build());
      } catch (StatusRuntimeException e) {
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      }
    }
    System.err.flush();
    assertThat(warnings()).isEmpty();
  }
}
