package dev.sluice.client;

import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.conformance.WindowChangeConformanceTest;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;
import dev.sluice.spi.Store;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;

/**
 * The core conformance suite through {@link SluiceClient} against a service on Redis 7 standalone, one
 * service per test ({@link ClientHarness#servicePerTest} says why): each test's rules are written
 * into the service's configuration, the client
 * reads them from the service, and every request goes over HTTP with its explicit time (the
 * service trusts request times here). The window-change tests hand the store windows of their
 * own, which a service deciding by its own rules does not take: they report an assumption.
 */
class ClientOnRedisServiceConformanceTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  static ClientHarness harness() {
    return ClientHarness.servicePerTest(() -> RedisStore.connect(redis.get().uri()));
  }

  @Nested
  class AlgorithmTraces extends AlgorithmTracesConformanceTest {
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

  @Nested
  class KeysAndRules extends KeysAndRulesConformanceTest {
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

  @Nested
  class Transactions extends TransactionConformanceTest {
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

  @Nested
  class WindowChanges extends WindowChangeConformanceTest {
    private final ClientHarness client = harness();

    @Override
    protected Store newStore() {
      return ClientHarness.storeOfNoService();
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
