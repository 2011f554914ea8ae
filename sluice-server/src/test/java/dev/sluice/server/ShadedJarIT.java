package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped {@code sluice.jar}, run as operators run it ({@code java -jar sluice.jar serve}). The
 * jar keeps only the classes Sluice's code reaches, the part of Envoy's API the service speaks and
 * the natives of Linux (the shade plugin in sluice-server/pom.xml says what it leaves out). The
 * other tests run on the full classpath and cannot see what the jar lacks, so these run after
 * {@code package}, in {@code verify}.
 */
class ShadedJarIT {
  /** The ceiling the jar is held to: 30 MB. Today's figure is in docs/benchmarks.md. */
  static final long MAX_BYTES = 30_000_000;

  static final String NATIVE = """
      limits:
        - name: auth.createToken
          config:
            - limit: 2
              period: 1h
      """;
  static final String ENVOY = """
      domain: edge
      descriptors:
        - key: remote_address
          rate_limit:
            unit: hour
            requests_per_unit: 1
      """;

  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @TempDir
  Path dir;

  static Path jar() {
    Path jar = Path.of(System.getProperty("sluice.jar", "target/sluice.jar"));
    assertThat(jar).as("the shaded jar; run `./mvnw -pl sluice-server -am verify`").isRegularFile();
    return jar;
  }

  @Test
  void theJarIsAtMostThirtyMegabytes() throws Exception {
    assertThat(Files.size(jar())).as("bytes of %s", jar()).isLessThanOrEqualTo(MAX_BYTES);
  }

  /**
   * The jar merges many modules' classes: a descriptor of one of them would be false for the rest,
   * and would make the jar a module that cannot resolve if someone put it on a module path.
   */
  @Test
  void theJarRunsFromTheClassPathAndHoldsNoModuleDescriptor() throws Exception {
    try (JarFile j = new JarFile(jar().toFile())) {
      assertThat(j.stream().map(JarEntry::getName)).noneMatch(n -> n.endsWith("module-info.class"));
    }
  }

  @Test
  void theJarAnswersHttpEnvoyAndReflectionOnTheMemoryStore() throws Exception {
    try (ServeProcess p = serve("memory")) {
      ServiceClient client = new ServiceClient(p.awaitPort());
      assertDecides(client);
      assertReflectionDescribesTheRateLimitService(client);
      assertCleanLog(p);
    }
  }

  /** Envoy's quota service: its generated classes and the protos they load must be in the jar. */
  @Test
  void theJarAnswersEnvoysQuotaStreams() throws Exception {
    Files.createDirectories(dir.resolve("quota"));
    Files.writeString(dir.resolve("quota/sluice.yaml"), """
        limits:
          - {name: api.global, mode: leased, config: [{limit: 6000, period: 1m}]}
        rlqs:
          - domain: edge
            buckets:
              - {rule: api.global, key: all}
        """);
    try (ServeProcess p = ServeProcess.jar(dir.resolve("quota.log"), jar(), List.of("serve", "--host", "127.0.0.1",
        "--port", "0", "--config", dir.resolve("quota").toString()))) {
      RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub = GrpcClients.builder("http://127.0.0.1:"
          + p.awaitPort()).build(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub.class);
      CompletableFuture<RateLimitQuotaResponse> answer = new CompletableFuture<>();
      StreamObserver<RateLimitQuotaUsageReports> out = stub.streamRateLimitQuotas(new StreamObserver<>() {
        @Override
        public void onNext(RateLimitQuotaResponse r) {
          answer.complete(r);
        }

        @Override
        public void onError(Throwable t) {
          answer.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {}
      });
      out.onNext(RateLimitQuotaUsageReports.newBuilder().setDomain("edge").addBucketQuotaUsages(
          BucketQuotaUsage.newBuilder().setBucketId(BucketId.newBuilder().putBucket("name", "api"))
              .setTimeElapsed(com.google.protobuf.Duration.newBuilder().setSeconds(1)).setNumRequestsDenied(5))
          .build());
      RateLimitQuotaResponse r = answer.get(30, TimeUnit.SECONDS);
      assertThat(r.getBucketAction(0).getQuotaAssignmentAction().getRateLimitStrategy().getTokenBucket()
          .getTokensPerFill().getValue()).isEqualTo(10);
      out.onCompleted();
      assertCleanLog(p);
    }
  }

  @Test
  void theJarDecidesOnRedis() throws Exception {
    try (ServeProcess p = serve(redis.get().uri())) {
      assertDecides(new ServiceClient(p.awaitPort()));
      assertCleanLog(p);
    }
  }

  @Test
  void theToolsRunFromTheJar() throws Exception {
    writeConfig();
    String conf = dir.resolve("conf").toString();
    assertThat(run("check-config", conf)).contains("2 rules");
    assertThat(run("replay", "--config", conf, "--synthetic", "1000", "--keys", "10", "--rate", "100",
        "--summary-only")).contains("\"requests\":1000");
    assertThat(run("keys", "stats", "--store", redis.get().uri())).contains("prefix 'sluice:'");
  }

  /** Runs one command of the jar to its end; returns what it printed. */
  private String run(String... args) throws Exception {
    Path log = Files.createTempFile(dir, "run", ".log");
    try (ServeProcess p = ServeProcess.jar(log, jar(), List.of(args))) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as("%s ended", args[0]).isTrue();
      assertThat(p.process.exitValue()).as("%s exit code; it printed:%n%s", args[0], p.log()).isZero();
      assertCleanOutput(p.log());
      return p.log();
    }
  }

