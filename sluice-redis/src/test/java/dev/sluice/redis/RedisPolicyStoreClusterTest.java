package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Policy records on a Cluster of three masters: all on the shard of one slot. */
class RedisPolicyStoreClusterTest extends RedisPolicyStoreTestBase {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  Object commandFor(String key, String... args) {
    return redis.get().commandOn(redis.get().masterPortForSlot(slot(key)), args);
  }

  private static int slot(String key) {
    return SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void everyPolicyKeyLandsInOneSlot() {
    List<String> keys = new ArrayList<>(policies.recordKeyNames());
    keys.add(policies.denialKey("auth.createToken", 29_000_000));
    keys.add(policies.denialKey("r", 0));
    assertThat(keys).hasSize(14);
    assertThat(keys).allSatisfy(k -> assertThat(k).startsWith(prefix + "{policies}:"));
    assertThat(keys.stream().map(RedisPolicyStoreClusterTest::slot).distinct()).containsExactly(slot("{policies}"));
    // And they are where the records went: on that slot's master.
    join(policies.put(record(dev.sluice.spi.PolicyKind.LIMIT, "r", "k", "tier:free")));
    assertThat(commandFor(prefix + "{policies}:limit", "HLEN", prefix + "{policies}:limit")).isEqualTo(1L);
  }
}
