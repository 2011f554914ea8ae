package dev.sluice.server;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/** docs/policies.md's worked example on a real Redis server (started on a free port by the test kit). */
class RedisWorkedExampleTest extends AbstractWorkedExampleTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  String store() {
    return redis.get().uri();
  }
}
