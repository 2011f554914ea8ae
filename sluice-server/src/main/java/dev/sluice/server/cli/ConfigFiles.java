package dev.sluice.server.cli;

import dev.sluice.config.ConfigException;
import dev.sluice.config.LoadedConfig;
import dev.sluice.server.config.ServiceConfig;
import java.nio.file.Path;

/**
 * The configuration as a command that needs only its rules and warnings sees it ({@code keys
 * fix-ttl} reads each rule's longest window here), read by the one reader of every command,
 * {@link dev.sluice.server.config.ConfigFiles}.
 */
final class ConfigFiles {
  private ConfigFiles() {}

  static LoadedConfig load(Path path) throws ConfigException {
    ServiceConfig c = dev.sluice.server.config.ConfigFiles.load(path);
    return new LoadedConfig(c.rules(), c.warnings(), c.origins());
  }
}
