package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The library's failure modes through the client, decided by the client's own engine: the
 * service stopped, the service slower than the client's timeout, and the service answering by
 * its own failure modes (its store out) are all outages, each rule following its
 * {@code failure_mode}, every decision marked degraded.
 */
class ClientFailureModesTest {
  private static final RuleSet RULES = RuleSet.of(
      Rule.builder("open").window(1, Duration.ofHours(1)).failureMode(FailureMode.OPEN).build(),
      Rule.builder("closed").window(1, Duration.ofHours(1)).failureMode(FailureMode.CLOSED).build(),
      Rule.builder("local").window(2, Duration.ofHours(1)).failureMode(FailureMode.LOCAL).build());

  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private SluiceClient client(ServiceUnderTest s, Duration timeout) {
    SluiceClient c = SluiceClient.builder().endpoints(s.address()).storeTimeout(timeout)
        .healthCheckInterval(Duration.ofMillis(100)).build();
    open.add(c);
    return c;
  }

  private static void assertEachRuleFollowsItsFailureMode(SluiceClient client, String key) {
    Decision opened = client.acquire("open", key);
    assertThat(opened.degraded()).isTrue();
    assertThat(opened.allowed()).isTrue();

    Decision closed = client.acquire("closed", key);
    assertThat(closed.degraded()).isTrue();
    assertThat(closed.allowed()).isFalse();
    assertThat(closed.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);

    // The client's in-process fallback holds the whole limit (this client alone): 2, then no more.
    assertThat(client.acquire("local", key).allowed()).isTrue();
    assertThat(client.acquire("local", key).allowed()).isTrue();
    Decision local = client.acquire("local", key);
    assertThat(local.degraded()).isTrue();
    assertThat(local.allowed()).isFalse();
    assertThat(local.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
  }

  @Test
  void aStoppedServiceIsAnOutageDecidedByEachRulesFailureMode() {
    ServiceUnderTest s = ServiceUnderTest.start(MemoryStore.builder().build(), false, Duration.ofMillis(250));
    open.add(s);
    s.putRules(RULES);
    SluiceClient client = client(s, Duration.ofSeconds(1));
    Decision up = client.acquire("open", "k");
    assertThat(up.degraded()).isFalse();
    assertThat(up.allowed()).isTrue();
    assertThat(client.acquire("open", "k").allowed()).as("the service's own limit").isFalse();

    s.close();
    // Once its readiness check fails, no request is sent to it at all. (Sent before, a request to
    // the stopped port fails or times out: an outage all the same.)
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!client.readyInstances().isEmpty() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(client.readyInstances()).isEmpty();
    // Another key: the denial of "k" just now is the client's to answer, service or not.
    assertEachRuleFollowsItsFailureMode(client, "k2");
    assertThat(client.ping().toCompletableFuture().join()).isFalse();
  }

  @Test
  void aServiceSlowerThanTheClientsTimeoutIsAnOutage() {
    StallingStore store = new StallingStore(5_000);
    ServiceUnderTest s = ServiceUnderTest.start(store, false, Duration.ofSeconds(20));
    open.add(s);
    s.putRules(RULES);
    SluiceClient client = client(s, Duration.ofSeconds(1));
    // The service answers in time while its store does (a first request on a loaded machine may
    // not: the connection and the code paths are cold).
    Decision warm = null;
    for (int i = 0; i < 10 && (warm == null || warm.degraded()); i++) {
      warm = client.acquire("open", "warm" + i);
    }
    assertThat(warm.degraded()).isFalse();
    store.stall(true);
    assertEachRuleFollowsItsFailureMode(client, "k2");
  }

  @Test
  void aServiceAnsweringByItsOwnFailureModesIsDegradedOnTheClient() {
    StallingStore store = new StallingStore(1_000);
    ServiceUnderTest s = ServiceUnderTest.start(store, false, Duration.ofMillis(100));
    open.add(s);
    s.putRules(RULES);
    SluiceClient client = client(s, Duration.ofSeconds(5));
    store.stall(true);
    assertEachRuleFollowsItsFailureMode(client, "k");
  }
}
