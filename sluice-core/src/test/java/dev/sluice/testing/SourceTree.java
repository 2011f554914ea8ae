package dev.sluice.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The source tree the tests run in, found from a module's directory or the root. */
public final class SourceTree {
  private SourceTree() {}

  /** The nearest directory at or above the working one that holds {@code relative}. */
  public static Path rootHolding(String relative) {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.exists(dir.resolve(relative))) {
        return dir;
      }
    }
    throw new AssertionError(relative + " not found above " + Path.of("").toAbsolutePath());
  }

  /** {@code relative} of the source tree, e.g. {@code docs/policies.md}. */
  public static Path file(String relative) {
    return rootHolding(relative).resolve(relative);
  }

  public static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
