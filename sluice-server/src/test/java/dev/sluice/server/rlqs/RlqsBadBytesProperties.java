package dev.sluice.server.rlqs;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.GrpcBytes;
import dev.sluice.server.SluiceService;
import dev.sluice.testing.FuzzCases;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Bytes no Envoy would send, on {@code StreamRateLimitQuotas} of a running service: random bytes,
 * bare or framed; a run of valid usage reports with one of them changed the way a broken client
 * or proxy changes bytes (flipped, cut short, repeated, a wrong length or flag); garbage after
 * valid reports. Whatever comes, the stream ends with a status in the service's own words, never
 * {@code INTERNAL} or {@code UNKNOWN} and never a library's class name, nothing is logged as the
 * service's failure, and after each the service still answers a valid report.
 */
@AddLifecycleHook(FuzzCases.class)
class RlqsBadBytesProperties {
  private static final String PATH = "/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas";
  private static final java.util.logging.Logger PROTOBUF_LOG = java.util.logging.Logger.getLogger("com.google.protobuf");
  private static Path dir;
  private static SluiceService service;
  private static WebClient client;
  /** The service's log (slf4j-simple writes to System.err), kept while the properties run. */
  private static final ByteArrayOutputStream LOG = new ByteArrayOutputStream();
  private static java.io.PrintStream stderr;

  @BeforeContainer
  static void start() throws Exception {
    PROTOBUF_LOG.setLevel(java.util.logging.Level.OFF);
    dir = Files.createTempDirectory("sluice-rlqs-bytes");
    Files.writeString(dir.resolve("sluice.yaml"), AbstractRlqsTest.CONFIG);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create());
    client = WebClient.builder("h2c://127.0.0.1:" + service.port()).responseTimeout(Duration.ofSeconds(30)).build();
    stderr = System.err;
    java.io.OutputStream both = new java.io.OutputStream() {
      @Override
      public void write(int b) {
        stderr.write(b);
        synchronized (LOG) {
          LOG.write(b);
        }
      }

      @Override
      public void write(byte[] b, int off, int len) {
        stderr.write(b, off, len);
        synchronized (LOG) {
          LOG.write(b, off, len);
        }
      }
    };
    System.setErr(new java.io.PrintStream(both, true, StandardCharsets.UTF_8));
  }

  @AfterContainer
  static void stop() throws Exception {
    System.setErr(stderr);
    service.close();
    Files.deleteIfExists(dir.resolve("sluice.yaml"));
    Files.deleteIfExists(dir);
  }

  /** After each try: a valid report on a new stream is still answered, one action per bucket. */
  @AfterTry
  void theServiceStillAnswers() throws Exception {
    AggregatedHttpResponse r = send(GrpcBytes.frame(0, valid().toByteArray()));
    assertThat(status(r).getCode()).isEqualTo(Status.Code.OK);
    byte[] body = r.content().array();
    assertThat(body.length).isGreaterThan(5);
    int length = ByteBuffer.wrap(body, 1, 4).getInt();
    RateLimitQuotaResponse answer = RateLimitQuotaResponse.parseFrom(Arrays.copyOfRange(body, 5, 5 + length));
    assertThat(answer.getBucketActionCount()).isEqualTo(1);
    // A stream the client broke is the client's doing: nothing logged as the service's failure.
    String log;
    synchronized (LOG) {
      log = LOG.toString(StandardCharsets.UTF_8);
    }
    assertThat(log).doesNotContain("a stream failed", "ERROR");
  }

  @Property
  @FuzzCases.Share(20)
  void randomBytesEndTheStreamPlainly(@ForAll("bytes") byte[] bytes, @ForAll boolean framed) {
    assertEndedPlainly(framed ? GrpcBytes.frame(0, bytes) : bytes);
  }

  @Property
  @FuzzCases.Share(20)
  void reportsWithOneChangedEndTheStreamPlainly(@ForAll("mutatedStreams") byte[] stream) {
    assertEndedPlainly(stream);
  }

  private static void assertEndedPlainly(byte[] body) {
    Status s = status(send(body));
    assertThat(s.getCode()).as(String.valueOf(s)).isNotIn(Status.Code.INTERNAL, Status.Code.UNKNOWN);
    if (s.getCode() != Status.Code.OK) {
      assertThat(s.getDescription()).as(String.valueOf(s)).isNotBlank()
          .doesNotContain("com.", "io.", "java.", "Exception", "armeria", "Armeria", "protobuf.", "Deframer");
    }
  }

  /** {@code body} as the whole request stream of one call, the client half-closing after it. */
  private static AggregatedHttpResponse send(byte[] body) {
    RequestHeaders h = RequestHeaders.builder(HttpMethod.POST, PATH).contentType(MediaType.parse("application/grpc"))
        .add("te", "trailers").build();
    return client.execute(HttpRequest.of(h, HttpData.wrap(body))).aggregate().join();
  }

  private static Status status(AggregatedHttpResponse r) {
    // A call that fails at once answers "trailers only": the status is in the headers.
    var fields = r.trailers().contains("grpc-status") ? r.trailers() : r.headers();
    String code = fields.get("grpc-status");
    assertThat(code).as("grpc-status of an answer with HTTP status %s", r.status()).isNotNull();
    String message = fields.get("grpc-message");
    Status s = Status.fromCodeValue(Integer.parseInt(code));
    return message == null ? s : s.withDescription(URLDecoder.decode(message.replace("+", "%2B"), StandardCharsets.UTF_8));
  }

  private static RateLimitQuotaUsageReports valid() {
    return RateLimitQuotaUsageReports.newBuilder().setDomain("edge").addBucketQuotaUsages(BucketQuotaUsage.newBuilder()
        .setBucketId(BucketId.newBuilder().putBucket("name", "small").putBucket("id", "x"))
        .setTimeElapsed(com.google.protobuf.Duration.newBuilder().setSeconds(1)).setNumRequestsAllowed(1))
        .build();
  }

  /**
   * One to four random reports (as {@link RlqsReportFuzzProperties} makes them), each framed, then
   * one of them changed; or garbage after them.
   */
  @Provide
  Arbitrary<byte[]> mutatedStreams() {
    return Arbitraries.randomValue(r -> {
      int n = 1 + r.nextInt(4);
      byte[][] frames = new byte[n][];
      for (int i = 0; i < n; i++) {
        frames[i] = GrpcBytes.frame(0, (i == 0 || r.nextBoolean() ? valid() : RlqsReportFuzzProperties.report(r)).toByteArray());
      }
      int k = r.nextInt(n);
      frames[k] = GrpcBytes.damaged(r, frames[k]);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (byte[] f : frames) {
        out.writeBytes(f);
      }
      if (r.nextInt(4) == 0) {
        byte[] tail = new byte[r.nextInt(16)];
        r.nextBytes(tail);
        out.writeBytes(tail);
      }
      return out.toByteArray();
    });
  }

  @Provide
  Arbitrary<byte[]> bytes() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
  }
}
