package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One HTTP/2 connection may not open streams without bound, nor may the clients of every
 * connection make the service hold requests without bound: past the streams a connection may
 * have, a stream is refused (RST_STREAM); past the requests the service holds, a request is
 * answered 503 (gRPC: RESOURCE_EXHAUSTED) at once — and {@code /healthz} still answers.
 * Requests are held by a store that does not answer until released.
 */
class FrontEndBoundsTest {
  @TempDir
  Path dir;

  private SluiceService start(ControllableStore store, int maxInFlight) throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), ServiceFailureTest.RULES);
    return SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)).withStoreTimeout(Duration.ofSeconds(30))
        .withMaxInFlight(maxInFlight), store);
  }

  private static byte[] acquire(int i) {
    return ("{\"rule\":\"open.rule\",\"key\":\"k" + i + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aConnectionIsToldItsStreamLimitAndStreamsPastItAreRefused() throws Exception {
    ControllableStore store = new ControllableStore();
    try (SluiceService s = start(store, 1000); RawHttp2 h2 = new RawHttp2(s.port())) {
      assertThat(h2.maxConcurrentStreams.get(10, TimeUnit.SECONDS))
          .as("SETTINGS_MAX_CONCURRENT_STREAMS").isEqualTo(SluiceServer.MAX_STREAMS_PER_CONNECTION);
      store.hold = true;
      List<RawHttp2.Answer> answers = new ArrayList<>();
      int opened = SluiceServer.MAX_STREAMS_PER_CONNECTION + 44;
      for (int i = 0; i < opened; i++) {
        // Past the limit, streams without a body: a DATA frame of a stream the server refused is a
        // connection error (RFC 9113, 5.1), which would end the test's connection.
        answers.add(i < SluiceServer.MAX_STREAMS_PER_CONNECTION
            ? h2.request("POST", "/v1/acquire", "application/json", acquire(i))
            : h2.request("GET", "/healthz", null, null));
      }
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(20),
          () -> store.pending.get() == SluiceServer.MAX_STREAMS_PER_CONNECTION
              && answers.stream().filter(a -> a.done.isDone()).count() == 44);
      assertThat(answers.subList(SluiceServer.MAX_STREAMS_PER_CONNECTION, opened))
          .allMatch(a -> a.resetCode == RawHttp2.REFUSED_STREAM);
      // Another connection is served.
      assertThat(new ServiceClient(s.port()).get("/healthz").statusCode()).isEqualTo(200);
      store.release();
      for (RawHttp2.Answer a : answers.subList(0, SluiceServer.MAX_STREAMS_PER_CONNECTION)) {
        assertThat(a.done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
      }
    }
  }

  @Test
  void pastTheRequestsInFlightAnswersAre503AndHealthzStillAnswers() throws Exception {
    ControllableStore store = new ControllableStore();
    int max = 8;
    try (SluiceService s = start(store, max); RawHttp2 h2 = new RawHttp2(s.port())) {
      store.hold = true;
      List<RawHttp2.Answer> answers = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        answers.add(h2.request("POST", "/v1/acquire", "application/json", acquire(i)));
      }
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(20), () -> store.pending.get() == max
          && answers.stream().filter(a -> a.done.isDone()).count() == 40 - max);
      List<RawHttp2.Answer> refused = answers.stream().filter(a -> a.done.isDone()).toList();
      for (RawHttp2.Answer a : refused) {
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.headers.get("retry-after").toString()).isEqualTo("1");
        JsonNode error = ServiceClient.JSON.readTree(a.body()).get("error");
        assertThat(error.get("code").asText()).isEqualTo("over_capacity");
        assertThat(error.get("message").asText())
            .isEqualTo("the service holds its most requests at once (8); try again");
      }

      byte[] message = RateLimitRequest.newBuilder().setDomain("edge").build().toByteArray();
      byte[] framed = ByteBuffer.allocate(5 + message.length).put((byte) 0).putInt(message.length).put(message).array();
      RawHttp2.Answer grpc = h2.request("POST", "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
          "application/grpc", framed);
      assertThat(grpc.done.get(10, TimeUnit.SECONDS).grpcStatus()).as("RESOURCE_EXHAUSTED").isEqualTo("8");

      RawHttp2.Answer health = h2.request("GET", "/healthz", null, null);
      assertThat(health.done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
      ServiceClient c = new ServiceClient(s.port());
      assertThat(c.get("/healthz").statusCode()).isEqualTo(200);
      assertThat(c.get("/metrics").body()).contains("sluice_requests_over_capacity_total 33.0")
          .contains("sluice_requests_in_flight 8.0").contains("sluice_requests_max_in_flight 8.0");

      store.release();
      for (RawHttp2.Answer a : answers) {
        if (!refused.contains(a)) {
          assertThat(a.done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
        }
      }
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(5), () -> {
        try {
          return c.get("/metrics").body().contains("sluice_requests_in_flight 0.0");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(c.post("/v1/acquire", "{\"rule\":\"open.rule\",\"key\":\"after\"}").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aGrpcMessageOverOneMebibyteIsRefused() throws Exception {
    try (SluiceService s = start(new ControllableStore(), 0)) {
      var envoy = new ServiceClient(s.port()).envoy();
      // One descriptor whose value makes the message just over, then just under, 1 MiB.
      for (int size : new int[] {1024 * 1024 + 1, 1024 * 1024 - 64}) {
        RateLimitRequest big = RateLimitRequest.newBuilder().setDomain("edge")
            .addDescriptors(io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.newBuilder()
                .addEntries(io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.Entry.newBuilder()
                    .setKey("k").setValue("v".repeat(size - 20))))
            .build();
        io.grpc.Status.Code code;
        try {
          envoy.shouldRateLimit(big);
          code = io.grpc.Status.Code.OK;
        } catch (io.grpc.StatusRuntimeException e) {
          code = e.getStatus().getCode();
        }
        if (big.getSerializedSize() > 1024 * 1024) {
          assertThat(code).as("%d bytes", big.getSerializedSize()).isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
        } else {
          // Read and answered: the domain is not in force, which is not an error of the message's size.
          assertThat(code).as("%d bytes", big.getSerializedSize()).isNotEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
        }
      }
    }
  }
}
