package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.ApiLeaks;
import dev.sluice.testing.ApiLeaks.CompiledModule;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The library's API is what {@code module-info.java} exports, and nothing it exports names an
 * internal type. When this fails, either make the named type API (export its package, and
 * document it) or keep it out of the signature.
 */
class PublicApiTest {
  private static final CompiledModule CORE = ApiLeaks.moduleOf(Sluice.class);

  @Test
  void noExportedSignatureNamesATypeOfAPackageThatIsNotExported() {
    assertThat(ApiLeaks.find(CORE)).isEmpty();
  }

  @Test
  void theCheckFindsTheEngineNamedByAPublicMethodOfAnExportedPackage() {
    assertThat(ApiLeaks.find(CORE, List.of(LeaksTheEngine.class))).containsExactly(
        "dev.sluice.LeaksTheEngine.engine(…) returns dev.sluice.internal.Engine: "
            + "package dev.sluice.internal is not exported by dev.sluice.core");
  }

  @Test
  void theApiIsTheLimiterItsPoliciesItsHttpExplanationsTheStoreInterfaceTheMemoryStoreAndTheConfigurationLoader() {
    assertThat(CORE.name()).isEqualTo("dev.sluice.core");
    // Targets sorted: a qualified export's set has no order of its own.
    assertThat(CORE.descriptor().exports()).map(e -> e.source() + (e.isQualified() ? " to " + new java.util.TreeSet<>(e.targets()) : ""))
        .containsExactlyInAnyOrder(
        "dev.sluice", "dev.sluice.policy", "dev.sluice.spi", "dev.sluice.memory", "dev.sluice.config", "dev.sluice.config.envoy",
        "dev.sluice.http",
        "dev.sluice.config.yaml to [dev.sluice.server]", "dev.sluice.algorithm to [dev.sluice.redis]",
        "dev.sluice.internal.policy to [dev.sluice.redis]",
        "dev.sluice.internal.log to [dev.sluice.redis, dev.sluice.server]",
        "dev.sluice.internal.lease to [dev.sluice.server]");
    assertThat(CORE.descriptor().packages()).contains("dev.sluice.internal");
  }
}
