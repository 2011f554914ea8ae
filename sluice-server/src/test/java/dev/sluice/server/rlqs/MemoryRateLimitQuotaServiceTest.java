package dev.sluice.server.rlqs;

import static dev.sluice.server.rlqs.ProxyStream.bucket;
import static dev.sluice.server.rlqs.ProxyStream.usage;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import org.junit.jupiter.api.Test;

/** The Rate Limit Quota Service on the memory store, counting on the fake clock. */
class MemoryRateLimitQuotaServiceTest extends AbstractRateLimitQuotaServiceTest {
  @Override
  protected Store newStore(FakeTicker ticker) {
    return MemoryStore.builder().ticker(ticker).build();
  }

  /**
   * A stream lives as long as its proxy: past the server's request timeout (10 s) and past the
   * bound on a request's bytes (a little over 1 MiB), which a unary call meets in one message.
   * Here on the memory store only: it is the transport's, not the store's.
   */
  @Test
  void aStreamOutlivesTheRequestTimeoutAndItsReportsPassTheBoundOfOneRequest() throws Exception {
    ProxyStream p = stream();
    BucketQuotaUsage[] usages = new BucketQuotaUsage[100];
    for (int i = 0; i < usages.length; i++) {
      usages[i] = usage(bucket("name", "small", "id", "long" + i, "pad", "x".repeat(900)), 0, 1, 1000);
    }
    long sent = 0;
    long start = System.nanoTime();
    while (System.nanoTime() - start < 12_000_000_000L || sent < 1_200_000) {
      advanceMillis(1000);
      RateLimitQuotaResponse r = p.exchange(usages);
      assertThat(r.getBucketActionCount()).isEqualTo(100);
      sent += 100L * usages[0].getSerializedSize();
      Thread.sleep(500);
    }
    assertThat(p.isEnded()).isFalse();
  }
}
