package dev.sluice.server.cli;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.LoadedConfig;

/** The native YAML format ({@code limits:}), read by {@link ConfigLoader}. */
final class NativeFormat implements ConfigFormat {

  @Override
  public String topLevelKey() {
    return ConfigLoader.NATIVE_KEY;
  }

  @Override
  public LoadedConfig parse(String source, String fileName) throws ConfigException {
    return ConfigLoader.parse(source, fileName);
  }
}
