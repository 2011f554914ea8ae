package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lease board on a Cluster of three masters: all on the shard of one slot, not the policies'. */
class RedisLeaseBoardClusterTest extends RedisLeaseBoardTestBase {
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
  void everyLeaseKeyLandsInOneSlotApartFromThePolicies() {
    assertThat(board(1).keyNames()).hasSize(6)
        .allSatisfy(k -> assertThat(slot(k)).isEqualTo(slot("{leases}")));
    assertThat(slot("{leases}")).isNotEqualTo(slot("{policies}"));
    join(board().report("x", bytes("r"), LONG));
    assertThat(commandFor(prefix + "{leases}:reports", "HLEN", prefix + "{leases}:reports")).isEqualTo(1L);
  }
}
