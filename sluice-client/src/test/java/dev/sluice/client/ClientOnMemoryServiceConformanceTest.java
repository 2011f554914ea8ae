package dev.sluice.client;

import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;

/** {@link ClientServiceConformance} on a service over the memory store, started once for the class. */
class ClientOnMemoryServiceConformanceTest extends ClientServiceConformance {
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

  @Override
  ClientHarness harness() {
    return new ClientHarness(ClientOnMemoryServiceConformanceTest::service);
  }

  @Nested
  class AlgorithmTraces extends ClientServiceConformance.AlgorithmTraces {}

  @Nested
  class KeysAndRules extends ClientServiceConformance.KeysAndRules {}

  @Nested
  class Transactions extends ClientServiceConformance.Transactions {}

  @Nested
  class WindowChanges extends ClientServiceConformance.WindowChanges {}
}
