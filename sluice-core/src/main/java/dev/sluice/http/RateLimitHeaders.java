package dev.sluice.http;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The response fields of the IETF draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers, structured-field syntax): one quota policy per window,
 *
 * <pre>
 * RateLimit-Policy: "auth.createToken.60s";q=20;w=60, "auth.createToken.3s";q=5;w=3
 * RateLimit: "auth.createToken.60s";r=15;t=58, "auth.createToken.3s";r=0;t=2
 * </pre>
 *
 * <p>A policy is named after its rule and its window's period; {@code q} is the window's limit,
 * {@code w} its period in whole seconds (rounded up), {@code r} the units remaining and {@code t}
 * the seconds (rounded up) until the window is back to its full limit. Shadow items are not
 * announced: they limit nothing.
 *
 * <p>The two fields are bounded: a request may hold 100 items, and a field line that grows with
 * them is one that clients refuse to read (curl, Python's {@code http.client} and Node stop at
 * 64 KB or less, proxies at 4–8 KB), after the quota was consumed. So:
 * <ul>
 *   <li>No partition key ({@code pk}): the keys of one rule share its policies, and a policy is
 *       reported once, with the state of the key that has the least room. Keys are the caller's
 *       data (user ids, addresses, Envoy descriptor values), not for a response header to pass on,
 *       and a 512-byte key is 684 bytes of base64 per window.
 *   <li>The draft lets a server announce a subset of its policies: the windows that denied come
 *       first, always; then the others, tightest first (least remaining relative to the limit),
 *       while both values together stay within {@link #BUDGET_BYTES}.
 *   <li>Denying windows alone may pass the budget, up to {@link #MAX_BYTES}; past that (about 25
 *       distinct denying windows of the longest rule names) the rest are left to the body, which
 *       always explains every window.
 * </ul>
 *
 * <p>An instance remembers the policy of each rule's windows: it changes only with the
 * configuration, so that answering a decision builds the {@code RateLimit} field alone.
 */
public final class RateLimitHeaders {
  public static final String POLICY = "ratelimit-policy";
  public static final String RATELIMIT = "ratelimit";
  public static final String RETRY_AFTER = "retry-after";

  /** The most bytes the two values take together, but for windows that denied. */
  public static final int BUDGET_BYTES = 4096;

  /** The most bytes the two values take together, whatever denied. */
  public static final int MAX_BYTES = 8192;

  /** Rules remembered at most; past it the cache starts again (reloads may rename rules forever). */
  private static final int MAX_RULES = 4096;

  /** Both field values; empty strings when the decision has no enforced window. */
  public record Values(String policy, String rateLimit) {
    public boolean isEmpty() {
      return policy.isEmpty();
    }
  }

  /**
   * The policy of one rule's windows: each window's policy list member, its quoted name for the
   * {@code RateLimit} field, and the whole field value. A rule with overrides has a policy per
   * distinct set of windows, chained through {@code next}.
   */
  private record Policy(long[] limits, long[] periods, String[] names, String[] members, String text, Policy next) {
    boolean matches(List<WindowState> ws) {
      if (ws.size() != limits.length) {
        return false;
      }
      for (int i = 0; i < limits.length; i++) {
        WindowState w = ws.get(i);
        if (w.limit() != limits[i] || w.periodMs() != periods[i]) {
          return false;
        }
      }
      return true;
    }
  }

  private final ConcurrentHashMap<String, Policy> policies = new ConcurrentHashMap<>();

  public Values of(Decision d) {
    List<ItemDecision> items = d.items();
    if (items.size() == 1) {
      ItemDecision it = items.get(0);
      if (it.shadow() || it.windows().isEmpty()) {
        return new Values("", "");
      }
      // The common case, one item whose windows all fit: the remembered policy as it is.
      Policy p = policy(it);
      if (p.text.length() <= BUDGET_BYTES / 2) {
        StringBuilder limit = new StringBuilder(p.text.length());
        appendRateLimit(limit, p, it);
        if (p.text.length() + limit.length() <= BUDGET_BYTES) {
          return new Values(p.text, limit.toString());
        }
      }
    }
    return selected(items);
  }

  /** One window of the answer: its policy member, and the state that stands for its keys. */
  private static final class Entry {
    final String member;
    final String name;
    WindowState state;
    final int order;

    Entry(String member, String name, WindowState state, int order) {
      this.member = member;
      this.name = name;
      this.state = state;
      this.order = order;
    }

    /** Whether {@code w} leaves a client less room than the state kept so far. */
    boolean tighter(WindowState w) {
      if (w.exceeded() != state.exceeded()) {
        return w.exceeded();
      }
      if (w.remaining() != state.remaining()) {
        return w.remaining() < state.remaining();
      }
      return w.resetAfterMs() > state.resetAfterMs();
    }

    double room() {
      return state.limit() <= 0 ? 0 : (double) Math.max(0, state.remaining()) / state.limit();
    }

    String rateLimit() {
      return name + ";r=" + Math.max(0, state.remaining()) + ";t=" + ceilSeconds(state.resetAfterMs());
    }
  }

  /** The windows of every enforced item, one per policy, chosen and bounded as the class says. */
  private Values selected(List<ItemDecision> items) {
    Map<String, Entry> byMember = new LinkedHashMap<>();
    for (ItemDecision it : items) {
      if (it.shadow() || it.windows().isEmpty()) {
        continue;
      }
      Policy p = policy(it);
      List<WindowState> ws = it.windows();
      for (int i = 0; i < ws.size(); i++) {
        Entry e = byMember.get(p.members[i]);
        if (e == null) {
          byMember.put(p.members[i], new Entry(p.members[i], p.names[i], ws.get(i), byMember.size()));
        } else if (e.tighter(ws.get(i))) {
          e.state = ws.get(i);
        }
      }
    }
    List<Entry> entries = new ArrayList<>(byMember.values());
    entries.sort(Comparator.comparing((Entry e) -> !e.state.exceeded())
        .thenComparingDouble(e -> e.state.exceeded() ? 0 : e.room())
        .thenComparingInt(e -> e.order));
    StringBuilder policy = new StringBuilder();
    StringBuilder limit = new StringBuilder();
    for (Entry e : entries) {
      String r = e.rateLimit();
      int sep = policy.length() == 0 ? 0 : 2;
      int size = policy.length() + limit.length() + 2 * sep + e.member.length() + r.length();
      if (size > (e.state.exceeded() ? MAX_BYTES : BUDGET_BYTES)) {
        continue;
      }
      if (sep > 0) {
        policy.append(", ");
        limit.append(", ");
      }
      policy.append(e.member);
      limit.append(r);
    }
    return new Values(policy.toString(), limit.toString());
  }

  private Policy policy(ItemDecision it) {
    Policy first = policies.get(it.rule());
    for (Policy p = first; p != null; p = p.next) {
      if (p.matches(it.windows())) {
        return p;
      }
    }
    List<WindowState> ws = it.windows();
    long[] limits = new long[ws.size()];
    long[] periods = new long[ws.size()];
    String[] names = new String[ws.size()];
    String[] members = new String[ws.size()];
    for (int i = 0; i < ws.size(); i++) {
      limits[i] = ws.get(i).limit();
      periods[i] = ws.get(i).periodMs();
      names[i] = sfString(it.rule() + "." + periodLabel(periods[i]));
      members[i] = names[i] + ";q=" + limits[i] + ";w=" + ceilSeconds(periods[i]);
    }
    String text = String.join(", ", members);
    // A rule has a policy per override at most: a long chain means the windows changed with
    // reloads, and the old ones are dropped.
    Policy p = new Policy(limits, periods, names, members, text, chainLength(first) < 8 ? first : null);
    if (policies.size() >= MAX_RULES) {
      policies.clear();
    }
    policies.put(it.rule(), p);
    return p;
  }

  private static int chainLength(Policy p) {
    int n = 0;
    for (; p != null; p = p.next) {
      n++;
    }
    return n;
  }

  private static void appendRateLimit(StringBuilder b, Policy p, ItemDecision it) {
    List<WindowState> ws = it.windows();
    for (int i = 0; i < ws.size(); i++) {
      WindowState w = ws.get(i);
      if (b.length() > 0) {
        b.append(", ");
      }
      b.append(p.names[i]).append(";r=").append(Math.max(0, w.remaining()))
          .append(";t=").append(ceilSeconds(w.resetAfterMs()));
    }
  }

  /**
   * The {@code Retry-After} value of a denial: its {@code retryAfterMs} in seconds, rounded up;
   * -1 when there is none to give (allowed, or a cost that can never fit).
   */
  public static long retryAfterSeconds(Decision d) {
    if (d.allowed() || d.retryAfterMs() == WindowState.NEVER) {
      return -1;
    }
    return ceilSeconds(d.retryAfterMs());
  }

  static String periodLabel(long periodMs) {
    return periodMs % 1000 == 0 ? (periodMs / 1000) + "s" : periodMs + "ms";
  }

  static long ceilSeconds(long ms) {
    return ms <= 0 ? 0 : (ms + 999) / 1000;
  }

  /** A policy name as {@link #sfString} spells it, without the quotes and escapes. */
  static String unquoted(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append(c >= 0x20 && c < 0x7f ? c : '_');
    }
    return b.toString();
  }

  /** A structured-field String: printable ASCII, with {@code "} and {@code \} escaped. */
  static String sfString(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c >= 0x20 && c < 0x7f) {
        b.append(c);
      } else {
        b.append('_');
      }
    }
    return b.append('"').toString();
  }
}
