package dev.sluice.server.config;

import dev.sluice.Rule;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The native format through the library's loader ({@link ConfigLoader}): every error it finds
 * is reported, each with file, line and column; lint warnings are logged.
 */
public final class NativeConfigFormat implements NativeFormat {
  private static final Logger LOG = LoggerFactory.getLogger(NativeConfigFormat.class);

  @Override
  public List<Rule> parse(String file, String text) throws InvalidConfigException {
    LoadedConfig c;
    try {
      c = ConfigLoader.parse(text, file);
    } catch (ConfigException e) {
      throw new InvalidConfigException(e.getMessage(), e);
    }
    for (ConfigProblem w : c.warnings()) {
      LOG.warn("{}", w);
    }
    return List.copyOf(c.rules().rules());
  }
}
