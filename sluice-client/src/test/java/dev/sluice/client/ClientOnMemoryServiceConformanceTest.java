package dev.sluice.client;

import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.conformance.WindowChangeConformanceTest;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;

/**
 * The core conformance suite through {@link SluiceClient} against a service on the memory store, started
 * once for the class: each test's rules are written into the service's configuration, the client
 * reads them from the service, and every request goes over HTTP with its explicit time (the
 * service trusts request times here). The window-change tests hand the store windows of their
 * own, which a service deciding by its own rules does not take: they report an assumption.
 */
class ClientOnMemoryServiceConformanceTest {
  private static ServiceUnderTest service;

  static synchronized ServiceUnderTest service() {
    if (service == null) {
      service = ServiceUnderTest.start(MemoryStore.builder().build());
    }
    return service;
  }

  @AfterAll
  static synchronized void stop() {
    if (service != null) {
      service.close();
      service = null;
    }
  }

  @Nested
  class AlgorithmTraces extends AlgorithmTracesConformanceTest {
    private final ClientHarness client = new ClientHarness(ClientOnMemoryServiceConformanceTest::service);

    @Override
    protected Store newStore() {
      return client.store();
    }

    @Override
    protected RateLimiter newLimiter(RuleSet rules) {
      return client.limiter(rules);
    }

    @Override
    protected void updateRules(RateLimiter limiter, RuleSet rules) {
      client.updateRules(limiter, rules);
    }

    @AfterEach
    void closeClients() {
      client.closeAll();
    }
  }

  @Nested
  class KeysAndRules extends KeysAndRulesConformanceTest {
    private final ClientHarness client = new ClientHarness(ClientOnMemoryServiceConformanceTest::service);

    @Override
    protected Store newStore() {
      return client.store();
    }

    @Override
    protected RateLimiter newLimiter(RuleSet rules) {
      return client.limiter(rules);
    }

    @Override
    protected void updateRules(RateLimiter limiter, RuleSet rules) {
      client.updateRules(limiter, rules);
    }

    @AfterEach
    void closeClients() {
      client.closeAll();
    }
  }

  @Nested
  class Transactions extends TransactionConformanceTest {
    private final ClientHarness client = new ClientHarness(ClientOnMemoryServiceConformanceTest::service);

    @Override
    protected Store newStore() {
      return client.store();
    }

    @Override
    protected RateLimiter newLimiter(RuleSet rules) {
      return client.limiter(rules);
    }

    @Override
    protected void updateRules(RateLimiter limiter, RuleSet rules) {
      client.updateRules(limiter, rules);
    }

    @AfterEach
    void closeClients() {
      client.closeAll();
    }
  }

  @Nested
  class WindowChanges extends WindowChangeConformanceTest {
    private final ClientHarness client = new ClientHarness(ClientOnMemoryServiceConformanceTest::service);

    @Override
    protected Store newStore() {
      return client.store();
    }

    @Override
    protected boolean decidesGivenWindows() {
      return false;
    }

    @AfterEach
    void closeClients() {
      client.closeAll();
    }
  }
}
