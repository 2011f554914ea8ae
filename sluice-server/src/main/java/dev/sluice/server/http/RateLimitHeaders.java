package dev.sluice.server.http;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The response fields of the IETF draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers, structured-field syntax): one quota policy per window of
 * every enforced item,
 *
 * <pre>
 * RateLimit-Policy: "auth.createToken.60s";q=20;w=60, "auth.createToken.3s";q=5;w=3
 * RateLimit: "auth.createToken.60s";r=15;t=58, "auth.createToken.3s";r=0;t=2
 * </pre>
 *
 * <p>A policy is named after its rule and its window's period; {@code q} is the window's limit,
 * {@code w} its period in whole seconds (rounded up), {@code r} the units remaining and {@code t}
 * the seconds (rounded up) until the window is back to its full limit. When one rule appears
 * with several keys in a request, each carries its key as the draft's partition key
 * {@code pk}. Shadow items are not announced: they limit nothing.
 *
 * <p>An instance remembers the policy of each rule's windows: it changes only with the
 * configuration, so that answering a decision builds the {@code RateLimit} field alone.
 */
public final class RateLimitHeaders {
  public static final String POLICY = "ratelimit-policy";
  public static final String RATELIMIT = "ratelimit";
  public static final String RETRY_AFTER = "retry-after";

  /** Rules remembered at most; past it the cache starts again (reloads may rename rules forever). */
  private static final int MAX_RULES = 4096;

  /** Both field values; empty strings when the decision has no enforced window. */
  public record Values(String policy, String rateLimit) {
    public boolean isEmpty() {
      return policy.isEmpty();
    }
  }

  /**
   * The policy of one rule's windows: the field value, and each window's quoted name for the
   * {@code RateLimit} field. A rule with overrides has a policy per distinct set of windows,
   * chained through {@code next}.
   */
  private record Policy(long[] limits, long[] periods, String[] names, String text, Policy next) {
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
      Policy p = policy(it);
      StringBuilder limit = new StringBuilder(p.text.length());
      appendRateLimit(limit, p, it, "");
      return new Values(p.text, limit.toString());
    }
    StringBuilder policy = new StringBuilder();
    StringBuilder limit = new StringBuilder();
    for (int i = 0; i < items.size(); i++) {
      ItemDecision it = items.get(i);
      if (it.shadow() || it.windows().isEmpty()) {
        continue;
      }
      Policy p = policy(it);
      String pk = sharesRule(items, i)
          ? ";pk=:" + Base64.getEncoder().encodeToString(it.key().getBytes(StandardCharsets.UTF_8)) + ":"
          : "";
      if (policy.length() > 0) {
        policy.append(", ");
      }
      if (pk.isEmpty()) {
        policy.append(p.text);
      } else {
        appendPolicy(policy, p.names, p.limits, p.periods, pk);
      }
      appendRateLimit(limit, p, it, pk);
    }
    return new Values(policy.toString(), limit.toString());
  }

  /** Whether another enforced item of {@code items} has the rule of item {@code i}. */
  private static boolean sharesRule(List<ItemDecision> items, int i) {
    String rule = items.get(i).rule();
    for (int j = 0; j < items.size(); j++) {
      if (j != i && !items.get(j).shadow() && items.get(j).rule().equals(rule)) {
        return true;
      }
    }
    return false;
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
    for (int i = 0; i < ws.size(); i++) {
      limits[i] = ws.get(i).limit();
      periods[i] = ws.get(i).periodMs();
      names[i] = sfString(it.rule() + "." + periodLabel(periods[i]));
    }
    StringBuilder text = new StringBuilder();
    appendPolicy(text, names, limits, periods, "");
    // A rule has a policy per override at most: a long chain means the windows changed with
    // reloads, and the old ones are dropped.
    Policy p = new Policy(limits, periods, names, text.toString(), chainLength(first) < 8 ? first : null);
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

  private static void appendPolicy(StringBuilder b, String[] names, long[] limits, long[] periods, String pk) {
    for (int i = 0; i < names.length; i++) {
      if (i > 0) {
        b.append(", ");
      }
      b.append(names[i]).append(";q=").append(limits[i]).append(";w=").append(ceilSeconds(periods[i])).append(pk);
    }
  }

  private static void appendRateLimit(StringBuilder b, Policy p, ItemDecision it, String pk) {
    List<WindowState> ws = it.windows();
    for (int i = 0; i < ws.size(); i++) {
      WindowState w = ws.get(i);
      if (b.length() > 0) {
        b.append(", ");
      }
      b.append(p.names[i]).append(";r=").append(Math.max(0, w.remaining()))
          .append(";t=").append(ceilSeconds(w.resetAfterMs())).append(pk);
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
