package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.UInt64Value;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.Decision;
import dev.sluice.Request;
import dev.sluice.WindowState;
import dev.sluice.config.envoy.EnvoyDomain;
import dev.sluice.config.envoy.EnvoyLimit;
import dev.sluice.config.envoy.EnvoyMatch;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import dev.sluice.testing.FuzzCases;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Random but well-formed {@code RateLimitRequest}s — random domains, descriptors and entries, hits
 * at the edges of their types, limit overrides with any unit — sent over gRPC to a running
 * service. Each is answered {@code OK} or {@code INVALID_ARGUMENT} with a plain message, never
 * {@code INTERNAL} or {@code UNKNOWN}; a rejected request consumes nothing (a peek at every key it
 * names shows every window with at least the room it had before); and the service keeps
 * answering {@code /healthz}.
 */
@AddLifecycleHook(FuzzCases.class)
class GrpcMessageFuzzProperties {
  static final String CONFIG = """
      domain: edge
      descriptors:
        - key: ip
          rate_limit: {unit: hour, requests_per_unit: 1000000}
          sluice: {algorithm: sliding_log}
        - key: user
          sluice:
            algorithm: sliding_log
            windows:
              - {limit: 1000000, period: 1h}
              - {limit: 2000000, period: 1d}
          descriptors:
            - key: path
              rate_limit: {unit: day, requests_per_unit: 3}
        - key: tenant
          value: acme
          rate_limit: {unit: minute, requests_per_unit: 5, name: acme}
        - key: tenant
          rate_limit: {unit: hour, requests_per_unit: 100, name: tenant, replaces: [{name: acme}]}
        - key: blocked
          rate_limit: {unit: hour, requests_per_unit: 0}
        - key: open
          rate_limit: {unlimited: true}
        - key: shadow
          shadow_mode: true
          rate_limit: {unit: second, requests_per_unit: 1}
        - key: queue
          rate_limit: {unit: minute, requests_per_unit: 100000}
          sluice: {algorithm: leaky_bucket, max_wait: 10ms}
      """;
  private static final List<String> DOMAINS = List.of("edge", "edge", "edge", "", "nope", "EDGE", "edge ", "é");
  private static final List<String> KEYS = List.of("ip", "user", "path", "tenant", "blocked", "open", "shadow",
      "queue", "", "IP", "remote_address", "generic_key");
  private static final List<String> VALUES = List.of("1", "2", "10.0.0.1", "acme", "", "a/b=c%", "%2F", "€",
      "😀", "\ud800", "x".repeat(600), "€".repeat(200), "€".repeat(171), "k".repeat(505), "\u0000", " ");
  private static final long[] HITS = {0, 1, 2, 3, 5, 1000, Integer.MAX_VALUE, 0xFFFF_FFFFL, Long.MAX_VALUE,
      Long.MAX_VALUE - 1, Long.MIN_VALUE, -1, 1L << 53};

  private static Path dir;
  private static SluiceService service;
  private static RateLimitServiceGrpc.RateLimitServiceBlockingStub stub;
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  /**
   * Protobuf warns, with a stack trace, each time it writes a string holding a lone surrogate
   * (as '?'): the generator makes such strings on purpose, tens of thousands of times.
   */
  static final java.util.logging.Logger PROTOBUF_LOG = java.util.logging.Logger.getLogger("com.google.protobuf");

  static void quietProtobuf() {
    PROTOBUF_LOG.setLevel(java.util.logging.Level.OFF);
  }

  @BeforeContainer
  static void start() throws Exception {
    quietProtobuf();
    dir = Files.createTempDirectory("sluice-grpc-fuzz");
    Files.writeString(dir.resolve("edge.yaml"), CONFIG);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create());
    stub = GrpcClients.builder("http://127.0.0.1:" + service.port()).build(
        RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
  }

  @AfterContainer
  static void stop() throws Exception {
    service.close();
    Files.deleteIfExists(dir.resolve("edge.yaml"));
    Files.deleteIfExists(dir);
  }

