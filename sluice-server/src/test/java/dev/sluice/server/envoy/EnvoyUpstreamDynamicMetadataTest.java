package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The cases of envoyproxy/ratelimit's TestRatelimitToMetadata (its service tests), as requests
 * to the service with {@code --envoy-dynamic-metadata}: upstream hands its function the limits
 * and which descriptors passed; here a configuration makes them so, and the whole
 * {@code dynamic_metadata} of the answer is compared with upstream's expected document.
 */
class EnvoyUpstreamDynamicMetadataTest {
  private static final String CONFIG = """
      domain: quota-domain
      descriptors:
        - key: quota_key
          quota_mode: true
          metadata: {name: service_1}
          rate_limit: {unit: minute, requests_per_unit: 5}
      """;
  private static final String MIXED = """
      domain: mixed-domain
      descriptors:
        - key: regular_key
          metadata: {name: service_1}
          rate_limit: {unit: minute, requests_per_unit: 1}
        - key: quota_key
          quota_mode: true
          metadata: {name: service_2}
          rate_limit: {unit: minute, requests_per_unit: 5}
        - key: another_quota
          quota_mode: true
          metadata: {name: service_3}
          rate_limit: {unit: minute, requests_per_unit: 5}
      """;
  private static final String ADDEND = """
      domain: addend-domain
      descriptors:
        - key: test_key
          quota_mode: true
          rate_limit: {unit: minute, requests_per_unit: 10}
      """;

  private static EnvoyHarness harness(String yaml) throws Exception {
    return EnvoyHarness.yaml(yaml, EnvoyOptions.DEFAULT.withDynamicMetadata(true));
  }

  private static Value str(String s) {
    return Value.newBuilder().setStringValue(s).build();
  }

  private static Value descriptor(String... entries) {
    ListValue.Builder l = ListValue.newBuilder();
    Arrays.stream(entries).map(EnvoyUpstreamDynamicMetadataTest::str).forEach(l::addValues);
    return Value.newBuilder().setStructValue(Struct.newBuilder().putFields("entries",
        Value.newBuilder().setListValue(l).build())).build();
  }

  private static Struct.Builder expected(String domain, Value... descriptors) {
    return Struct.newBuilder().putFields("domain", str(domain)).putFields("descriptors",
        Value.newBuilder().setListValue(ListValue.newBuilder().addAllValues(Arrays.asList(descriptors))).build());
  }

  private static Value named(String name) {
    return Value.newBuilder().setStructValue(Struct.newBuilder().putFields("name", str(name))).build();
  }

  /** "Single descriptor with single entry, no quota violations": no limit, no metadata field. */
  @Test
  void aDescriptorWithoutALimitIsListedAndNoMetadataIsAdded() throws Exception {
    try (EnvoyHarness h = harness(CONFIG)) {
      RateLimitResponse r = h.call("fake-domain", d("key1", "val1"));
      assertThat(r.getDynamicMetadata()).isEqualTo(expected("fake-domain", descriptor("key1=val1")).build());
    }
  }

  /** "Single descriptor with quota mode violation": the passed quota limit's metadata. */
  @Test
  void aPassedQuotaLimitsMetadataIsAdded() throws Exception {
    try (EnvoyHarness h = harness(CONFIG)) {
      RateLimitResponse r = h.call("quota-domain", d("quota_key", "quota_val"));
      assertThat(r.getDynamicMetadata()).isEqualTo(expected("quota-domain", descriptor("quota_key=quota_val"))
          .putFields("metadata", named("service_1")).build());
    }
  }

  /**
   * "Multiple descriptors with mixed quota violations": the regular descriptor is over its limit,
   * the two quotas pass; the first passed limit's metadata wins.
   */
  @Test
  void theFirstPassedLimitsMetadataIsAddedWhenTheFirstDescriptorIsOver() throws Exception {
    try (EnvoyHarness h = harness(MIXED)) {
      h.call("mixed-domain", d("regular_key", "regular_val"));
      RateLimitResponse r = h.call("mixed-domain", d("regular_key", "regular_val"), d("quota_key", "quota_val"),
          d("another_quota", "another_val"));
      assertThat(r.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(r.getDynamicMetadata()).isEqualTo(expected("mixed-domain", descriptor("regular_key=regular_val"),
          descriptor("quota_key=quota_val"), descriptor("another_quota=another_val"))
          .putFields("metadata", named("service_2")).build());
    }
  }

  /** "Request with hits addend": the request's hits_addend, and no metadata from a limit without any. */
  @Test
  void theRequestsHitsAddendIsAdded() throws Exception {
    try (EnvoyHarness h = harness(ADDEND)) {
      RateLimitResponse r = h.call(RateLimitRequest.newBuilder().setDomain("addend-domain").setHitsAddend(5)
          .addDescriptors(d("test_key", "test_val")).build());
      assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(5);
      assertThat(r.getDynamicMetadata()).isEqualTo(expected("addend-domain", descriptor("test_key=test_val"))
          .putFields("hitsAddend", Value.newBuilder().setNumberValue(5).build()).build());
    }
  }
}
