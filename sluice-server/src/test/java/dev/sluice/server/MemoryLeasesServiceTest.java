package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.spi.Store;
import dev.sluice.testing.FlakyStore;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Leases through the service on the memory store, the other instances in the same process. */
class MemoryLeasesServiceTest extends AbstractLeasesServiceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.create();
  }

  @Override
  protected Store sameStateAs(Store serviceStore) {
    // The service closes its store: another instance's closing must not.
    return new FlakyStore(serviceStore).withLeases().shared();
  }

  @Test
  void theLeasesAreAnAdminReadNeedingTheTokenLikeTheOthers() throws Exception {
    try (SluiceService guarded = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withAdminToken("t0ken-77ab").withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create())) {
      ServiceClient c = new ServiceClient(guarded.port());
      HttpResponse<String> without = c.get("/v1/leases?rule=hot");
      assertThat(without.statusCode()).isEqualTo(401);
      assertThat(ServiceClient.json(without).get("error").get("code").asText()).isEqualTo("unauthorized");
      assertThat(without.body()).contains("GET /v1/leases").doesNotContain("t0ken");
      HttpResponse<String> with = c.get("/v1/leases?rule=hot", "authorization", "Bearer t0ken-77ab");
      assertThat(with.statusCode()).as(with.body()).isEqualTo(200);
      assertThat(ServiceClient.json(with).get("keys")).isEmpty();
    }
  }

  @Test
  void aServerNotGivenItsStoreSaysItCannotShowTheBoard() throws Exception {
    try (RateLimiter limiter = Sluice.builder().build()) {
      ConfigReloader config = new ConfigReloader(dir, limiter, (ok, c, error) -> {}, Clock.systemUTC());
      SluiceServer server = SluiceServer.builder().limiter(limiter).config(config)
          .prometheus(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).port(0).build().start();
      try {
        HttpResponse<String> r = new ServiceClient(server.port()).get("/v1/leases?rule=hot");
        assertThat(r.statusCode()).isEqualTo(501);
        assertThat(ServiceClient.json(r).get("error").get("code").asText()).isEqualTo("unsupported");
        assertThat(ServiceClient.json(r).get("error").get("message").asText()).contains("no lease board");
      } finally {
        server.close();
      }
    }
  }
}
