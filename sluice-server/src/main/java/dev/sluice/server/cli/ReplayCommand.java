package dev.sluice.server.cli;

import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.config.ConfigFiles;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.spi.Store;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sluice replay}: decides a recorded or synthetic trace on its own clock. */
@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Decide a trace of requests on the trace's own clock (no sleeping): one JSON line out per "
        + "request, then a summary line.",
        "Trace lines: {\"t\":<ms>,\"rule\":\"…\",\"key\":\"…\",\"cost\":1} or {\"t\":<ms>,\"items\":[{\"rule\","
            + "\"key\",\"cost\"},…]}, t non-decreasing, read as milliseconds since the Unix epoch."})
final class ReplayCommand implements Callable<Integer> {
  private final InputStream stdin;

  @Option(names = "--config", required = true, paramLabel = "PATH",
      description = "configuration file or directory")
  Path config;

  @Option(names = "--store", defaultValue = "memory", paramLabel = "memory|URI",
      description = {"where state lives (default: ${DEFAULT-VALUE}): memory, or redis://[user:password@]host[:port]"
          + "[/db], rediss://…, redis-sentinel://h1:p1,h2:p2[/db]#master, redis-cluster://h1:p1,h2:p2.",
          "On Redis the replay starts from the state already under the sluice: prefix: use a scratch database."})
  String store;

  @Option(names = "--trace", paramLabel = "FILE|-", description = "the trace to replay; - for standard input "
      + "(the default unless --synthetic is given)")
  String trace;

  @Option(names = "--summary-only", description = "print only the summary line")
  boolean summaryOnly;

  @Option(names = "--report", paramLabel = "FILE", description = {"also write a self-contained HTML page: per "
      + "rule and window, the fullest key's use against the limit over the trace's time, denials by window, the "
      + "top denied keys"})
  Path report;

  @Option(names = "--compare", paramLabel = "PATH", description = {"with --report: decide the same trace with "
      + "another configuration file or directory too (on a memory store of its own), and show both side by side: "
      + "what a change of limits would have done"})
  Path compare;

  @Option(names = "--synthetic", paramLabel = "N", description = "replay N synthetic requests instead of a trace "
      + "(Poisson arrivals at --rate over --keys keys; see generate-trace)")
  Long synthetic;

  @Option(names = "--rule", paramLabel = "NAME", description = "synthetic requests: rule to request, repeatable "
      + "(default: every rule of the configuration)")
  List<String> syntheticRules;

  @Mixin
  SyntheticOptions syntheticOptions;

  @Spec
  CommandSpec spec;

  ReplayCommand(InputStream stdin) {
    this.stdin = stdin;
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (synthetic != null && trace != null) {
      throw new CliException("sluice replay: give --trace or --synthetic, not both");
    }
    if (compare != null && report == null) {
      throw new CliException("sluice replay: --compare needs --report FILE: the comparison is drawn there");
    }
    ServiceConfig loaded;
    try {
      loaded = ConfigFiles.load(config);
    } catch (ConfigException e) {
      throw new CliException(e.getMessage());
    }
    for (ConfigProblem w : loaded.warnings()) {
      err.println(w.location() + ": warning: " + w.message());
    }
    err.flush();
    RuleSet rules = loaded.rules();
    RuleSet compareRules = null;
    if (compare != null) {
      try {
        ServiceConfig other = ConfigFiles.load(compare);
        for (ConfigProblem w : other.warnings()) {
          err.println(w.location() + ": warning: " + w.message());
        }
        compareRules = other.rules();
      } catch (ConfigException e) {
        throw new CliException("sluice replay: --compare: " + e.getMessage());
      }
      err.flush();
    }
    ReplayClock clock = new ReplayClock();
    Store s = Stores.open("sluice replay", store, clock);
    RateLimiter built;
    try {
      built = Sluice.builder().rules(rules).store(s).ticker(clock).build();
    } catch (dev.sluice.UnsupportedRuleException e) {
      s.close();
      ConfigLocation at = loaded.origin(e.rule());
      throw new CliException((at != null ? at.toString() : config.toString()) + ": " + e.getMessage());
    }
    MemoryStore compareMemory = compareRules == null ? null : MemoryStore.builder().ticker(clock).build();
    try (RateLimiter limiter = built;
        RateLimiter other = compareRules == null ? null
            : Sluice.builder().rules(compareRules).store(compareMemory).ticker(clock).build()) {
      MemoryStore memory = s instanceof MemoryStore m ? m : null;
      String name = synthetic != null ? "synthetic trace" : trace == null || trace.equals("-") ? "<stdin>" : trace;
      Replayer replayer = new Replayer(limiter, memory, clock, out, summaryOnly, rules,
          synthetic != null ? null : name);
      ReplayReport pages = report == null ? null : new ReplayReport(name);
      if (pages != null) {
        replayer.reportTo(pages.side(config.toString(), rules));
        if (other != null) {
          replayer.compareWith(other, compareMemory, pages.side(compare.toString(), compareRules), compare.toString());
        }
      }
      if (synthetic != null) {
        syntheticTrace(rules).forEach(replayer);
      } else {
        try (InputStream in = open(trace)) {
          new TraceReader(name).read(in, replayer);
        } catch (IOException e) {
          throw new CliException("sluice replay: cannot read " + name + ": " + e.getMessage());
        }
      }
      replayer.finish();
      if (pages != null) {
        writeReport(pages);
      }
    } catch (dev.sluice.UnsupportedRuleException e) {
      throw new CliException("sluice replay: --compare " + compare + ": " + e.getMessage());
    }
    return Main.EXIT_OK;
  }

  private void writeReport(ReplayReport pages) {
    try {
      Files.writeString(report, new ReplayReportPage(pages).render(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CliException("sluice replay: --report: cannot write " + report + ": " + e.getMessage());
    }
  }

  private SyntheticTrace syntheticTrace(RuleSet rules) {
    List<String> names = syntheticRules != null ? syntheticRules : rules.rules().stream().map(Rule::name).toList();
    for (String n : names) {
      if (rules.get(n) == null) {
        throw new CliException("sluice replay: --rule: no rule named '" + n + "' in " + config);
      }
    }
    if (names.isEmpty()) {
      throw new CliException("sluice replay: " + config + " has no rules to request");
    }
    return syntheticOptions.trace("sluice replay", "--synthetic", synthetic, names);
  }

  private InputStream open(String file) throws IOException {
    if (file == null || file.equals("-")) {
      // Closing the command's input is not ours to do.
      return new BufferedInputStream(stdin, 1 << 16) {
        @Override
        public void close() {}
      };
    }
    try {
      return Files.newInputStream(Path.of(file));
    } catch (NoSuchFileException e) {
      throw new CliException("sluice replay: --trace: no such file: " + file);
    }
  }
}
