package dev.sluice.server.cli;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** Runs the {@code sluice} command in process, capturing what it prints. */
public final class Cli {
  /** The repository's examples directory (tests run in the module's directory). */
  static final Path EXAMPLES = Path.of("..", "examples");

  public record Run(int exit, String out, String err) {
    public List<String> outLines() {
      return out.lines().toList();
    }

    public List<String> errLines() {
      return err.lines().toList();
    }

    /** Standard output, then standard error. */
    public String all() {
      return out + err;
    }
  }

  private Cli() {}

  public static Run run(String... args) {
    return runWithInput("", args);
  }

  public static Run runWithInput(String stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Main.commandLine(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
        new PrintWriter(out), new PrintWriter(err)).execute(args);
    return new Run(exit, out.toString(), err.toString());
  }

  static String example(String name) {
    return EXAMPLES.resolve(name).toString();
  }
}