  @AfterProperty
  void theServiceStillAnswers() throws Exception {
    HttpResponse<String> health = HTTP.send(java.net.http.HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + service.port() + "/healthz")).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
  }

  @Property
  @FuzzCases.Share(60)
  void aRandomRequestIsDecidedOrRejectedAndARejectedOneConsumesNothing(@ForAll("requests") RateLimitRequest req) {
    List<String> before = peek(req);
    Status status;
    try {
      RateLimitResponse r = stub.withDeadlineAfter(10, TimeUnit.SECONDS).shouldRateLimit(req);
      assertThat(r.getStatusesCount()).as("%s", req).isEqualTo(req.getDescriptorsCount());
      status = Status.OK;
    } catch (StatusRuntimeException e) {
      status = e.getStatus();
    }
    Statistics.collect(status.getCode());
    assertThat(status.getCode()).as("%s: %s", status, req).isIn(Status.Code.OK, Status.Code.INVALID_ARGUMENT);
    if (status.getCode() != Status.Code.OK) {
      assertThat(status.getDescription()).as("%s", req).isNotBlank().doesNotContain("com.", "io.", "java.",
          "Exception", "armeria", "Armeria", "protobuf");
      assertNothingConsumed(before, peek(req), req);
    }
  }

  /**
   * The state of every limit a request's descriptors match, by a peek (cost 0) in the service's
   * limiter: per window, its remaining count; "invalid" for a key the limiter refuses.
   */
  static List<String> peek(RateLimitRequest req) {
    List<String> states = new ArrayList<>();
    EnvoyDomain domain = service.reloader().current().domains().get(req.getDomain());
    if (domain == null) {
      return states;
    }
    for (RateLimitDescriptor d : req.getDescriptorsList()) {
      EnvoyMatch m = domain.match(EnvoyRateLimitService.entries(d));
      EnvoyLimit l = m == null ? null : m.limit();
      if (l == null || l.rule() == null) {
        continue;
      }
      try {
        Decision peek = service.limiter().acquire(Request.of(l.rule().name(), m.key(), 0));
        for (WindowState w : peek.items().get(0).windows()) {
          states.add(l.rule().name() + " " + w.remaining());
        }
      } catch (IllegalArgumentException e) {
        states.add(l.rule().name() + " invalid");
      }
    }
    return states;
  }

  /**
   * Nothing was consumed: every window has at least the room it had. (Time can give room back:
   * the shadow descriptor's window is a second long, and a fresh window reports no reset time.)
   */
  static void assertNothingConsumed(List<String> before, List<String> after, Object input) {
    assertThat(after).as("%s", input).hasSameSizeAs(before);
    for (int i = 0; i < before.size(); i++) {
      String[] b = before.get(i).split(" ");
      String[] a = after.get(i).split(" ");
      if (b[1].equals("invalid") || a[1].equals("invalid")) {
        assertThat(after.get(i)).as("%s", input).isEqualTo(before.get(i));
      } else {
        assertThat(Long.parseLong(a[1])).as("room left in %s after the rejected %s", b[0], input)
            .isGreaterThanOrEqualTo(Long.parseLong(b[1]));
      }
    }
  }

  @Provide
  Arbitrary<RateLimitRequest> requests() {
    return Arbitraries.randomValue(GrpcMessageFuzzProperties::request);
  }

  static RateLimitRequest request(Random r) {
    RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain(pick(r, DOMAINS));
    if (r.nextInt(8) == 0) {
      b.setDomain(randomString(r, r.nextInt(40)));
    }
    int n = r.nextInt(30) == 0 ? 90 + r.nextInt(40) : r.nextInt(r.nextInt(8) == 0 ? 1 : 6);
    for (int i = 0; i < n; i++) {
      RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
      int entries = r.nextInt(20) == 0 ? r.nextInt(40) : r.nextInt(4);
      for (int e = 0; e < entries; e++) {
        String key = r.nextInt(10) == 0 ? randomString(r, r.nextInt(20)) : e == 1 && r.nextBoolean() ? "path"
            : pick(r, KEYS);
        String value = r.nextInt(10) == 0 ? randomString(r, r.nextInt(40)) : pick(r, VALUES);
        d.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(key).setValue(value));
      }
      if (r.nextInt(4) == 0) {
        d.setHitsAddend(UInt64Value.of(HITS[r.nextInt(HITS.length)]));
      }
      if (r.nextInt(6) == 0) {
        RateLimitDescriptor.RateLimitOverride.Builder o = RateLimitDescriptor.RateLimitOverride.newBuilder()
            .setRequestsPerUnit((int) HITS[r.nextInt(HITS.length)]);
        if (r.nextBoolean()) {
          o.setUnit(RateLimitUnit.forNumber(r.nextInt(7)));
        } else {
          o.setUnitValue(r.nextInt());
        }
        d.setLimit(o);
      }
      b.addDescriptors(d);
    }
    if (r.nextInt(3) == 0) {
      b.setHitsAddend((int) HITS[r.nextInt(HITS.length)]);
    }
    return b.build();
  }

  private static <T> T pick(Random r, List<T> l) {
    return l.get(r.nextInt(l.size()));
  }

  private static String randomString(Random r, int n) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      s.appendCodePoint(r.nextInt(4) == 0 ? r.nextInt(0x30000) : 0x20 + r.nextInt(0x5f));
    }
    return s.toString();
  }
}
