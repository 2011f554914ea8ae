package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Three service instances, each on a memory store of its own, so that an instance's state shows
 * which keys it decided: a client routes every key to exactly one of them, and when one stops,
 * its keys move to the other two while every other key stays where it was.
 */
class ThreeInstancesRoutingTest {
  private static final String RULE = "per_key";
  private static final int LIMIT = 10;
  private static final int KEYS = 60;

  private final List<ServiceUnderTest> services = new ArrayList<>();
  private final List<SluiceClient> clients = new ArrayList<>();

  @AfterEach
  void stop() {
    clients.forEach(SluiceClient::close);
    services.forEach(ServiceUnderTest::close);
  }

  private SluiceClient client(String... addresses) {
    SluiceClient c = SluiceClient.builder().endpoints(addresses).storeTimeout(Duration.ofSeconds(5))
        .healthCheckInterval(Duration.ofMillis(100)).build();
    clients.add(c);
    return c;
  }

  /** What instance {@code view} (a client of that instance alone) has consumed of each key. */
  private static Map<String, Long> consumed(SluiceClient view) {
    Map<String, Long> out = new HashMap<>();
    for (int k = 0; k < KEYS; k++) {
      String key = "user:" + k;
      Decision peek = view.acquire(Request.of(RULE, key, 0));
      out.put(key, LIMIT - peek.items().get(0).windows().get(0).remaining());
    }
    return out;
  }

  @Test
  void eachKeyIsDecidedByOneInstanceAndStoppingOneMovesOnlyItsKeys() throws InterruptedException {
    RuleSet rules = RuleSet.of(Rule.builder(RULE).window(LIMIT, Duration.ofHours(1)).build());
    for (int i = 0; i < 3; i++) {
      ServiceUnderTest s = ServiceUnderTest.start(MemoryStore.builder().build(), false, Duration.ofMillis(250));
      s.putRules(rules);
      services.add(s);
    }
    String[] addresses = services.stream().map(ServiceUnderTest::address).toArray(String[]::new);
    SluiceClient client = client(addresses);
    assertThat(client.readyInstances()).containsExactlyInAnyOrder(addresses);
    List<SluiceClient> views = new ArrayList<>();
    for (String a : addresses) {
      views.add(client(a));
    }

    Map<String, String> before = new LinkedHashMap<>();
    for (int k = 0; k < KEYS; k++) {
      String key = "user:" + k;
      for (int n = 0; n < 2; n++) {
        assertThat(client.acquire(RULE, key).allowed()).isTrue();
      }
      before.put(key, client.instanceOf(key));
    }
    List<Map<String, Long>> seen = views.stream().map(ThreeInstancesRoutingTest::consumed).toList();
    for (String key : before.keySet()) {
      List<Long> perInstance = seen.stream().map(m -> m.get(key)).toList();
      int decidedBy = addressIndex(addresses, before.get(key));
      for (int i = 0; i < 3; i++) {
        assertThat(perInstance.get(i)).as("units of %s consumed on instance %d (it belongs to %d)", key, i, decidedBy)
            .isEqualTo(i == decidedBy ? 2L : 0L);
      }
    }
    for (String a : addresses) {
      assertThat(before.values()).as("keys routed to %s", a).contains(a);
    }

    // The second instance stops; once its readiness check fails the client routes without it.
    String gone = addresses[1];
    services.get(1).close();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (client.readyInstances().contains(gone) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(client.readyInstances()).containsExactlyInAnyOrder(addresses[0], addresses[2]);

    int moved = 0;
    for (String key : before.keySet()) {
      Decision d = client.acquire(RULE, key);
      assertThat(d.degraded()).isFalse();
      assertThat(d.allowed()).isTrue();
      String now = client.instanceOf(key);
      if (before.get(key).equals(gone)) {
        moved++;
        assertThat(now).as("new instance of %s", key).isNotEqualTo(gone);
        // A fresh key there: the units it had on the stopped instance are not known elsewhere.
        assertThat(d.items().get(0).windows().get(0).remaining()).isEqualTo(LIMIT - 1);
      } else {
        assertThat(now).as("instance of %s", key).isEqualTo(before.get(key));
        assertThat(d.items().get(0).windows().get(0).remaining()).isEqualTo(LIMIT - 3);
      }
    }
    assertThat(moved).isPositive();
    // The instances left count exactly what was sent to them: nothing of the other's keys.
    for (int i : new int[] {0, 2}) {
      Map<String, Long> after = consumed(views.get(i));
      for (String key : before.keySet()) {
        String owner = before.get(key);
        long expected = owner.equals(addresses[i]) ? 3 : owner.equals(gone) && client.instanceOf(key)
            .equals(addresses[i]) ? 1 : 0;
        assertThat(after.get(key)).as("units of %s on instance %d", key, i).isEqualTo(expected);
      }
    }
  }

  private static int addressIndex(String[] addresses, String a) {
    for (int i = 0; i < addresses.length; i++) {
      if (addresses[i].equals(a)) {
        return i;
      }
    }
    throw new AssertionError("not one of the instances: " + a);
  }
}
