package dev.sluice.server.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether standard error is a terminal, which decides how progress is shown. */
final class Terminal {
  private Terminal() {}

  /**
   * Java 17 can only tell whether standard input and output are a terminal ({@code
   * System.console()}), so on Linux the descriptor of standard error is asked directly.
   */
  static boolean stderrIsTerminal() {
    if ("dumb".equals(System.getenv("TERM"))) {
      return false;
    }
    try {
      String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
      return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return System.console() != null;
    }
  }
}
