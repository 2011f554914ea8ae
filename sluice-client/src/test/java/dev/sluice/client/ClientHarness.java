package dev.sluice.client;

import com.linecorp.armeria.client.Endpoint;
import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What the conformance suite needs of the client for one test class: its rules put in force on
 * the service (the client reads them from there), a client built for them, closed after the test.
 */
final class ClientHarness {
  private final Supplier<ServiceUnderTest> service;
  private final List<SluiceClient> open = new ArrayList<>();

  ClientHarness(Supplier<ServiceUnderTest> service) {
    this.service = service;
  }

  /** The client's store for the suite's {@code newStore}: what it describes. */
  Store store() {
    return new ServiceStore(List.of(Endpoint.parse(service.get().address())), Duration.ofSeconds(5),
        Duration.ofSeconds(1), null, rule -> {});
  }

  RateLimiter limiter(RuleSet rules) {
    service.get().putRules(rules);
    // A store timeout far above a loaded machine's pauses: the suite checks decisions, not outages.
    SluiceClient c = SluiceClient.builder().endpoints(service.get().address()).storeTimeout(Duration.ofSeconds(5))
        .healthCheckInterval(Duration.ofMillis(200)).build();
    open.add(c);
    return c;
  }

  void updateRules(RateLimiter limiter, RuleSet rules) {
    service.get().putRules(rules);
    ((SluiceClient) limiter).refreshRules();
  }

  void closeAll() {
    for (SluiceClient c : open) {
      c.close();
    }
    open.clear();
  }
}
