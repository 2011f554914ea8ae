package dev.sluice.server.rlqs;

import static dev.sluice.server.rlqs.ProxyStream.bucket;
import static dev.sluice.server.rlqs.ProxyStream.usage;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy.BlanketRule;
import io.envoyproxy.envoy.type.v3.TokenBucket;
import io.grpc.Status;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Envoy's Rate Limit Quota Service on a running {@link SluiceServer} (as {@code sluice serve}
 * builds it, with the store the limiter uses), driven over the network by the generated gRPC
 * stub acting as the proxies, on a fake clock for the service's TTLs and silences. Subclasses
 * choose the store; each test uses keys of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractRlqsTest {
  static final String CONFIG = """
      limits:
        - {name: tenant.requests, mode: leased, config: [{limit: 12000, period: 1m}]}
        - {name: small, mode: leased, config: [{limit: 1000, period: 1m}]}
        - {name: scarce, mode: leased, config: [{limit: 8, period: 1h}]}
      rlqs:
        - domain: edge
          buckets:
            - {when: {name: per_tenant}, rule: tenant.requests, key: "tenant:{tenant}"}
            - {when: {name: small}, rule: small, key: "s:{id}"}
            - {when: {name: scarce}, rule: scarce, key: "c:{id}"}
          unmatched: deny
      """;
  static final ObjectMapper JSON = new ObjectMapper();

  final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  Path dir;
  Store store;
  RateLimiter limiter;
  ConfigReloader reloader;
  SluiceServer server;
  RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub;
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  final List<ProxyStream> streams = new ArrayList<>();

  /** A new, empty store; a memory store counts on {@code ticker}. */
  protected abstract Store newStore(FakeTicker ticker) throws Exception;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-rlqs");
    Files.writeString(dir.resolve("sluice.yaml"), CONFIG);
    store = newStore(ticker);
    limiter = Sluice.builder().store(store).ticker(ticker).build();
    reloader = new ConfigReloader(dir, limiter, (ok, c, e) -> { }, Clock.systemUTC());
    server = SluiceServer.builder().limiter(limiter).store(store).config(reloader)
        .prometheus(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).host("127.0.0.1").port(0).ticker(ticker)
        .drainTimeout(Duration.ofSeconds(2)).build().start();
    // Streams last as long as a test needs them, not the client's default response timeout (10 s).
    stub = GrpcClients.builder("http://127.0.0.1:" + server.port()).responseTimeout(Duration.ZERO)
        .build(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub.class);
  }

  @AfterEach
  void closeStreams() {
    streams.forEach(ProxyStream::close);
    streams.clear();
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    if (limiter != null) {
      limiter.close();
    }
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
    }
    Files.deleteIfExists(dir);
  }

  ProxyStream stream() {
    return stream("edge");
  }

  ProxyStream stream(String domain) {
    ProxyStream s = new ProxyStream(stub, domain);
    streams.add(s);
    return s;
  }

  static BucketId tenant(String t) {
    return bucket("name", "per_tenant", "tenant", t);
  }

  /** The store's remaining units of the first window of {@code rule}'s {@code key}: a peek over HTTP. */
  long remaining(String rule, String key) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + "/v1/acquire")).header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
        "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\",\"cost\":0}")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body()).get("items").get(0).get("windows").get(0).get("remaining").asLong();
  }

  /** Acquires {@code cost} units over HTTP, as an application would. */
  void acquire(String rule, String key, long cost) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + "/v1/acquire")).header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
        "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\",\"cost\":" + cost + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  /** {@code sluice_rlqs_unmatched_total} as {@code /metrics} shows it. */
  double unmatchedTotal() throws Exception {
    String text = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
        .build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = Pattern.compile("(?m)^sluice_rlqs_unmatched_total(?:\\{[^}]*})? (\\S+)$").matcher(text);
    assertThat(m.find()).as("sluice_rlqs_unmatched_total in /metrics").isTrue();
    return Double.parseDouble(m.group(1));
  }

  /** The only action of a response, for {@code id}. */
  static BucketAction only(RateLimitQuotaResponse r, BucketId id) {
    assertThat(r.getBucketActionCount()).isEqualTo(1);
    BucketAction a = r.getBucketAction(0);
    assertThat(a.getBucketId()).isEqualTo(id);
    return a;
  }

  static TokenBucket tokenBucket(BucketAction a) {
    assertThat(a.hasQuotaAssignmentAction()).as(a.toString()).isTrue();
    RateLimitStrategy s = a.getQuotaAssignmentAction().getRateLimitStrategy();
    assertThat(s.hasTokenBucket()).as(s.toString()).isTrue();
    return s.getTokenBucket();
  }

  static BlanketRule blanket(BucketAction a) {
    assertThat(a.hasQuotaAssignmentAction()).as(a.toString()).isTrue();
    RateLimitStrategy s = a.getQuotaAssignmentAction().getRateLimitStrategy();
    assertThat(s.hasBlanketRule()).as(s.toString()).isTrue();
    return s.getBlanketRule();
  }

  static long millis(com.google.protobuf.Duration d) {
    return d.getSeconds() * 1000 + d.getNanos() / 1_000_000;
  }

  static long nanos(com.google.protobuf.Duration d) {
    return d.getSeconds() * 1_000_000_000L + d.getNanos();
  }

  static long ttlMillis(BucketAction a) {
    return millis(a.getQuotaAssignmentAction().getAssignmentTimeToLive());
  }

  /** Tokens per second once the bucket is spent. */
  static double rate(TokenBucket tb) {
    return tb.getTokensPerFill().getValue() * 1000.0 / millis(tb.getFillInterval());
  }

  /**
   * All an assignment lets the proxy admit until its TTL ends and one fill more: a full bucket,
   * then a fill each interval (docs/scaling.md, §5).
   */
  static long admits(BucketAction a) {
    if (!a.getQuotaAssignmentAction().getRateLimitStrategy().hasTokenBucket()) {
      return 0;
    }
    TokenBucket tb = tokenBucket(a);
    long fill = nanos(tb.getFillInterval());
    long fills = (nanos(a.getQuotaAssignmentAction().getAssignmentTimeToLive()) + fill + fill - 1) / fill;
    return tb.getMaxTokens() + tb.getTokensPerFill().getValue() * fills;
  }

  void advanceMillis(long ms) {
    ticker.advanceMillis(ms);
  }

  /** Rewrites the configuration and reloads it now. */
  void reconfigure(String yaml, long ageMillis) throws Exception {
    Path f = dir.resolve("sluice.yaml");
    Files.writeString(f, yaml);
    Files.setLastModifiedTime(f, FileTime.fromMillis(System.currentTimeMillis() - ageMillis));
    assertThat(reloader.check()).as(String.valueOf(reloader.status().lastError())).isTrue();
  }

  static Status.Code code(Status s) {
    return s.getCode();
  }

  static RateLimitQuotaUsageReports.Builder reports(String domain) {
    return RateLimitQuotaUsageReports.newBuilder().setDomain(domain);
  }

  static JsonNode json(String s) throws Exception {
    return JSON.readTree(s);
  }
}
