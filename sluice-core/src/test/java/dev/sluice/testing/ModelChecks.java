package dev.sluice.testing;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;

/**
 * Lincheck scenarios chosen rather than generated, so that every run checks the same races: each
 * scenario a list of threads, each thread a list of operation names (public no-argument methods
 * of the class under test).
 */
public final class ModelChecks {
  private ModelChecks() {}

  /**
   * Adds each of {@code scenarios} to {@code options}, its operations looked up on {@code subject};
   * {@code after}, if not null, runs once all threads are done (to read what they left).
   */
  public static ModelCheckingOptions withScenarios(ModelCheckingOptions options, Class<?> subject,
      String[][][] scenarios, String after) {
    for (String[][] threads : scenarios) {
      List<List<Actor>> parallel = new ArrayList<>();
      for (String[] ops : threads) {
        List<Actor> thread = new ArrayList<>();
        for (String name : ops) {
          thread.add(new Actor(operation(subject, name), List.of()));
        }
        parallel.add(thread);
      }
      List<Actor> post = after == null ? List.of() : List.of(new Actor(operation(subject, after), List.of()));
      options.addCustomScenario(new ExecutionScenario(List.of(), parallel, post, null));
    }
    return options;
  }

  private static Method operation(Class<?> subject, String name) {
    try {
      return subject.getMethod(name);
    } catch (NoSuchMethodException e) {
      throw new AssertionError(subject.getSimpleName() + " has no operation " + name, e);
    }
  }
}
