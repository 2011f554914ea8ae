package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §5: the default key prefix, and a Cluster reached from any one reachable seed. */
class RedisKeyPrefixAndClusterSeedTest {
  @RegisterExtension
  static final RedisExtension<Standalone> standalone = RedisExtension.standalone(Flavor.REDIS);

  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.cluster(Flavor.REDIS);

  private static String unique(String stem) {
    return stem + "." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  }

  private static List<dev.sluice.ItemDecision> take(RedisStore store, Rule rule, String key) {
    return store.decideSync(new Batch(List.of(new ResolvedItem(rule, key, 1, rule.windows())), Request.STORE_CLOCK));
  }

  @Test
  void keysAreNamedSluiceColonRuleAndKeyByDefault() {
    Rule rule = Rule.builder(unique("prefix")).window(1, Duration.ofMinutes(1)).build();
    try (RedisStore store = RedisStore.connect(standalone.get().uri())) {
      take(store, rule, "user:42");
      String name = "sluice:{" + rule.name() + "|user:42}";
      assertThat(store.keyName(rule.name(), "user:42")).isEqualTo(name);
      assertThat(standalone.get().command("EXISTS", name)).isEqualTo(1L);
    }
  }

  @Test
  void oneReachableSeedIsEnoughToUseEveryShard() {
    List<Integer> ports = cluster.get().ports();
    // The first seed refuses connections; the second is one master of three.
    String uri = "redis-cluster://127.0.0.1:1,127.0.0.1:" + ports.get(1);
    Rule rule = Rule.builder(unique("seed")).window(1, Duration.ofMinutes(1)).build();
    try (RedisStore store = RedisStore.connect(uri)) {
      Set<Integer> owners = new HashSet<>();
      for (int i = 0; i < 30; i++) {
        String key = "k" + i;
        int slot = SlotHash.getSlot(store.keyName(rule.name(), key).getBytes(StandardCharsets.UTF_8));
        owners.add(ownerOf(slot));
        assertThat(take(store, rule, key).get(0).allowed()).isTrue();
        assertThat(take(store, rule, key).get(0).allowed()).as("the second unit of %s", key).isFalse();
      }
      assertThat(owners).as("keys on every master").hasSize(3);
    }
  }

  /** The port of the master serving {@code slot}, as CLUSTER SLOTS tells it. */
  private static int ownerOf(int slot) {
    for (Object range : (List<?>) cluster.get().command("CLUSTER", "SLOTS")) {
      List<?> r = (List<?>) range;
      if (slot >= (Long) r.get(0) && slot <= (Long) r.get(1)) {
        return ((Long) ((List<?>) r.get(2)).get(1)).intValue();
      }
    }
    throw new AssertionError("no master serves slot " + slot);
  }
}
