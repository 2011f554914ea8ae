package dev.sluice.config;

import dev.sluice.Algorithm;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.FailureMode;
import dev.sluice.KeyOverride;
import dev.sluice.LeasePolicy;
import dev.sluice.policy.LiveLimit;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The rules of a file ({@code limits}) with their windows, overrides and lint, and the
 * {@code tiers} (named lists of windows); a rule's policy blocks are read by {@link PolicyReader}.
 */
final class RuleReader extends FieldReader {
  private static final List<String> RULE_FIELDS =
      List.of("name", "algorithm", "config", "precision", "max_wait", "overrides", "shadow", "failure_mode", "ban",
          "audit", "allow", "deny", "mode", "lease_length", "report_interval", "lease_slack");
  /** Tier names: as attribute names. */
  private static final List<String> WINDOW_FIELDS = List.of("limit", "period");
  private static final List<String> OVERRIDE_FIELDS = List.of("keys", "config");

  final Map<String, ConfigLocation> origins = new LinkedHashMap<>();
  final Map<String, List<Window>> tiers = new LinkedHashMap<>();
  final Map<String, ConfigLocation> tierOrigins = new LinkedHashMap<>();
  final Map<String, List<String>> allow = new LinkedHashMap<>();
  final Map<String, List<String>> deny = new LinkedHashMap<>();
  final Map<String, ConfigLocation> auditOrigins = new LinkedHashMap<>();
  private final PolicyReader policies;

  RuleReader(Problems problems) {
    super(problems);
    this.policies = new PolicyReader(problems);
  }

