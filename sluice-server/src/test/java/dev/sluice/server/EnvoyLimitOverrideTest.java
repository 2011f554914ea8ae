package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.sluice.memory.MemoryStore;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Envoy's per-request {@code RateLimitOverride}: a descriptor's own limit, over gRPC on a running service. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EnvoyLimitOverrideTest {
  private Path dir;
  private SluiceService service;
  private RateLimitServiceGrpc.RateLimitServiceBlockingStub envoy;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-override");
    Files.writeString(dir.resolve("envoy.yaml"), """
        domain: edge
        descriptors:
          - key: remote_address
            rate_limit:
              unit: hour
              requests_per_unit: 100
          - key: user
            rate_limit: {unit: hour, requests_per_unit: 100}
            sluice: {algorithm: sliding_log}
        """);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create());
    envoy = new ServiceClient(service.port()).envoy();
  }

  @AfterAll
  void stop() throws Exception {
    service.close();
    Files.deleteIfExists(dir.resolve("envoy.yaml"));
    Files.deleteIfExists(dir);
  }

  private static RateLimitRequest request(String address, RateLimitDescriptor.RateLimitOverride limit) {
    RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder()
        .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("remote_address").setValue(address));
    if (limit != null) {
      d.setLimit(limit);
    }
    return RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(d).build();
  }

  private static RateLimitDescriptor.RateLimitOverride limit(int perUnit, RateLimitUnit unit) {
    return RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(perUnit).setUnit(unit).build();
  }

  @Test
  void aDescriptorsOwnLimitIsTheOneInForceForThatRequestAndItsStatusReportsIt() {
    RateLimitRequest r = request("10.1.1.1", limit(2, RateLimitUnit.MINUTE));
    for (int i = 0; i < 2; i++) {
      RateLimitResponse ok = envoy.shouldRateLimit(r);
      assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
      assertThat(ok.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
      assertThat(ok.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.MINUTE);
      assertThat(ok.getStatuses(0).getLimitRemaining()).isEqualTo(1 - i);
    }
    RateLimitResponse over = envoy.shouldRateLimit(r);
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
  }

  @Test
  void anOverrideTheStoreCannotDecideIsRefusedAsAClientMistakeAndConsumesNothing() {
    // A sliding log of 4,294,967,294 units per month is beyond the store.
    RateLimitDescriptor.RateLimitOverride huge = RateLimitDescriptor.RateLimitOverride.newBuilder()
        .setRequestsPerUnit(-2).setUnit(RateLimitUnit.MONTH).build();
    RateLimitRequest r = RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(RateLimitDescriptor.newBuilder()
        .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("user").setValue("u1")).setLimit(huge)).build();
    StatusRuntimeException refused = catchThrowableOfType(() -> envoy.shouldRateLimit(r), StatusRuntimeException.class);
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(refused.getStatus().getDescription()).contains("sliding_log");
    RateLimitResponse after = envoy.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("edge")
        .addDescriptors(RateLimitDescriptor.newBuilder()
            .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("user").setValue("u1"))).build());
    assertThat(after.getStatuses(0).getLimitRemaining()).isEqualTo(99);
  }

  @Test
  void withoutAnOverrideTheConfiguredLimitApplies() {
    RateLimitResponse ok = envoy.shouldRateLimit(request("10.1.1.2", null));
    assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
    assertThat(ok.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(100);
    assertThat(ok.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.HOUR);
  }

  @Test
  void anOverrideWithAnUnknownUnitOrNoRequestsIsRefusedNamingItAndConsumesNothing() {
    StatusRuntimeException unknown = catchThrowableOfType(
        () -> envoy.shouldRateLimit(request("10.1.1.3", limit(5, RateLimitUnit.UNKNOWN))),
        StatusRuntimeException.class);
    assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(unknown.getStatus().getDescription()).contains("limit of descriptor 0").contains("UNKNOWN");

    StatusRuntimeException zero = catchThrowableOfType(
        () -> envoy.shouldRateLimit(request("10.1.1.3", limit(0, RateLimitUnit.SECOND))),
        StatusRuntimeException.class);
    assertThat(zero.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(zero.getStatus().getDescription()).contains("limit of descriptor 0").contains("requests_per_unit");

    RateLimitDescriptor.RateLimitOverride unrecognized = RateLimitDescriptor.RateLimitOverride.newBuilder()
        .setRequestsPerUnit(5).setUnitValue(99).build();
    StatusRuntimeException bad = catchThrowableOfType(
        () -> envoy.shouldRateLimit(request("10.1.1.3", unrecognized)), StatusRuntimeException.class);
    assertThat(bad.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(bad.getStatus().getDescription()).contains("99");

    RateLimitResponse after = envoy.shouldRateLimit(request("10.1.1.3", null));
    assertThat(after.getStatuses(0).getLimitRemaining()).isEqualTo(99);
  }
}
