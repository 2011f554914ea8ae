package dev.sluice.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The configuration of docs/policies.md, "The whole set-up, worked through", read from the page
 * itself (its first {@code yaml} block after that heading), so that the tests that walk the example
 * and the text a user follows cannot drift apart.
 */
public final class WorkedExample {
  public static final String HEADING = "## The whole set-up, worked through";

  private WorkedExample() {}

  /** The YAML of the worked example. */
  public static String yaml() {
    String page = read(page());
    int heading = page.indexOf("\n" + HEADING + "\n");
    if (heading < 0) {
      throw new AssertionError("docs/policies.md has no heading '" + HEADING + "'");
    }
    int open = page.indexOf("\n```yaml\n", heading);
    if (open < 0) {
      throw new AssertionError("no ```yaml block after '" + HEADING + "' in docs/policies.md");
    }
    int from = open + "\n```yaml\n".length();
    int close = page.indexOf("\n```", from);
    if (close < 0) {
      throw new AssertionError("the ```yaml block after '" + HEADING + "' in docs/policies.md is not closed");
    }
    return page.substring(from, close + 1);
  }

  /** docs/policies.md of the source tree the tests run in (from a module's directory or the root). */
  static Path page() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path p = dir.resolve("docs").resolve("policies.md");
      if (Files.isRegularFile(p)) {
        return p;
      }
    }
    throw new AssertionError("docs/policies.md not found above " + Path.of("").toAbsolutePath());
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
