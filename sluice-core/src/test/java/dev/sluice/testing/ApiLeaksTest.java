package dev.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.ApiLeaks.CompiledModule;
import dev.sluice.testing.leaky.LeakyApi;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The check of the API's signatures bites: run on a fixture that leaks, it names every leak. */
class ApiLeaksTest {
  private static final String API = "dev.sluice.testing.leaky";
  private static final String HIDDEN = "dev.sluice.testing.leaky.hidden";
  private static final String WHY = ": package " + HIDDEN + " is not exported by fixture";

  private static List<Class<?>> fixture() throws ClassNotFoundException {
    return List.of(LeakyApi.class, LeakyApi.Nested.class, Class.forName(API + ".NotApi"),
        Class.forName(API + ".LeakyApi$PrivateNested"));
  }

  private static CompiledModule module(ModuleDescriptor.Builder b) {
    return new CompiledModule(b.packages(Set.of(API, HIDDEN)).build(), Path.of("."));
  }

  @Test
  void aLeakingFixtureIsFoundInEveryPlaceASignatureCanNameAType() throws Exception {
    CompiledModule fixture = module(ModuleDescriptor.newModule("fixture").exports(API));

    assertThat(ApiLeaks.find(fixture, fixture())).containsExactlyInAnyOrder(
        API + ".LeakyApi extends " + HIDDEN + ".HiddenBase" + WHY,
        "field " + API + ".LeakyApi.field " + HIDDEN + ".HiddenValue" + WHY,
        "new " + API + ".LeakyApi(…) throws " + HIDDEN + ".HiddenException" + WHY,
        API + ".LeakyApi.returned(…) returns " + HIDDEN + ".HiddenValue" + WHY,
        API + ".LeakyApi.takes(…) takes " + HIDDEN + ".HiddenValue" + WHY,
        API + ".LeakyApi.deepInAGenericArgument(…) returns " + HIDDEN + ".HiddenValue" + WHY,
        API + ".LeakyApi.bound(…) <T extends …> " + HIDDEN + ".HiddenValue" + WHY,
        API + ".LeakyApi$Nested implements " + HIDDEN + ".HiddenValue" + WHY,
        API + ".LeakyApi$Nested.get(…) returns " + HIDDEN + ".HiddenValue" + WHY);
  }

  @Test
  void aPackageExportedOnlyToNamedModulesIsStillInternal() throws Exception {
    CompiledModule fixture = module(ModuleDescriptor.newModule("fixture").exports(API)
        .exports(Set.of(), HIDDEN, Set.of("dev.sluice.server")));

    assertThat(ApiLeaks.find(fixture, fixture())).hasSize(9).allMatch(leak -> leak.endsWith(WHY));
  }

  @Test
  void nothingLeaksOnceTheInternalPackageIsExported() throws Exception {
    CompiledModule fixture = module(ModuleDescriptor.newModule("fixture").exports(API).exports(HIDDEN));

    assertThat(ApiLeaks.find(fixture, fixture())).isEmpty();
  }

  @Test
  void aPackageTheModuleDoesNotExportIsNotApiAtAll() throws Exception {
    CompiledModule fixture = module(ModuleDescriptor.newModule("fixture"));

    assertThat(ApiLeaks.find(fixture, fixture())).isEmpty();
  }
}
