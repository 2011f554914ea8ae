package dev.sluice.spring;

import dev.sluice.config.ConfigException;
import dev.sluice.config.LoadedConfig;
import dev.sluice.config.envoy.EnvoyDomain;
import java.util.Map;

/**
 * The rules an application starts with, read from {@code sluice.rules} and {@code sluice.config},
 * with the Envoy domains of its Envoy files; an error in any of them stops the start, with every
 * problem's file, line and column.
 */
record SluiceRuleSet(RuleSources sources, Map<String, String> texts, LoadedConfig loaded,
    Map<String, EnvoyDomain> domains) {

  static SluiceRuleSet load(SluiceProperties p) {
    RuleSources sources = new RuleSources(p.getRules(), p.getConfig());
    try {
      Map<String, String> texts = sources.read();
      RuleSources.Loaded l = RuleSources.load(texts);
      return new SluiceRuleSet(sources, texts, l.config(), l.domains());
    } catch (ConfigException e) {
      throw new SluiceConfigurationException("the rules do not load:\n" + RuleSources.describe(e),
          "Correct sluice.rules or the files of sluice.config at the places named.", e);
    }
  }
}
