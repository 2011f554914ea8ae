package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.testing.ApiLeaks;
import dev.sluice.testing.ApiLeaks.CompiledModule;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleDescriptor.Requires;
import org.junit.jupiter.api.Test;

/**
 * The client's API is {@code dev.sluice.client} alone (the client, its builder, its outage
 * exception), and none of its signatures names an internal type of the core or a type of
 * Armeria, which stays an implementation detail.
 */
class ClientPublicApiTest {
  private static final CompiledModule CLIENT = ApiLeaks.moduleOf(SluiceClient.class);
  private static final CompiledModule CORE = ApiLeaks.moduleOf(Sluice.class);

  @Test
  void noExportedSignatureNamesATypeOfAPackageThatIsNotExported() {
    assertThat(ApiLeaks.find(CLIENT, CORE)).isEmpty();
  }

  @Test
  void theApiIsTheClientAlone() {
    assertThat(CLIENT.name()).isEqualTo("dev.sluice.client");
    assertThat(CLIENT.descriptor().exports()).map(Exports::toString).containsExactly("dev.sluice.client");
    assertThat(CLIENT.descriptor().requires()).anyMatch(r -> r.name().equals("dev.sluice.core")
        && r.modifiers().contains(Requires.Modifier.TRANSITIVE));
    assertThat(CLIENT.descriptor().requires()).noneMatch(r -> r.name().equals("com.linecorp.armeria")
        && r.modifiers().contains(Requires.Modifier.TRANSITIVE));
  }
}
