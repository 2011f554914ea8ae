package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.cli.Main;
import dev.sluice.testing.ApiLeaks;
import dev.sluice.testing.ApiLeaks.CompiledModule;
import java.lang.module.ModuleDescriptor.Opens;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The service is an application: its module exports no package, so nothing of it is an API to
 * keep; the packages it needs of the library's internals are exported to it by name.
 */
class ServerModuleTest {
  private static final CompiledModule SERVER = ApiLeaks.moduleOf(Main.class);

  @Test
  void theServiceExportsNothing() {
    assertThat(SERVER.name()).isEqualTo("dev.sluice.server");
    assertThat(SERVER.descriptor().exports()).isEmpty();
    assertThat(ApiLeaks.find(SERVER, ApiLeaks.moduleOf(Sluice.class), ApiLeaks.moduleOf(RedisStore.class))).isEmpty();
  }

  @Test
  void theInternalsItUsesAreExportedToItByName() {
    assertThat(ApiLeaks.moduleOf(Sluice.class).descriptor().exports())
        .anyMatch(e -> e.source().equals("dev.sluice.config.yaml") && e.targets().equals(Set.of(SERVER.name())));
    assertThat(ApiLeaks.moduleOf(RedisStore.class).descriptor().exports())
        .anyMatch(e -> e.source().equals("dev.sluice.redis.internal") && e.targets().equals(Set.of(SERVER.name())));
  }

  /** picocli sets the commands' options by reflection, which a module must allow. */
  @Test
  void picocliMaySetTheCommandsOptions() {
    assertThat(SERVER.descriptor().opens()).map(Opens::toString).containsExactly("dev.sluice.server.cli to [info.picocli]");
  }
}
