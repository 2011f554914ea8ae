package dev.sluice.conformance;

import dev.sluice.testing.SourceTree;
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
    String page = SourceTree.read(page());
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

  /** docs/policies.md of the source tree the tests run in. */
  static Path page() {
    return SourceTree.file("docs/policies.md");
  }
}
