package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblem;
import dev.sluice.server.config.ConfigFiles;
import dev.sluice.server.config.ServiceConfig;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice keys fix-ttl}: gives a TTL to the store's keys that have none. */
@Command(name = "fix-ttl", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Give a TTL to every key under --prefix that has none. A key of a rule in --config gets the "
        + "longest TTL a write of that rule sets (its longest window; a sliding window adds a bucket, a leaky bucket "
        + "its max_wait) plus 1 s; any other key of the store's naming gets --ttl. Keys under the prefix not named as the store names keys "
        + "are never changed, nor are bans, audit lists and refund markers beside a key's state (<key>:ban, <key>:audit, <key>:refund:<id>), nor keys "
        + "outside the prefix, nor keys that already have a TTL.",
        "Give --config, --ttl or both."})
final class KeysFixTtlCommand extends KeyspaceCommand {
  /** The store's default TTL slack: a TTL given here is the one a write would have set. */
  static final long SLACK_MILLIS = 1000;
  /** Stands for a ban or audit key among the rules of a batch's keys. */
  private static final String POLICY = "(policy)";

  /**
   * Sets the TTL only if the key still has none, in one step: a TTL the store sets meanwhile (a
   * decision writing the key) is never replaced, and a key deleted meanwhile is not recreated.
   */
  private static final byte[] EXPIRE_IF_PERSISTENT = ("if redis.call('PTTL', KEYS[1]) == -1 then\n"
      + "  return redis.call('PEXPIRE', KEYS[1], ARGV[1])\n"
      + "end\n"
      + "return 0\n").getBytes(StandardCharsets.UTF_8);

  @Option(names = "--config", paramLabel = "PATH", description = "the rules (a file or directory) that set each "
      + "rule's TTL")
  Path config;

  @Option(names = "--ttl", paramLabel = "DURATION", converter = TtlConverter.class,
      description = "the TTL for keys of rules not in --config (all keys without --config): 90s, 10m, 1h30m, 1d, "
          + "PT1H, or a number of seconds")
  Duration ttl;

  @Option(names = "--dry-run", description = "count the keys that would be fixed; change nothing")
  boolean dryRun;

  private RuleSet rules = RuleSet.empty();
  private final Map<String, Long> ttlByRule = new HashMap<>();
  private final Map<String, long[]> fixed = new TreeMap<>();
  private final Map<String, long[]> leftAlone = new TreeMap<>();
  private long otherWithoutTtl;
  private long policyWithoutTtl;
  private long fixedTotal;

  KeysFixTtlCommand(boolean errIsTerminal, LongSupplier nanoClock) {
    super(errIsTerminal, nanoClock);
  }

  KeysFixTtlCommand() {
    this(false, System::nanoTime);
  }

  @Override
  String commandName() {
    return "sluice keys fix-ttl";
  }

  @Override
  void validate() {
    if (config == null && ttl == null) {
      throw fail("give --config (each rule's longest window), --ttl DURATION, or both");
    }
    if (config != null) {
      ServiceConfig loaded;
      try {
        loaded = ConfigFiles.load(config);
      } catch (ConfigException e) {
        throw new CliException(e.getMessage());
      }
      PrintWriter err = spec.commandLine().getErr();
      for (ConfigProblem w : loaded.warnings()) {
        err.println(w.location() + ": warning: " + w.message());
      }
      err.flush();
      rules = loaded.rules();
    }
  }

  /** The TTL of a rule's keys in ms, or null to leave them alone. */
  private Long ttlOf(String rule) {
    long ms = ttlByRule.computeIfAbsent(rule, name -> {
      Rule r = rules.get(name);
      return r != null ? ruleTtlMillis(r) : ttl != null ? ttl.toMillis() : -1L;
    });
    return ms < 0 ? null : ms;
  }

