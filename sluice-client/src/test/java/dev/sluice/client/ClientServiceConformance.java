package dev.sluice.client;

import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.conformance.WindowChangeConformanceTest;
import dev.sluice.spi.Store;
import org.junit.jupiter.api.AfterEach;

/**
 * The core conformance suite through {@link SluiceClient} against a service, whose store the
 * subclass gives (through {@link #harness}): each test's rules are written into the service's
 * configuration, the client reads them from the service, and every request goes over HTTP with
 * its explicit time (the service trusts request times here). The window-change tests hand the
 * store windows of their own, which a service deciding by its own rules does not take: they
 * report an assumption.
 *
 * <p>Each conformance class extends a suite of its own, so the client's hooks are written once
 * per class; each is a call to the harness. The subclasses declare the {@code @Nested} classes,
 * empty, so that each runs and reports under its own name.
 */
abstract class ClientServiceConformance {

  /** A harness for the tests of one conformance class instance, on the subclass's service. */
  abstract ClientHarness harness();

  abstract class AlgorithmTraces extends AlgorithmTracesConformanceTest {
    private final ClientHarness client = harness();

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

  abstract class KeysAndRules extends KeysAndRulesConformanceTest {
    private final ClientHarness client = harness();

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

  abstract class Transactions extends TransactionConformanceTest {
    private final ClientHarness client = harness();

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

  abstract class WindowChanges extends WindowChangeConformanceTest {
    // Every test here is skipped by the suite's assumption before it uses the store, so none
    // starts a service: the store's address has nothing behind it.
    @Override
    protected Store newStore() {
      return ClientHarness.storeOfNoService();
    }

    @Override
    protected boolean decidesGivenWindows() {
      return false;
    }
  }
}
