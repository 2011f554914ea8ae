package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;
import picocli.CommandLine.Command;

/** {@code sluice keys stats}: keys, keys without a TTL and memory, per rule. */
@Command(name = "stats", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Report the keys under --prefix per rule (read from each key's name): how many, how many have "
        + "no TTL, and their memory as MEMORY USAGE reports it (total and average bytes), largest first. Keys "
        + "under the prefix that are not named as the store names keys are reported on a line of their own, and so "
        + "are the bans, audit lists and refund markers the store keeps beside a key's state (<key>:ban, <key>:audit, <key>:refund:<id>).",
        "Changes nothing."})
final class KeysStatsCommand extends KeyspaceCommand {
  static final String OTHER = "(not a Sluice key)";
  static final String POLICY = "(policies)";

  /** Counts for one rule. */
  static final class Tally {
    long keys;
    long noTtl;
    long bytes;

    long averageBytes() {
      return keys == 0 ? 0 : Math.round((double) bytes / keys);
    }
  }

  private final Map<String, Tally> perRule = new HashMap<>();
  private final Tally other = new Tally();
  /** Keys beside a state key: bans and audit lists, of any rule. */
  private final Tally policy = new Tally();

  KeysStatsCommand(boolean errIsTerminal, LongSupplier nanoClock) {
    super(errIsTerminal, nanoClock);
  }

  KeysStatsCommand() {
    this(false, System::nanoTime);
  }

  @Override
  String commandName() {
    return "sluice keys stats";
  }

  @Override
  int scan(Keyspace keyspace, KeyLayout layout, KeyScanner scanner, Progress progress, PrintWriter out) {
    Tally total = new Tally();
    scanner.run((node, keys) -> batch(node, layout, keys, total),
        () -> String.format(Locale.ROOT, "%,d bytes", total.bytes));
    progress.finish(scanner.summary(String.format(Locale.ROOT, "%,d bytes", total.bytes)));
    List<Map.Entry<String, Tally>> rows = new ArrayList<>(perRule.entrySet());
    rows.sort(Comparator.comparingLong((Map.Entry<String, Tally> e) -> -e.getValue().bytes)
        .thenComparing(Map.Entry::getKey));
    if (options.json) {
      json(out, keyspace, layout, total, rows);
    } else {
      table(out, keyspace, layout, total, rows);
    }
    return Main.EXIT_OK;
  }

  /** PTTL and MEMORY USAGE for every key of the batch, pipelined on the node that holds them. */
  private void batch(Keyspace.Node node, KeyLayout layout, List<byte[]> keys, Tally total) {
    List<RedisFuture<Long>> ttls = new ArrayList<>(keys.size());
    List<RedisFuture<Long>> sizes = new ArrayList<>(keys.size());
    RedisAsyncCommands<byte[], byte[]> commands = node.commands();
    node.pipeline(() -> {
      for (byte[] k : keys) {
        ttls.add(commands.pttl(k));
        sizes.add(commands.memoryUsage(k));
      }
    });
    List<Long> ttl = KeyScanner.awaitAll(ttls);
    List<Long> size = KeyScanner.awaitAll(sizes);
    for (int i = 0; i < keys.size(); i++) {
      // A key that expired since SCAN returned it: PTTL -2, no MEMORY USAGE.
      if (size.get(i) == null || ttl.get(i) == -2) {
        continue;
      }
      String rule = layout.ruleOf(keys.get(i));
      Tally t = rule != null ? perRule.computeIfAbsent(rule, r -> new Tally())
          : layout.isPolicy(keys.get(i)) ? policy : other;
      t.keys++;
      t.bytes += size.get(i);
      if (ttl.get(i) == -1) {
        t.noTtl++;
      }
      total.keys++;
      total.bytes += size.get(i);
      if (ttl.get(i) == -1) {
        total.noTtl++;
      }
    }
  }

  private void table(PrintWriter out, Keyspace keyspace, KeyLayout layout, Tally total,
      List<Map.Entry<String, Tally>> rows) {
    out.printf(Locale.ROOT, "%s, prefix '%s': %,d keys on %s%n", keyspace.description(), layout.prefix(), total.keys,
        nodes(keyspace.nodes().size()));
    int width = (policy.keys > 0 ? POLICY : OTHER).length();
    for (Map.Entry<String, Tally> e : rows) {
      width = Math.max(width, e.getKey().length());
    }
    String format = "%-" + width + "s  %12s  %10s  %14s  %10s%n";
    out.printf(Locale.ROOT, format, "rule", "keys", "no TTL", "bytes", "avg bytes");
    for (Map.Entry<String, Tally> e : rows) {
      row(out, format, e.getKey(), e.getValue());
    }
    if (policy.keys > 0) {
      row(out, format, POLICY, policy);
    }
    if (other.keys > 0) {
      row(out, format, OTHER, other);
    }
    row(out, format, "total", total);
  }

  private static void row(PrintWriter out, String format, String name, Tally t) {
    out.printf(Locale.ROOT, format, name, String.format(Locale.ROOT, "%,d", t.keys),
        String.format(Locale.ROOT, "%,d", t.noTtl), String.format(Locale.ROOT, "%,d", t.bytes),
        String.format(Locale.ROOT, "%,d", t.averageBytes()));
  }

  private void json(PrintWriter out, Keyspace keyspace, KeyLayout layout, Tally total,
      List<Map.Entry<String, Tally>> rows) {
    ObjectMapper mapper = new ObjectMapper();
    ObjectNode root = mapper.createObjectNode();
    root.put("store", keyspace.description());
    root.put("prefix", layout.prefix());
    root.put("nodes", keyspace.nodes().size());
    counts(root, total);
    ArrayNode rules = root.putArray("rules");
    for (Map.Entry<String, Tally> e : rows) {
      counts(rules.addObject().put("rule", e.getKey()), e.getValue());
    }
    counts(root.putObject("policy"), policy);
    counts(root.putObject("other"), other);
    out.println(root);
  }

  private static void counts(ObjectNode n, Tally t) {
    n.put("keys", t.keys).put("noTtl", t.noTtl).put("bytes", t.bytes).put("avgBytes", t.averageBytes());
  }
}