  /**
   * The TTL a write of this rule's state would set at most (see "TTLs" in docs/redis.md): the
   * longest time its state can still matter after a write, over every window, overrides
   * included, rounded up to ms, plus the store's default slack. A key without a TTL was last
   * written in the past, so its state matters for no longer than this from now.
   */
  static long ruleTtlMillis(Rule r) {
    long micros = 0;
    for (Window w : r.windows()) {
      micros = Math.max(micros, mattersMicros(r, w));
    }
    for (KeyOverride o : r.overrides()) {
      for (Window w : o.windows()) {
        micros = Math.max(micros, mattersMicros(r, w));
      }
    }
    return (micros + 999) / 1000 + SLACK_MILLIS;
  }

  /** How long after a write one window's state can matter, as the store's scripts compute it. */
  private static long mattersMicros(Rule r, Window w) {
    long period = w.periodMicros();
    long limit = w.limit();
    // Token and leaky buckets: the emission interval as the store rounds it; a full bucket is L of them.
    long interval = Math.max(1, (period + limit - 1) / limit);
    return switch (r.algorithm()) {
      case SLIDING_WINDOW -> {
        long width = Math.max(1, (period + r.precision() - 1) / r.precision());
        long buckets = (period + width - 1) / width;
        // The newest bucket still counts until the window has slid past it.
        yield (buckets + 1) * width;
      }
      case TOKEN_BUCKET -> Math.max(period, limit * interval);
      // A request may wait up to max_wait for its slot, then holds the bucket for up to L intervals.
      // The default max_wait is the longest period of the key's windows: at most the rule's longest.
      case LEAKY_BUCKET -> Math.max(period, (r.hasExplicitMaxWait() ? r.maxWait().toNanos() / 1000
          : r.longestPeriodMicros()) + limit * interval);
      default -> period;
    };
  }

  @Override
  int scan(Keyspace keyspace, KeyLayout layout, KeyScanner scanner, Progress progress, PrintWriter out) {
    String verb = dryRun ? "would fix" : "fixed";
    long seen = scanner.run((node, keys) -> batch(node, layout, keys),
        () -> String.format(Locale.ROOT, "%,d %s", fixedTotal, verb));
    progress.finish(scanner.summary(String.format(Locale.ROOT, "%,d %s", fixedTotal, verb)));
    if (options.json) {
      json(out, keyspace, layout, seen);
    } else {
      text(out, keyspace, layout, seen);
    }
    return Main.EXIT_OK;
  }

  private void batch(Keyspace.Node node, KeyLayout layout, List<byte[]> keys) {
    List<String> ruleOf = new ArrayList<>(keys.size());
    List<RedisFuture<Long>> replies = new ArrayList<>(keys.size());
    RedisAsyncCommands<byte[], byte[]> commands = node.commands();
    node.pipeline(() -> {
      for (byte[] k : keys) {
        String rule = layout.ruleOf(k);
        // A policy key (a ban or audit list beside a state, a record, a heartbeat) is not state: its
        // TTL is not the rule's, or it has none by design; it is never changed here.
        Long ms = rule == null ? null : ttlOf(rule);
        ruleOf.add(rule == null && layout.isPolicy(k) ? POLICY : rule);
        if (ms == null || dryRun) {
          replies.add(commands.pttl(k));
        } else {
          replies.add(commands.eval(EXPIRE_IF_PERSISTENT, ScriptOutputType.INTEGER, new byte[][] {k},
              String.valueOf(ms).getBytes(StandardCharsets.US_ASCII)));
        }
      }
    });
    List<Long> reply = KeyScanner.awaitAll(replies);
    for (int i = 0; i < keys.size(); i++) {
      String rule = ruleOf.get(i);
      if (POLICY.equals(rule)) {
        policyWithoutTtl += reply.get(i) == -1 ? 1 : 0;
        continue;
      }
      Long ms = rule == null ? null : ttlOf(rule);
      boolean lacksTtl = ms == null || dryRun ? reply.get(i) == -1 : reply.get(i) == 1;
      if (!lacksTtl) {
        continue;
      }
      if (rule == null) {
        otherWithoutTtl++;
      } else if (ms == null) {
        leftAlone.computeIfAbsent(rule, r -> new long[1])[0]++;
      } else {
        fixed.computeIfAbsent(rule, r -> new long[1])[0]++;
        fixedTotal++;
      }
    }
  }

