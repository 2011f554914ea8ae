package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.Endpoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Rendezvous hashing: keys spread over every endpoint, and an endpoint leaving moves only its own keys. */
class RendezvousStrategyTest {
  private static final List<Endpoint> FIVE = List.of(Endpoint.of("10.0.0.1", 8080), Endpoint.of("10.0.0.2", 8080),
      Endpoint.of("10.0.0.3", 8080), Endpoint.of("10.0.0.4", 8080), Endpoint.of("10.0.0.5", 8080));

  @Test
  void removingAnyEndpointMovesOnlyItsKeysAndBringingItBackReturnsThem() {
    Map<String, Endpoint> owner = new HashMap<>();
    Map<Endpoint, Integer> counts = new HashMap<>();
    for (int k = 0; k < 10_000; k++) {
      Endpoint e = RendezvousStrategy.pick(FIVE, "user:" + k);
      owner.put("user:" + k, e);
      counts.merge(e, 1, Integer::sum);
    }
    // 2,000 each on average; far from 0 and from all.
    assertThat(counts.values()).hasSize(5).allSatisfy(n -> assertThat(n).isBetween(1_700, 2_300));
    for (Endpoint leaving : FIVE) {
      List<Endpoint> rest = new ArrayList<>(FIVE);
      rest.remove(leaving);
      for (Map.Entry<String, Endpoint> e : owner.entrySet()) {
        Endpoint now = RendezvousStrategy.pick(rest, e.getKey());
        if (e.getValue().equals(leaving)) {
          assertThat(now).isNotEqualTo(leaving);
        } else {
          assertThat(now).as("%s when %s leaves", e.getKey(), leaving).isEqualTo(e.getValue());
        }
      }
    }
  }

  @Test
  void theOrderOfTheEndpointsDoesNotMatter() {
    List<Endpoint> reversed = new ArrayList<>(FIVE);
    java.util.Collections.reverse(reversed);
    for (int k = 0; k < 1_000; k++) {
      assertThat(RendezvousStrategy.pick(reversed, "k" + k)).isEqualTo(RendezvousStrategy.pick(FIVE, "k" + k));
    }
  }

  @Test
  void noEndpointPicksNone() {
    assertThat(RendezvousStrategy.pick(List.of(), "k")).isNull();
  }
}