  private ServeProcess serve(String store) throws Exception {
    writeConfig();
    return ServeProcess.jar(dir.resolve("serve.log"), jar(), List.of("serve", "--host", "127.0.0.1", "--port", "0",
        "--config", dir.resolve("conf").toString(), "--store", store));
  }

  private void writeConfig() throws Exception {
    Files.createDirectories(dir.resolve("conf"));
    Files.writeString(dir.resolve("conf/limits.yaml"), NATIVE);
    Files.writeString(dir.resolve("conf/edge.yaml"), ENVOY);
  }

  /** One HTTP acquire, two Envoy calls (the second over the limit of one) and a scrape of the metrics. */
  private static void assertDecides(ServiceClient client) throws Exception {
    HttpResponse<String> http = client.post("/v1/acquire", "{\"rule\":\"auth.createToken\",\"key\":\"ip:10.0.0.1\"}");
    assertThat(http.statusCode()).as(http.body()).isEqualTo(200);
    assertThat(ServiceClient.json(http).get("allowed").asBoolean()).isTrue();

    RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("edge")
        .addDescriptors(RateLimitDescriptor.newBuilder()
            .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("remote_address").setValue("9.9.9.9")))
        .build();
    assertThat(client.envoy().shouldRateLimit(req).getOverallCode()).isEqualTo(Code.OK);
    RateLimitResponse second = client.envoy().shouldRateLimit(req);
    assertThat(second.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(second.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(1);

    HttpResponse<String> metrics = client.get("/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body()).contains("sluice_");
  }

  /**
   * What grpcurl does: list the services, fetch the file that defines the rate limit service with
   * every file it imports, and build descriptors from them. A file the jar lacks fails the call.
   */
  private static void assertReflectionDescribesTheRateLimitService(ServiceClient client) throws Exception {
    ServerReflectionResponse list = reflect(client,
        ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(list.getListServicesResponse().getServiceList()).extracting(ServiceResponse::getName)
        .contains("envoy.service.ratelimit.v3.RateLimitService");

    ServerReflectionResponse files = reflect(client, ServerReflectionRequest.newBuilder()
        .setFileContainingSymbol("envoy.service.ratelimit.v3.RateLimitService").build());
    assertThat(files.hasErrorResponse()).as("%s", files.getErrorResponse()).isFalse();
    Map<String, FileDescriptorProto> protos = new HashMap<>();
    for (ByteString bytes : files.getFileDescriptorResponse().getFileDescriptorProtoList()) {
      FileDescriptorProto proto = FileDescriptorProto.parseFrom(bytes);
      protos.put(proto.getName(), proto);
    }
    assertThat(protos).containsKeys("envoy/service/ratelimit/v3/rls.proto", "envoy/config/core/v3/base.proto",
        "envoy/extensions/common/ratelimit/v3/ratelimit.proto", "validate/validate.proto");
    FileDescriptor rls = build("envoy/service/ratelimit/v3/rls.proto", protos, new HashMap<>());
    assertThat(rls.findServiceByName("RateLimitService").findMethodByName("ShouldRateLimit")).isNotNull();
  }

  private static FileDescriptor build(String name, Map<String, FileDescriptorProto> protos,
      Map<String, FileDescriptor> built) throws Exception {
    FileDescriptor done = built.get(name);
    if (done != null) {
      return done;
    }
    FileDescriptorProto proto = protos.get(name);
    assertThat(proto).as("reflection sent %s, imported by another file", name).isNotNull();
    List<FileDescriptor> deps = new ArrayList<>();
    for (String dep : proto.getDependencyList()) {
      deps.add(build(dep, protos, built));
    }
    FileDescriptor fd = FileDescriptor.buildFrom(proto, deps.toArray(new FileDescriptor[0]));
    built.put(name, fd);
    return fd;
  }

  private static ServerReflectionResponse reflect(ServiceClient client, ServerReflectionRequest request)
      throws Exception {
    var stub = GrpcClients.builder(client.uri("").toString()).build(ServerReflectionGrpc.ServerReflectionStub.class);
    CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> requests = stub.serverReflectionInfo(new StreamObserver<>() {
      @Override
      public void onNext(ServerReflectionResponse r) {
        answer.complete(r);
      }

      @Override
      public void onError(Throwable t) {
        answer.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    requests.onNext(request);
    requests.onCompleted();
    return answer.get(10, TimeUnit.SECONDS);
  }

  /**
   * A class the jar lacks shows in the log even when a fallback hides it from the caller; so does
   * a native transport that did not load (Netty falls back to Java NIO without a word).
   */
  private static void assertCleanLog(ServeProcess p) {
    assertCleanOutput(p.log());
    if (System.getProperty("os.name").equals("Linux")) {
      assertThat(p.log()).contains("useEpoll: true");
    }
  }

  private static void assertCleanOutput(String output) {
    assertThat(output).doesNotContain("NoClassDefFoundError", "ClassNotFoundException", "UnsatisfiedLinkError");
  }
}
