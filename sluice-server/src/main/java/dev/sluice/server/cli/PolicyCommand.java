package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** What every command on a running service's policies shares: its options, its client, its output. */
abstract class PolicyCommand implements Callable<Integer> {
  @Mixin
  AdminOptions admin;

  @Spec
  CommandSpec spec;

  AdminClient client() {
    return new AdminClient(admin);
  }

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  /** A command about one key of one rule, named first: {@code RULE KEY}. */
  abstract static class OfKey extends PolicyCommand {
    @Parameters(index = "0", paramLabel = "RULE")
    String rule;

    @Parameters(index = "1", paramLabel = "KEY")
    String key;
  }

  /** Paging options of the {@code ls} commands. */
  static final class Paging {
    @Option(names = "--after", paramLabel = "CURSOR", description = "start after this cursor (the 'next' of a page)")
    String after;

    @Option(names = "--count", defaultValue = "100", paramLabel = "N", description = "entries per page, 1 to 1000 "
        + "(default: ${DEFAULT-VALUE})")
    int count;

    @Option(names = "--all", description = "follow every page to the end")
    boolean all;
  }

  /**
   * Reads {@code path} (with a query, to which {@code after} and {@code count} are added) page by
   * page, and prints the items as a table of {@code header} ({@code --json}: as the service's
   * page, every item in one page with {@code --all}).
   */
  int list(String path, Paging p, List<String> header, Function<JsonNode, List<String>> row) {
    AdminClient c = client();
    String after = p.after;
    ArrayNode items = AdminClient.JSON.createArrayNode();
    JsonNode next;
    do {
      String q = path + (path.contains("?") ? "&" : "?") + "count=" + p.count
          + (after == null ? "" : "&after=" + AdminClient.query(after));
      JsonNode page = c.call("GET", q, null);
      page.get("items").forEach(items::add);
      next = page.get("next");
      after = next == null || next.isNull() ? null : next.asText();
    } while (p.all && after != null);
    if (admin.json) {
      ObjectNode page = AdminClient.JSON.createObjectNode();
      page.set("items", items);
      page.set("next", next);
      AdminClient.printJson(out(), page);
      return 0;
    }
    List<List<String>> rows = new ArrayList<>();
    items.forEach(i -> rows.add(row.apply(i)));
    AdminClient.table(out(), header, rows);
    if (after != null) {
      out().println("(more: --after " + after + ", or --all)");
    }
    return 0;
  }

  /** Prints one answer: as JSON, or as a one-row table. */
  int show(JsonNode n, List<String> header, Function<JsonNode, List<String>> row) {
    if (admin.json) {
      AdminClient.printJson(out(), n);
    } else {
      AdminClient.table(out(), header, List.of(row.apply(n)));
    }
    return 0;
  }

  /** Prints that something was removed. */
  int removed(String what) {
    if (admin.json) {
      out().println("{\"removed\":true}");
    } else {
      out().println("removed " + AdminClient.printable(what));
    }
    return 0;
  }

  static String limitText(JsonNode l) {
    if (l.has("tier")) {
      return "tier " + l.get("tier").asText();
    }
    List<String> ws = new ArrayList<>();
    l.get("windows").forEach(w -> ws.add(w.get("limit").asText() + "/" + w.get("period").asText()));
    return String.join(", ", ws);
  }

  static List<String> banRow(JsonNode b) {
    Instant until = Instant.parse(b.get("until").asText());
    long left = Math.max(0, Duration.between(Instant.now(), until).toSeconds());
    return List.of(b.get("rule").asText(), b.get("key").asText(), b.get("until").asText(), left + "s",
        b.get("automatic").asBoolean() ? "automatic" : "manual");
  }

  static final List<String> BAN_HEADER = List.of("RULE", "KEY", "UNTIL", "LEFT", "BY");
  static final List<String> LIMIT_HEADER = List.of("RULE", "KEY", "LIMIT");
}
