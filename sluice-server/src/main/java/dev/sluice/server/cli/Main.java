package dev.sluice.server.cli;

import dev.sluice.server.FatalErrors;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code sluice} command. Exit codes: 0 success; 1 warnings only (check-config); 2 errors in
 * what the user gave (configuration, trace, options); 3 a fatal error of the JVM (out of memory, a
 * dead event loop: {@link FatalErrors}); 69 the store could not be reached; 70 an internal error.
 * The commands on a running service's policies ({@code limits}, {@code bans}, {@code lists},
 * {@code audit}, {@code top}) answer 1 for what was not found and 3 when the service could not be
 * reached or answer ({@link AdminClient}).
 */
@Command(name = "sluice", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
    description = "Transactional multi-window rate limiting.",
    subcommands = {ServeCommand.class, CheckConfigCommand.class, ReplayCommand.class, GenerateTraceCommand.class,
        KeysCommand.class, LimitsCommand.class, BansCommand.class, ListsCommand.class, AuditCommand.class,
        TopCommand.class, LeasesCommand.class, HelpCommand.class})
public final class Main implements Runnable {
  public static final int EXIT_OK = 0;
  public static final int EXIT_WARNINGS = 1;
  public static final int EXIT_ERRORS = 2;
  public static final int EXIT_FATAL = FatalErrors.EXIT_CODE;
  public static final int EXIT_UNAVAILABLE = 69;
  public static final int EXIT_INTERNAL = 70;

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
  }

  public static void main(String[] args) {
    // A process that ran out of memory exits at once rather than linger with its port held.
    FatalErrors.install();
    // Replay writes a line per request: a large buffer, flushed at the end, not per line.
    PrintWriter out = new PrintWriter(new BufferedWriter(
        new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8), 1 << 16));
    PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    int code = commandLine(System.in, out, err, Terminal.stderrIsTerminal()).execute(args);
    out.flush();
    err.flush();
    System.exit(code);
  }

  /** The command line reading {@code in} (for {@code --trace -}) and writing to {@code out}/{@code err}. */
  public static CommandLine commandLine(InputStream in, PrintWriter out, PrintWriter err) {
    return commandLine(in, out, err, false);
  }

  /**
   * As {@link #commandLine(InputStream, PrintWriter, PrintWriter)}; {@code errIsTerminal} says
   * whether {@code err} is a terminal, where progress is one line redrawn in place.
   */
  public static CommandLine commandLine(InputStream in, PrintWriter out, PrintWriter err, boolean errIsTerminal) {
    CommandLine.IFactory defaults = CommandLine.defaultFactory();
    CommandLine cmd = new CommandLine(new Main(), new CommandLine.IFactory() {
      @Override
      public <K> K create(Class<K> type) throws Exception {
        if (type == ReplayCommand.class) {
          return type.cast(new ReplayCommand(in));
        }
        if (type == KeysStatsCommand.class) {
          return type.cast(new KeysStatsCommand(errIsTerminal, System::nanoTime));
        }
        if (type == KeysFixTtlCommand.class) {
          return type.cast(new KeysFixTtlCommand(errIsTerminal, System::nanoTime));
        }
        return defaults.create(type);
      }
    });
    cmd.setOut(out);
    cmd.setErr(err);
    cmd.setExecutionExceptionHandler((e, c, parsed) -> {
      PrintWriter w = c.getErr();
      c.getOut().flush();
      if (e instanceof CliException ce) {
        w.println(ce.getMessage());
        w.flush();
        return ce.exitCode();
      }
      w.println("sluice: internal error: " + e);
      e.printStackTrace(w);
      w.flush();
      return EXIT_INTERNAL;
    });
    return cmd;
  }

  /**
   * {@code sluice --version}: the version the jar's manifest records ({@code
   * Implementation-Version}, else Maven's {@code pom.properties}), and the Java and the system it
   * runs on, which a bug report needs as much.
   */
  static final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
      String version = Main.class.getPackage().getImplementationVersion();
      if (version == null) {
        Properties p = new Properties();
        try (InputStream in = Main.class.getResourceAsStream("/META-INF/maven/dev.sluice/sluice-server/pom.properties")) {
          if (in != null) {
            p.load(in);
          }
        }
        version = p.getProperty("version", "(development build)");
      }
      return new String[] {
          "sluice " + version,
          "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.vendor") + " "
              + System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + ")",
          "OS " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
              + System.getProperty("os.arch")};
    }
  }
}
