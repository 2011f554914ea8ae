package dev.sluice.spring;

import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;

/**
 * {@code sluice.rules} is one string of native YAML. Written as a YAML structure under it
 * instead, Boot would bind nothing to it and the rules would silently be missing; that is
 * refused, naming the first such property.
 */
final class StructuredRules {
  private StructuredRules() {}

  static void refuse(Environment environment) {
    if (!(environment instanceof ConfigurableEnvironment env)) {
      return;
    }
    for (PropertySource<?> source : env.getPropertySources()) {
      if (source instanceof EnumerablePropertySource<?> e) {
        for (String name : e.getPropertyNames()) {
          if (name.startsWith("sluice.rules.") || name.startsWith("sluice.rules[")) {
            throw new SluiceConfigurationException("'" + name + "' (in " + source.getName() + ") is part of a "
                + "structure under sluice.rules, which takes the rules as one string of native YAML",
                "Write the rules as a block string: 'rules: |' followed by the YAML, indented; or put them in a "
                    + "file named by sluice.config.");
          }
        }
      }
    }
  }
}
