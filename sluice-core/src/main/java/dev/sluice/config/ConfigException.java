package dev.sluice.config;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A configuration that cannot be used, with every problem found (not just the first). Nothing of
 * it was loaded.
 */
public final class ConfigException extends Exception {
  private final List<ConfigProblem> problems;

  /** @throws IllegalArgumentException if {@code problems} is empty */
  public ConfigException(List<ConfigProblem> problems) {
    super(problems.stream().map(ConfigProblem::toString).collect(Collectors.joining("\n")));
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("a ConfigException needs at least one problem");
    }
    this.problems = List.copyOf(problems);
  }

  public ConfigException(ConfigProblem problem) {
    this(List.of(problem));
  }

  /** Every problem found, in file order and, within a file, by line and column. */
  public List<ConfigProblem> problems() {
    return problems;
  }
}
