package dev.sluice.client;

import com.linecorp.armeria.client.Endpoint;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DecisionListener;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
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
  private final Supplier<ServiceUnderTest> shared;
  /** Stores for a service of each test's own; null when the tests share one. */
  private final Supplier<Store> perTest;
  private ServiceUnderTest own;
  /** The store given to the suite, closed before the test's own service so that it stops at once. */
  private Store suiteStore;
  private final List<SluiceClient> open = new ArrayList<>();
  /** Store errors the clients heard of: an outage would hide what the suite checks behind a failure mode. */
  private final List<Throwable> outages = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final DecisionListener errors = new DecisionListener() {
    @Override
    public void onStoreError(Request request, Throwable error) {
      if (!(error instanceof IllegalArgumentException)) {
        outages.add(error);
      }
    }
  };

  /** Every test of the class on one service. */
  ClientHarness(Supplier<ServiceUnderTest> service) {
    this.shared = service;
    this.perTest = null;
  }

  private ClientHarness(Supplier<Store> stores, boolean ownService) {
    this.shared = null;
    this.perTest = stores;
  }

  /**
   * Each test on a service of its own over a new store of {@code stores}. The Redis store treats
   * values of a rule put in force (a reload adds each test's rules) as written before it if their
   * time is not after the latest it has seen, explicit times included; the suite's explicit times
   * start again at the same base in every test, so a store that saw a previous test's times would
   * take this test's writes for an earlier definition's.
   */
  static ClientHarness servicePerTest(Supplier<Store> stores) {
    return new ClientHarness(stores, true);
  }

  private ServiceUnderTest service() {
    if (shared != null) {
      return shared.get();
    }
    if (own == null) {
      own = ServiceUnderTest.start(perTest.get());
    }
    return own;
  }

  /** The client's store for the suite's {@code newStore}: what it describes. */
  Store store() {
    suiteStore = new ServiceStore(List.of(Endpoint.parse(service().address())), Duration.ofSeconds(5),
        Duration.ofSeconds(1), null, rule -> {});
    return suiteStore;
  }

  /**
   * A client's store for tests that are skipped before they use it (by an assumption), so that no
   * service is started for them: nothing listens at its address.
   */
  static Store storeOfNoService() {
    return new ServiceStore(List.of(Endpoint.of("127.0.0.1", 9)), Duration.ofSeconds(1), Duration.ofSeconds(1), null,
        rule -> {});
  }

  RateLimiter limiter(RuleSet rules) {
    service().putRules(rules);
    // A store timeout far above a loaded machine's pauses: the suite checks decisions, not outages.
    SluiceClient c = SluiceClient.builder().endpoints(service().address()).storeTimeout(Duration.ofSeconds(5))
        .healthCheckInterval(Duration.ofMillis(200)).listener(errors).build();
    open.add(c);
    return c;
  }

  void updateRules(RateLimiter limiter, RuleSet rules) {
    service().putRules(rules);
    ((SluiceClient) limiter).refreshRules();
  }

  /** Closes the test's clients; fails if any decision was an outage rather than the service's. */
  void closeAll() {
    for (SluiceClient c : open) {
      c.close();
    }
    open.clear();
    if (own != null) {
      // Closed again by the suite after the test, which does nothing more.
      suiteStore.close();
      own.close();
      own = null;
    }
    List<Throwable> seen = List.copyOf(outages);
    outages.clear();
    assertThat(seen).as("store errors: the service did not decide these requests").isEmpty();
  }
}
