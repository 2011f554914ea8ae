package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Policy records on one Redis server. */
class RedisPolicyStoreStandaloneTest extends RedisPolicyStoreTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  Object commandFor(String key, String... args) {
    return redis.get().command(args);
  }

  /** At the real size: 10,000 records' last changes kept, the oldest dropped first. */
  @Test
  void theLogKeepsTheLastTenThousandRecordsChanged() {
    List<PolicyRecord> records = new ArrayList<>();
    for (int i = 0; i < 10_050; i++) {
      records.add(record(PolicyKind.DENY, "r", "k" + i, ""));
    }
    putAll(policies, records);
    assertThat(redis.get().command("ZCARD", prefix + "{policies}:log")).isEqualTo(10_000L);
    assertThat(join(policies.changesSince(49)).complete()).isFalse();
    PolicyChanges c = join(policies.changesSince(50));
    assertThat(c.complete()).isTrue();
    assertThat(c.changed()).hasSize(1_000);
    assertThat(c.version()).isEqualTo(1_050);
  }
}
