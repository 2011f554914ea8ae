package dev.sluice.config;

import dev.sluice.Attribute;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.RuleSet;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import dev.sluice.internal.policy.AccessList;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A rule's policy blocks: {@code ban}, {@code audit}, and its {@code allow} and {@code deny} lists. */
final class PolicyReader extends FieldReader {
  private static final List<String> BAN_FIELDS = List.of("after", "within", "for");
  private static final List<String> AUDIT_FIELDS = List.of("keep", "attribute");

  PolicyReader(Problems problems) {
    super(problems);
  }

  /** {@code ban: {after: 5, within: 1m, for: 15m}}, or null after recording errors. */
  BanPolicy ban(Field f) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "ban must be a mapping such as {after: 5, within: 1m, for: 15m}, found "
          + f.value().describe());
      return null;
    }
    int errorsBefore = errorCount();
    checkFields(m, BAN_FIELDS);
    Long after = null;
    Field af = m.field("after");
    if (af == null) {
      missing(m, "after", BAN_FIELDS, "ban has no 'after' (how many denials within 'within' start a ban)");
    } else {
      after = wholeNumber(af, "ban.after", 1, BanPolicy.MAX_AFTER);
    }
    Duration within = banDuration(m, "within", BanPolicy.MAX_WITHIN, "1d", "the period denials are counted over");
    Duration duration = banDuration(m, "for", BanPolicy.MAX_DURATION, "30d", "how long a ban lasts");
    if (errorCount() > errorsBefore || after == null || within == null || duration == null) {
      return null;
    }
    return new BanPolicy(after, within, duration);
  }

  private Duration banDuration(MapNode m, String field, Duration max, String maxText, String meaning) {
    Field f = m.field(field);
    String what = "ban." + field;
    if (f == null) {
      missing(m, field, BAN_FIELDS, "ban has no '" + field + "' (" + meaning + ")");
      return null;
    }
    Long micros = duration(f.value(), what, false);
    if (micros == null) {
      return null;
    }
    if (micros < 1000 || micros > max.toNanos() / 1000) {
      error(f.value().location(), what + " must be between 1ms and " + maxText + ", found " + ((ScalarNode) f.value()).text());
      return null;
    }
    return Duration.ofNanos(micros * 1000);
  }

  /** {@code audit: {keep: 10, attribute: user}}, or null after recording errors. */
  AuditPolicy audit(Field f, ConfigLocation[] attributeAt) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "audit must be a mapping such as {keep: 10, attribute: user}, found "
          + f.value().describe());
      return null;
    }
    int errorsBefore = errorCount();
    checkFields(m, AUDIT_FIELDS);
    Long keep = null;
    Field kf = m.field("keep");
    if (kf == null) {
      missing(m, "keep", AUDIT_FIELDS, "audit has no 'keep' (how many distinct values to keep per key, 1 to "
          + AuditPolicy.MAX_KEEP + ")");
    } else {
      keep = wholeNumber(kf, "audit.keep", 1, AuditPolicy.MAX_KEEP);
    }
    String attribute = null;
    Field af = m.field("attribute");
    if (af == null) {
      missing(m, "attribute", AUDIT_FIELDS, "audit has no 'attribute' (the request attribute whose values are kept)");
    } else {
      attribute = string(af, "audit.attribute");
      attributeAt[0] = af.value().location();
      if (attribute != null) {
        try {
          Attribute.string(attribute);
        } catch (IllegalArgumentException e) {
          error(af.value().location(), "audit.attribute: " + e.getMessage());
        }
      }
    }
    if (errorCount() > errorsBefore || keep == null || attribute == null) {
      return null;
    }
    return new AuditPolicy(keep.intValue(), attribute);
  }

  /**
   * A rule's {@code allow} or {@code deny} list, each entry checked as the limiter reads it, or
   * null after recording errors. {@code at} gets each entry's location.
   */
  List<String> accessList(Field f, List<ConfigLocation> at) {
    String what = f.name();
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), what + " must be a list of entries (keys, prefixes ending in '*', or a prefix and a "
          + "CIDR range such as ip:10.0.0.0/8), found " + f.value().describe());
      return null;
    }
    if (list.items().size() > RuleSet.MAX_LIST_ENTRIES) {
      error(list.location(), what + " has " + list.items().size() + " entries; the maximum is "
          + RuleSet.MAX_LIST_ENTRIES);
      return null;
    }
    List<String> out = new ArrayList<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean ok = true;
    for (int i = 0; i < list.items().size(); i++) {
      Node n = list.items().get(i);
      if (!(n instanceof ScalarNode s) || !s.isString()) {
        String hint = n instanceof ScalarNode s && !s.isNull() ? " (quote it: \"" + s.text() + "\")" : "";
        error(n.location(), what + " entry " + (i + 1) + " must be a string, found " + n.describe() + hint);
        ok = false;
        continue;
      }
      String canonical;
      try {
        canonical = AccessList.checkEntry(s.text());
      } catch (IllegalArgumentException e) {
        error(n.location(), what + " entry " + (i + 1) + ": " + e.getMessage());
        ok = false;
        continue;
      }
      Integer first = seen.putIfAbsent(canonical, i + 1);
      if (first != null) {
        warn(n.location(), what + " entry " + (i + 1) + " ('" + s.text() + "') repeats entry " + first);
      }
      out.add(s.text());
      at.add(n.location());
    }
    return ok ? out : null;
  }

  /** Warns of deny entries the allow list also matches, and allow entries the deny list hides. */
  void lintLists(String label, List<String> allowed, List<ConfigLocation> allowAt, List<String> denied,
      List<ConfigLocation> denyAt) {
    if (allowed == null || denied == null || allowed.isEmpty() || denied.isEmpty()) {
      return;
    }
    AccessList allowList = AccessList.of(allowed);
    AccessList denyList = AccessList.of(denied);
    for (int i = 0; i < denied.size(); i++) {
      if (allowList.covers(denied.get(i))) {
        warn(denyAt.get(i), label + ": deny entry '" + denied.get(i) + "' is also allowed (the allow list matches every "
            + "key it matches); the deny list is checked first, so those keys are denied");
      }
    }
    for (int i = 0; i < allowed.size(); i++) {
      if (denyList.covers(allowed.get(i))) {
        warn(allowAt.get(i), label + ": allow entry '" + allowed.get(i) + "' never applies: the deny list matches every"
            + " key it matches and is checked first");
      }
    }
  }
}
