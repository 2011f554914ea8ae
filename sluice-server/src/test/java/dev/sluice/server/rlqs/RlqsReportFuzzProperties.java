package dev.sluice.server.rlqs;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.testing.FuzzCases;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.grpc.Status;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random usage reports — known, empty and unknown domains; no usages or many; bucket maps empty,
 * oversized, with empty names or values, matching a mapping or not; any elapsed time and any
 * uint64 counts — are answered with an action per bucket or end the stream with
 * {@code INVALID_ARGUMENT} or {@code NOT_FOUND} in the service's own words: never {@code INTERNAL}
 * or {@code UNKNOWN}, never a library's class name.
 */
@AddLifecycleHook(FuzzCases.class)
class RlqsReportFuzzProperties {
  private static Path dir;
  private static RateLimiter limiter;
  private static ConfigReloader reloader;
  private static SluiceServer server;
  private static RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub;

  @BeforeContainer
  static void start() throws Exception {
    dir = Files.createTempDirectory("sluice-rlqs-fuzz");
    Files.writeString(dir.resolve("sluice.yaml"), AbstractRlqsTest.CONFIG);
    MemoryStore store = MemoryStore.builder().build();
    limiter = Sluice.builder().store(store).build();
    reloader = new ConfigReloader(dir, limiter, (ok, c, e) -> { }, Clock.systemUTC());
    server = SluiceServer.builder().limiter(limiter).store(store).config(reloader)
        .prometheus(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).port(0)
        .drainTimeout(java.time.Duration.ofSeconds(1)).build().start();
    stub = GrpcClients.builder("http://127.0.0.1:" + server.port())
        .build(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub.class);
  }

  @AfterContainer
  static void stop() throws Exception {
    server.close();
    reloader.close();
    limiter.close();
    Files.deleteIfExists(dir.resolve("sluice.yaml"));
    Files.deleteIfExists(dir);
  }

  @Property
  @FuzzCases.Share(100)
  void aRandomReportIsAnsweredOrRefusedPlainly(@ForAll("reports") RateLimitQuotaUsageReports report)
      throws Exception {
    try (ProxyStream p = new ProxyStream(stub, report.getDomain())) {
      p.send(report);
      // Half-closed, as a proxy going away: the report is still answered, then the stream ends.
      p.close();
      // Either an answer (one action per bucket) or the stream's end in error.
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (System.nanoTime() < deadline) {
        boolean ended = p.isEnded();
        var r = p.poll();
        if (r != null) {
          assertThat(r.getBucketActionCount()).isEqualTo(report.getBucketQuotaUsagesCount());
          return;
        }
        if (ended) {
          // Ended before anything was answered: only a refusal in the service's own words.
          Status s = p.end();
          assertThat(s.getCode()).as(String.valueOf(s)).isIn(Status.Code.INVALID_ARGUMENT, Status.Code.NOT_FOUND);
          assertThat(s.getDescription()).isNotBlank().doesNotContain("com.", "io.", "java.", "Exception");
          return;
        }
        Thread.sleep(1);
      }
      throw new AssertionError("neither an answer nor an end within 30 s: " + report);
    }
  }

  @Provide
  Arbitrary<RateLimitQuotaUsageReports> reports() {
    return Arbitraries.randomValue(RlqsReportFuzzProperties::report);
  }

  static RateLimitQuotaUsageReports report(Random r) {
    RateLimitQuotaUsageReports.Builder b = RateLimitQuotaUsageReports.newBuilder();
    b.setDomain(switch (r.nextInt(6)) {
      case 0 -> "";
      case 1 -> text(r, 20);
      default -> "edge";
    });
    int n = r.nextInt(20) == 0 ? 0 : r.nextInt(20) == 0 ? 50 + r.nextInt(100) : 1 + r.nextInt(4);
    for (int i = 0; i < n; i++) {
      BucketQuotaUsage.Builder u = BucketQuotaUsage.newBuilder();
      if (r.nextInt(30) != 0) {
        u.setBucketId(bucket(r));
      }
      if (r.nextInt(30) != 0) {
        u.setTimeElapsed(Duration.newBuilder().setSeconds(r.nextInt(10) == 0 ? r.nextLong() : r.nextInt(3))
            .setNanos(r.nextInt(10) == 0 ? -r.nextInt(1_000_000_000) : r.nextInt(1_000_000_000)));
      }
      u.setNumRequestsAllowed(count(r)).setNumRequestsDenied(count(r));
      b.addBucketQuotaUsages(u);
    }
    return b.build();
  }

  private static BucketId bucket(Random r) {
    BucketId.Builder b = BucketId.newBuilder();
    switch (r.nextInt(4)) {
      case 0 -> b.putBucket("name", "per_tenant").putBucket("tenant", text(r, 12));
      case 1 -> b.putBucket("name", r.nextBoolean() ? "small" : "scarce").putBucket("id", text(r, 8));
      default -> {
        int pairs = r.nextInt(10) == 0 ? r.nextInt(30) : r.nextInt(4);
        for (int i = 0; i < pairs; i++) {
          b.putBucket(text(r, r.nextInt(20) == 0 ? 900 : 10), text(r, r.nextInt(20) == 0 ? 900 : 10));
        }
      }
    }
    return b.build();
  }

  private static long count(Random r) {
    return switch (r.nextInt(5)) {
      case 0 -> -1L - r.nextInt(3);
      case 1 -> r.nextLong();
      default -> r.nextInt(1000);
    };
  }

  private static String text(Random r, int max) {
    int len = r.nextInt(max + 1);
    StringBuilder s = new StringBuilder(len);
    for (int i = 0; i < len; i++) {
      int c = r.nextInt(8) == 0 ? 0x80 + r.nextInt(0x2000) : 'a' + r.nextInt(26);
      s.append((char) c);
    }
    return s.toString();
  }
}
