package dev.sluice.server.envoy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import dev.sluice.server.cli.ConfigFormat;
import dev.sluice.server.config.InvalidConfigException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Envoy's rate limit configuration ({@code domain:} at the top) as a format of the command line,
 * so that {@code check-config} and {@code replay} read Envoy files as the service does.
 */
public final class EnvoyConfigFormat implements ConfigFormat {

  @Override
  public String topLevelKey() {
    return "domain";
  }

  @Override
  public LoadedConfig parse(String source, String fileName) throws ConfigException {
    EnvoyDomain d;
    try {
      d = EnvoyConfigParser.parse(fileName, source);
    } catch (InvalidConfigException e) {
      ConfigLocation at = e.file() == null ? ConfigLocation.of(fileName)
          : e.line() == 0 ? ConfigLocation.of(e.file()) : new ConfigLocation(e.file(), e.line(), e.column());
      throw new ConfigException(ConfigProblem.at(at, e.detail()));
    }
    Map<String, ConfigLocation> origins = new LinkedHashMap<>();
    for (Rule r : d.rules()) {
      int[] o = d.origin(r.name());
      origins.put(r.name(), o == null ? ConfigLocation.of(fileName) : new ConfigLocation(fileName, o[0], o[1]));
    }
    return new LoadedConfig(RuleSet.of(d.rules()), List.of(), origins);
  }
}
