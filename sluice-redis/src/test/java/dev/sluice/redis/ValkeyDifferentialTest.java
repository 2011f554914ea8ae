package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

class ValkeyDifferentialTest extends DifferentialTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> valkey = RedisExtension.standalone(Flavor.VALKEY);

  @Override
  String uri() {
    return valkey.get().uri();
  }

  @Override
  void flush() {
    valkey.get().flushAll();
  }
}
