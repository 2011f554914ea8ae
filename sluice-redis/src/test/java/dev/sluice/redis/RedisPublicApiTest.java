package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.testing.ApiLeaks;
import dev.sluice.testing.ApiLeaks.CompiledModule;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleDescriptor.Requires;
import org.junit.jupiter.api.Test;

/**
 * The Redis store's API is {@code dev.sluice.redis} alone, and none of its signatures names an
 * internal type, of this module or of the core (Lettuce's types are API: the builder takes the
 * application's client).
 */
class RedisPublicApiTest {
  private static final CompiledModule REDIS = ApiLeaks.moduleOf(RedisStore.class);
  private static final CompiledModule CORE = ApiLeaks.moduleOf(Sluice.class);

  @Test
  void noExportedSignatureNamesATypeOfAPackageThatIsNotExported() {
    assertThat(ApiLeaks.find(REDIS, CORE)).isEmpty();
  }

  @Test
  void theApiIsTheStoreAndItsBuilder() {
    assertThat(REDIS.name()).isEqualTo("dev.sluice.redis");
    assertThat(REDIS.descriptor().exports()).map(Exports::toString)
        .containsExactlyInAnyOrder("dev.sluice.redis", "dev.sluice.redis.internal to [dev.sluice.server]");
    assertThat(REDIS.descriptor().requires()).anyMatch(r -> r.name().equals("dev.sluice.core")
        && r.modifiers().contains(Requires.Modifier.TRANSITIVE));
  }
}