  /** The rule, or null if it has errors (which are recorded). */
  Rule readRule(Node n, int index, Map<String, ConfigLocation> names) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "rule " + index + " must be a mapping with 'name' and 'config', found " + n.describe());
      return null;
    }
    int errorsBefore = errorCount();
    checkFields(m, RULE_FIELDS);

    String name = null;
    ConfigLocation nameAt = m.location();
    Field nameField = m.field("name");
    String label = "rule " + index;
    if (nameField == null) {
      missing(m, "name", RULE_FIELDS, "rule " + index + " has no 'name'");
    } else {
      nameAt = nameField.value().location();
      name = string(nameField, "name");
      if (name != null) {
        try {
          Rule.builder(name);
          label = "rule '" + name + "'";
          ConfigLocation first = names.putIfAbsent(name, nameAt);
          if (first != null) {
            error(nameAt, "duplicate rule name '" + name + "' (first defined at line " + first.line() + ", column "
                + first.column() + ")");
          }
        } catch (IllegalArgumentException e) {
          error(nameAt, e.getMessage());
          name = null;
        }
      }
    }

    Algorithm algorithm = Algorithm.SLIDING_LOG;
    boolean algorithmKnown = true;
    Field alg = m.field("algorithm");
    if (alg != null) {
      String text = string(alg, "algorithm");
      algorithm = text == null ? null : parseEnum(alg, text, Algorithm.values(), Algorithm::configName);
      algorithmKnown = algorithm != null;
    }

    List<Window> windows = null;
    List<ConfigLocation> windowsAt = new ArrayList<>();
    Field config = m.field("config");
    if (config == null) {
      missing(m, "config", RULE_FIELDS, label + " has no 'config' (its list of windows, each with limit and period)");
    } else {
      windows = windows(config, algorithm, windowsAt);
    }

    Integer precision = null;
    Field prec = m.field("precision");
    if (prec != null) {
      if (algorithmKnown && algorithm != Algorithm.SLIDING_WINDOW) {
        error(prec.at(), "precision applies only to sliding_window rules; " + label + " uses " + algorithm.configName());
      } else {
        precision = precision(prec);
      }
    }

    Duration maxWait = null;
    Field mw = m.field("max_wait");
    if (mw != null) {
      if (algorithmKnown && algorithm != Algorithm.LEAKY_BUCKET) {
        error(mw.at(), "max_wait applies only to leaky_bucket rules; " + label + " uses " + algorithm.configName());
      } else {
        Long micros = duration(mw.value(), "max_wait", true);
        maxWait = micros == null ? null : Duration.ofNanos(micros * 1000);
      }
    }

    boolean shadow = false;
    Field sh = m.field("shadow");
    if (sh != null) {
      Boolean b = bool(sh);
      shadow = b != null && b;
    }

    FailureMode failureMode = FailureMode.OPEN;
    Field fm = m.field("failure_mode");
    if (fm != null) {
      String text = string(fm, "failure_mode");
      failureMode = text == null ? null : parseEnum(fm, text, FailureMode.values(), FailureMode::configName);
    }

    BanPolicy ban = null;
    Field bf = m.field("ban");
    if (bf != null) {
      ban = policies.ban(bf);
    }

    AuditPolicy audit = null;
    ConfigLocation[] auditAt = new ConfigLocation[1];
    Field auf = m.field("audit");
    if (auf != null) {
      audit = policies.audit(auf, auditAt);
    }

    LeasePolicy lease = lease(m, label, windows, algorithm, audit != null);

    List<ConfigLocation> allowAt = new ArrayList<>();
    Field alf = m.field("allow");
    List<String> allowed = alf == null ? List.of() : policies.accessList(alf, allowAt);
    List<ConfigLocation> denyAt = new ArrayList<>();
    Field df = m.field("deny");
    List<String> denied = df == null ? List.of() : policies.accessList(df, denyAt);

    List<KeyOverride> overrides = new ArrayList<>();
    List<List<ConfigLocation>> overrideWindowsAt = new ArrayList<>();
    List<List<ConfigLocation>> patternsAt = new ArrayList<>();
    Field ov = m.field("overrides");
    if (ov != null) {
      overrides(ov, algorithm, overrides, overrideWindowsAt, patternsAt);
    }

    if (errorCount() > errorsBefore) {
      return null;
    }
    Rule.Builder b = Rule.builder(name).windows(windows).algorithm(algorithm).shadow(shadow).failureMode(failureMode);
    if (precision != null) {
      b.precision(precision);
    }
    if (maxWait != null) {
      b.maxWait(maxWait);
    }
    overrides.forEach(b::override);
    b.ban(ban).audit(audit).lease(lease);
    Rule rule;
    try {
      rule = b.build();
    } catch (IllegalArgumentException e) {
      error(m.location(), e.getMessage()); // what the reader's own checks left to the rule (overrides' periods)
      return null;
    }
    origins.put(name, nameAt);
    if (audit != null) {
      auditOrigins.put(name, auditAt[0]);
    }
    if (!allowed.isEmpty()) {
      allow.put(name, allowed);
    }
    if (!denied.isEmpty()) {
      deny.put(name, denied);
    }
    lint(rule, label, windowsAt, overrideWindowsAt, patternsAt);
    policies.lintLists(label, allowed, allowAt, denied, denyAt);
    return rule;
  }

  /**
   * Leased mode's settings, null for exact mode (or after recording an error). Unset durations
   * follow the rule's windows: a lease of 1 s or the shortest period if shorter, reports every
   * 100 ms or every half lease if shorter.
   */
  private LeasePolicy lease(MapNode m, String label, List<Window> windows, Algorithm algorithm, boolean audited) {
    Field mode = m.field("mode");
    String text = mode == null ? "exact" : string(mode, "mode");
    Field length = m.field("lease_length");
    Field interval = m.field("report_interval");
    Field slackField = m.field("lease_slack");
    if ("exact".equals(text)) {
      for (Field f : new Field[] {length, interval, slackField}) {
        if (f != null) {
          error(f.at(), f.name() + " applies only to rules with mode: leased; " + label + " is exact");
        }
      }
    } else if (text != null && !"leased".equals(text)) {
      error(mode.value().location(), label + ": mode must be exact or leased, found '" + text + "'");
    }
    if (!"leased".equals(text)) {
      return null;
    }
    if (algorithm == Algorithm.LEAKY_BUCKET) {
      error(mode.value().location(), label + ": a leaky_bucket cannot be leased (its promise is the spacing of start"
          + " times, which units held by one instance do not keep); use token_bucket for a smooth rate");
      return null;
    }
    if (audited) {
      error(mode.value().location(), label + ": an audited rule cannot be leased (the audit is written in the"
          + " decision's own store call, which a leased decision does not make)");
      return null;
    }
    if (windows == null) {
      return null;
    }
    Duration shortest = windows.stream().map(Window::period).min(Duration::compareTo).orElseThrow();
    Duration leaseLength = null;
    if (length != null) {
      Long micros = duration(length.value(), "lease_length", false);
      if (micros == null) {
        return null;
      }
      leaseLength = Duration.ofNanos(micros * 1000);
      if (leaseLength.compareTo(shortest) > 0) {
        error(length.value().location(), label + ": lease_length " + Durations.format(micros)
            + " is longer than the rule's shortest period, " + Durations.format(shortest.toNanos() / 1000)
            + " (units given back after the window forgot them would free nothing)");
        return null;
      }
    }
    Duration reportInterval = null;
    if (interval != null) {
      Long micros = duration(interval.value(), "report_interval", false);
      if (micros == null) {
        return null;
      }
      reportInterval = Duration.ofNanos(micros * 1000);
    }
    Double slack = null;
    if (slackField != null) {
      slack = share(slackField);
      if (slack == null) {
        return null;
      }
    }
    ConfigLocation at = (interval != null ? interval : length != null ? length : mode).value().location();
    try {
      LeasePolicy lease = LeasePolicy.withDefaults(shortest, leaseLength, reportInterval, slack);
      if (lease.budget(windows) < 8) {
        warn(mode.value().location(), label + ": leased with a budget of " + lease.budget(windows) + " units ("
            + BigDecimal.valueOf(lease.slack() * 100).stripTrailingZeros().toPlainString() + "% of its smallest limit): whole units cannot stay within it across"
            + " several instances, and at such a rate a store call per decision is cheap; keep it exact");
      }
      return lease;
    } catch (IllegalArgumentException e) {
      error(slackField != null && e.getMessage().startsWith("lease_slack") ? slackField.value().location() : at,
          label + ": " + e.getMessage());
      return null;
    }
  }

  /** A share written {@code 1%} or {@code 0.5%}, or as a fraction ({@code 0.01}); null after an error. */
  private Double share(Field f) {
    if (f.value() instanceof ScalarNode s && s.isNumber() && s.number() != null) {
      return s.number().doubleValue();
    }
    if (f.value() instanceof ScalarNode s && s.isString() && s.text().endsWith("%")) {
      try {
        return Double.parseDouble(s.text().substring(0, s.text().length() - 1).trim()) / 100;
      } catch (NumberFormatException e) {
        // reported below
      }
    }
    error(f.value().location(), f.name() + " must be a percentage such as 1% or a fraction such as 0.01, found "
        + f.value().describe());
    return null;
  }

  private void lint(Rule rule, String label, List<ConfigLocation> windowsAt, List<List<ConfigLocation>> overrideWindowsAt,
      List<List<ConfigLocation>> patternsAt) {
    for (Lint.Finding f : Lint.windows(rule)) {
      warn(windowsAt.get(f.window()), label + ": " + f.message());
    }
    for (int i = 0; i < rule.overrides().size(); i++) {
      for (Lint.Finding f : Lint.overrideWindows(rule, i)) {
        warn(overrideWindowsAt.get(i).get(f.window()), label + ", override " + (i + 1) + ": " + f.message());
      }
    }
    for (Lint.PatternFinding f : Lint.shadowedPatterns(rule.overrides())) {
      warn(patternsAt.get(f.override()).get(f.pattern()), label + ", override " + (f.override() + 1) + ": " + f.message());
    }
  }

  /** A non-empty list of windows, or null after recording errors. */
  private List<Window> windows(Field f, Algorithm algorithm, List<ConfigLocation> at) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "'config' must be a list of windows, each with limit and period, found " + f.value().describe());
      return null;
    }
    if (list.items().isEmpty()) {
      error(list.location(), "'config' must have at least one window");
      return null;
    }
    List<Window> out = new ArrayList<>();
    boolean ok = true;
    for (Node n : list.items()) {
      Window w = window(n, algorithm);
      ok &= w != null;
      out.add(w);
      at.add(n.location());
    }
    return ok ? out : null;
  }

  private Window window(Node n, Algorithm algorithm) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "a window must be a mapping with 'limit' and 'period', found " + n.describe());
      return null;
    }
    checkFields(m, WINDOW_FIELDS);
    Long limit = null;
    Field lf = m.field("limit");
    if (lf == null) {
      missing(m, "limit", WINDOW_FIELDS, "window has no 'limit'");
    } else {
      limit = limit(lf, algorithm);
    }
    Long period = null;
    Field pf = m.field("period");
    if (pf == null) {
      missing(m, "period", WINDOW_FIELDS, "window has no 'period'");
    } else {
      period = duration(pf.value(), "period", false);
    }
    if (limit == null || period == null) {
      return null;
    }
    return new Window(limit, Duration.ofNanos(period * 1000));
  }

  private Long limit(Field f, Algorithm algorithm) {
    Node v = f.value();
    if (!(v instanceof ScalarNode s) || !s.isInteger()) {
      error(v.location(), "limit must be a whole number ≥ 1, found " + v.describe());
      return null;
    }
    if (!decimal(s, "limit")) {
      return null;
    }
    if (s.number().signum() <= 0) {
      error(v.location(), "limit must be ≥ 1, found " + s.text());
      return null;
    }
    if (s.number().compareTo(BigDecimal.valueOf(MAX_LIMIT)) > 0) {
      error(v.location(), "limit " + s.text() + " is too large; the maximum is " + MAX_LIMIT);
      return null;
    }
    long limit = s.number().longValueExact();
    if (algorithm == Algorithm.SLIDING_LOG && limit > MAX_SLIDING_LOG_LIMIT) {
      error(v.location(), "limit " + limit + " is too large for sliding_log (at most " + MAX_SLIDING_LOG_LIMIT
          + ": it keeps one entry per unit); use sliding_window or token_bucket for larger limits");
      return null;
    }
    return limit;
  }

  private Integer precision(Field f) {
    Node v = f.value();
    if (!(v instanceof ScalarNode s) || !s.isInteger()) {
      error(v.location(), "precision must be a whole number from 1 to 1000, found " + v.describe());
      return null;
    }
    if (!decimal(s, "precision")) {
      return null;
    }
    if (s.number().compareTo(BigDecimal.ONE) < 0 || s.number().compareTo(BigDecimal.valueOf(1000)) > 0) {
      error(v.location(), "precision must be from 1 to 1000, found " + s.text());
      return null;
    }
    return s.number().intValueExact();
  }

  private void overrides(Field f, Algorithm algorithm, List<KeyOverride> out, List<List<ConfigLocation>> windowsAt,
      List<List<ConfigLocation>> patternsAt) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "overrides must be a list of {keys, config}, found " + f.value().describe());
      return;
    }
    for (Node n : list.items()) {
      if (!(n instanceof MapNode m)) {
        error(n.location(), "an override must be a mapping with 'keys' and 'config', found " + n.describe());
        continue;
      }
      checkFields(m, OVERRIDE_FIELDS);
      List<String> keys = null;
      List<ConfigLocation> keysAt = new ArrayList<>();
      Field kf = m.field("keys");
      if (kf == null) {
        missing(m, "keys", OVERRIDE_FIELDS, "override has no 'keys' (a list of keys or prefixes ending in '*')");
      } else {
        keys = patterns(kf, keysAt);
      }
      List<Window> windows = null;
      List<ConfigLocation> at = new ArrayList<>();
      Field cf = m.field("config");
      if (cf == null) {
        missing(m, "config", OVERRIDE_FIELDS, "override has no 'config' (its list of windows)");
      } else {
        windows = windows(cf, algorithm, at);
      }
      if (keys != null && windows != null) {
        out.add(new KeyOverride(keys, windows));
        windowsAt.add(at);
        patternsAt.add(keysAt);
      }
    }
  }

  private List<String> patterns(Field f, List<ConfigLocation> at) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "keys must be a list of keys or prefixes ending in '*', found " + f.value().describe());
      return null;
    }
    if (list.items().isEmpty()) {
      error(list.location(), "keys must list at least one key or prefix");
      return null;
    }
    List<String> out = new ArrayList<>();
    boolean ok = true;
    for (Node n : list.items()) {
      if (!(n instanceof ScalarNode s) || !s.isString()) {
        String hint = n instanceof ScalarNode s && !s.isNull() ? " (quote it: \"" + s.text() + "\")" : "";
        error(n.location(), "a key pattern must be a string, found " + n.describe() + hint);
        ok = false;
        continue;
      }
      String p = s.text();
      String prefix = p.endsWith("*") ? p.substring(0, p.length() - 1) : p;
      if (prefix.isEmpty()) {
        error(n.location(), "key pattern '" + p + "' matches " + (p.isEmpty() ? "nothing" : "every key")
            + "; give a key or a prefix followed by '*' (user:*)");
        ok = false;
      } else if (prefix.contains("*")) {
        error(n.location(), "key pattern '" + p + "' has a '*' before its end; a pattern is a key, or a prefix followed by "
            + "one '*' at the end");
        ok = false;
      } else {
        out.add(p);
        at.add(n.location());
      }
    }
    return ok ? out : null;
  }

  /** {@code tiers: {free: [{limit: 10, period: 1m}], premium: [...]}}. */
  void readTiers(Field f) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "'" + NativeReader.TIERS_KEY + "' must be a mapping of tier names to lists of windows, such as "
          + "{free: [{limit: 10, period: 1m}]}, found " + f.value().describe());
      return;
    }
    if (m.fields().size() > RuleSet.MAX_TIERS) {
      error(m.location(), "'" + NativeReader.TIERS_KEY + "' names " + m.fields().size() + " tiers; the maximum is " + RuleSet.MAX_TIERS);
      return;
    }
    for (Field t : m.fields().values()) {
      int errorsBefore = errorCount();
      if (!RuleSet.isTierName(t.name())) {
        error(t.at(), "tier name must be 1-64 letters, digits, _ . -, found '" + t.name() + "'");
      }
      String label = "tier '" + t.name() + "'";
      List<Window> ws = null;
      if (!(t.value() instanceof ListNode list)) {
        error(t.value().location(), label + " must be a list of windows, each with limit and period, found "
            + t.value().describe());
      } else if (list.items().isEmpty()) {
        error(list.location(), label + " has no window; a tier needs at least one");
      } else if (list.items().size() > LiveLimit.MAX_WINDOWS) {
        error(list.location(), label + " has " + list.items().size() + " windows; the maximum is "
            + LiveLimit.MAX_WINDOWS);
      } else {
        ws = new ArrayList<>();
        for (Node n : list.items()) {
          // A tier may be given to a key of any rule: its algorithm is checked when it is.
          ws.add(window(n, null));
        }
      }
      if (errorCount() > errorsBefore || ws == null || ws.contains(null)) {
        continue;
      }
      tiers.put(t.name(), List.copyOf(ws));
      tierOrigins.put(t.name(), t.at());
    }
  }
}
