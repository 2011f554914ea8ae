package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.RequestHeaders;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A gRPC call whose frames or message cannot be read is the caller's mistake: it fails with
 * {@code INVALID_ARGUMENT} and a plain message, never {@code INTERNAL} and never a class name of
 * the libraries underneath.
 */
class EnvoyMalformedRequestTest {
  private static final String PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
  private static Path dir;
  private static SluiceService service;
  private static WebClient client;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("sluice-grpc");
    Files.writeString(dir.resolve("edge.yaml"), """
        domain: edge
        descriptors:
          - key: ip
            rate_limit: {unit: hour, requests_per_unit: 100}
        """);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create());
    client = WebClient.builder("h2c://127.0.0.1:" + service.port()).responseTimeout(Duration.ofSeconds(10)).build();
  }

  @AfterAll
  static void stop() throws Exception {
    service.close();
    Files.deleteIfExists(dir.resolve("edge.yaml"));
    Files.deleteIfExists(dir);
  }

  /** Sends {@code body} as the request of a unary call and returns the call's status. */
  static Status call(byte[] body) {
    RequestHeaders h = RequestHeaders.builder(HttpMethod.POST, PATH).contentType(
        com.linecorp.armeria.common.MediaType.parse("application/grpc")).add("te", "trailers").build();
    AggregatedHttpResponse r = client.execute(HttpRequest.of(h, HttpData.wrap(body))).aggregate().join();
    // A call that fails at once answers "trailers only": the status is in the headers.
    var fields = r.trailers().contains("grpc-status") ? r.trailers() : r.headers();
    String code = fields.get("grpc-status");
    String message = fields.get("grpc-message");
    assertThat(code).as("grpc-status of an answer with HTTP status %s", r.status()).isNotNull();
    Status s = Status.fromCodeValue(Integer.parseInt(code));
    return message == null ? s : s.withDescription(
        java.net.URLDecoder.decode(message.replace("+", "%2B"), StandardCharsets.UTF_8));
  }

  static byte[] frame(int flags, byte[] message) {
    return dev.sluice.server.GrpcBytes.frame(flags, message);
  }

  static void assertPlainInvalidArgument(Status s) {
    assertThat(s.getCode()).as(String.valueOf(s)).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isNotBlank();
    assertThat(s.getDescription()).doesNotContain("com.", "io.", "java.", "Exception", "armeria", "Armeria",
        "protobuf.", "Deframer");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      reserved bits set in the frame header       | 0500000001 0a         | frame header is malformed
      compressed flag without an encoding         | 0100000001 0a         | compressed
      a message that is not protobuf              | 0000000005 ffffffffff | not a valid RateLimitRequest
      a frame shorter than its declared length    | 0000000010 0a         | not one whole gRPC message
      a lone byte, no whole frame header          | 00                    | not one whole gRPC message
      """)
  void aMalformedFrameOrMessageIsAnInvalidArgumentWithAPlainMessage(String what, String hex, String message) {
    Status s = call(HexFormat.of().parseHex(hex.replace(" ", "")));
    assertPlainInvalidArgument(s);
    assertThat(s.getDescription()).contains(message);
  }

  @Test
  void aCallWithoutAMessageIsAnInvalidArgument() {
    assertPlainInvalidArgument(call(new byte[0]));
  }

  @Test
  void aStringFieldThatIsNotUtf8IsAnInvalidArgument() {
    // domain (field 1, length-delimited) = 0xff 0xfe: proto3 strings must be UTF-8.
    assertPlainInvalidArgument(call(frame(0, new byte[] {0x0a, 0x02, (byte) 0xff, (byte) 0xfe})));
  }

  @Test
  void aWellFormedCallStillWorks() throws Exception {
    RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(
        RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("ip").setValue("1")))
        .build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    req.writeTo(out);
    assertThat(call(frame(0, out.toByteArray())).getCode()).isEqualTo(Status.Code.OK);
  }
}
