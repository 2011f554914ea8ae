package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * What every command on a running service's policies shares: its options, its client, its output;
 * and the one shape of the commands of a resource ({@code sluice limits}, {@code bans},
 * {@code lists}): a {@link Group} of subcommands {@code set} or {@code add}, {@code get},
 * {@code rm} and {@code ls}, whose resource's entries are put, shown, removed and listed here
 * alike. A resource of keys ({@link KeyResource}: limits, bans) states only its path, what a
 * removal says, and how an entry is printed; its subcommands state only their names, help and
 * body.
 */
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

  /** How an entry of a resource is printed: the table's header, and an entry's row. */
  record Shape(List<String> header, Function<JsonNode, List<String>> row) {}

  int list(String path, Paging p, Shape shape) {
    return list(path, p, shape.header(), shape.row());
  }

  int show(JsonNode n, Shape shape) {
    return show(n, shape.header(), shape.row());
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

  /** The command of a resource: without a subcommand, it names them. */
  abstract static class Group implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
      List<String> names = List.copyOf(spec.subcommands().keySet());
      throw new CommandLine.ParameterException(spec.commandLine(), "missing command: "
          + String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1));
    }
  }

  /**
   * A resource of (rule, key) entries at {@code path}: {@code removal} names what {@code rm} took
   * away ("the ban on"), {@code shape} how an entry is printed.
   */
  record KeyResource(String path, String removal, Shape shape) {
    String of(String rule, String key) {
      return path + "/" + AdminClient.segment(rule) + "/" + AdminClient.segment(key);
    }
  }

  /** The command of a resource of keys, which its subcommands act on. */
  abstract static class KeyGroup extends Group {
    abstract KeyResource resource();
  }

  /** The resource of the command this subcommand belongs to: the group states it once for all four. */
  KeyResource resource() {
    return ((KeyGroup) spec.parent().userObject()).resource();
  }

  /** {@code set}: replaces the entry of RULE KEY with the one {@link #body} gives, then shows it. */
  abstract static class SetKey extends OfKey {
    abstract ObjectNode body();

    @Override
    public Integer call() {
      return show(client().call("PUT", resource().of(rule, key), body().toString()), resource().shape());
    }
  }

  /** {@code get}: shows the entry of RULE KEY. */
  abstract static class GetKey extends OfKey {
    @Override
    public Integer call() {
      return show(client().call("GET", resource().of(rule, key), null), resource().shape());
    }
  }

  /** {@code rm}: removes the entry of RULE KEY. */
  abstract static class RmKey extends OfKey {
    @Override
    public Integer call() {
      client().call("DELETE", resource().of(rule, key), null);
      return removed(resource().removal() + " '" + key + "' under rule '" + rule + "'");
    }
  }

  /** {@code ls}: the entries in key order, of one rule or all, a page at a time. */
  abstract static class LsKeys extends PolicyCommand {
    @Option(names = "--rule", paramLabel = "RULE", description = "of this rule only")
    String rule;

    @Mixin
    Paging paging;

    @Override
    public Integer call() {
      return list(resource().path() + (rule == null ? "" : "?rule=" + AdminClient.query(rule)), paging,
          resource().shape());
    }
  }
}