  private void text(PrintWriter out, Keyspace keyspace, KeyLayout layout, long seen) {
    long left = otherWithoutTtl + policyWithoutTtl + leftAlone.values().stream().mapToLong(c -> c[0]).sum();
    out.printf(Locale.ROOT, "%s, prefix '%s': %,d keys on %s; %,d without a TTL%n", keyspace.description(),
        layout.prefix(), seen, nodes(keyspace.nodes().size()), fixedTotal + left);
    out.printf(Locale.ROOT, "%s %,d key%s%s%n", dryRun ? "would fix" : "fixed", fixedTotal, fixedTotal == 1 ? "" : "s",
        dryRun ? " (dry run: nothing changed)" : "");
    int width = (policyWithoutTtl > 0 ? KeysStatsCommand.POLICY : KeysStatsCommand.OTHER).length();
    for (String r : fixed.keySet()) {
      width = Math.max(width, r.length());
    }
    for (String r : leftAlone.keySet()) {
      width = Math.max(width, r.length());
    }
    String format = "  %-" + width + "s  %12s  %s%n";
    for (Map.Entry<String, long[]> e : fixed.entrySet()) {
      out.printf(Locale.ROOT, format, e.getKey(), String.format(Locale.ROOT, "%,d", e.getValue()[0]),
          "TTL " + millis(ttlOf(e.getKey())));
    }
    if (left > 0) {
      out.printf(Locale.ROOT, "left without a TTL: %,d key%s%n", left, left == 1 ? "" : "s");
      for (Map.Entry<String, long[]> e : leftAlone.entrySet()) {
        out.printf(Locale.ROOT, format, e.getKey(), String.format(Locale.ROOT, "%,d", e.getValue()[0]),
            "rule not in " + config + "; give --ttl to fix these too");
      }
      if (policyWithoutTtl > 0) {
        out.printf(Locale.ROOT, format, KeysStatsCommand.POLICY, String.format(Locale.ROOT, "%,d", policyWithoutTtl),
            "a ban or an audit list beside a key's state; never changed");
      }
      if (otherWithoutTtl > 0) {
        out.printf(Locale.ROOT, format, KeysStatsCommand.OTHER, String.format(Locale.ROOT, "%,d", otherWithoutTtl),
            "not named as the store names keys; never changed");
      }
    }
  }

  private void json(PrintWriter out, Keyspace keyspace, KeyLayout layout, long seen) {
    ObjectNode root = new ObjectMapper().createObjectNode();
    root.put("store", keyspace.description());
    root.put("prefix", layout.prefix());
    root.put("nodes", keyspace.nodes().size());
    root.put("keys", seen);
    root.put("dryRun", dryRun);
    root.put("fixed", fixedTotal);
    ArrayNode rulesFixed = root.putArray("rules");
    for (Map.Entry<String, long[]> e : fixed.entrySet()) {
      rulesFixed.addObject().put("rule", e.getKey()).put("fixed", e.getValue()[0]).put("ttlMs", ttlOf(e.getKey()));
    }
    ArrayNode left = root.putArray("leftAlone");
    for (Map.Entry<String, long[]> e : leftAlone.entrySet()) {
      left.addObject().put("rule", e.getKey()).put("keys", e.getValue()[0]);
    }
    root.putObject("policy").put("noTtl", policyWithoutTtl);
    root.putObject("other").put("noTtl", otherWithoutTtl);
    out.println(root);
  }

  /** {@code 61s}, or {@code 1500ms} when not whole seconds. */
  static String millis(long ms) {
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }
}
