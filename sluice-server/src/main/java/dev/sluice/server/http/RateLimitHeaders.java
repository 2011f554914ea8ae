package dev.sluice.server.http;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

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
 */
public final class RateLimitHeaders {
  public static final String POLICY = "ratelimit-policy";
  public static final String RATELIMIT = "ratelimit";
  public static final String RETRY_AFTER = "retry-after";

  /** Both field values; empty strings when the decision has no enforced window. */
  public record Values(String policy, String rateLimit) {
    public boolean isEmpty() {
      return policy.isEmpty();
    }
  }

  private RateLimitHeaders() {}

  public static Values of(Decision d) {
    Map<String, Integer> perRule = new HashMap<>();
    for (ItemDecision it : d.items()) {
      if (!it.shadow()) {
        perRule.merge(it.rule(), 1, Integer::sum);
      }
    }
    StringBuilder policy = new StringBuilder();
    StringBuilder limit = new StringBuilder();
    for (ItemDecision it : d.items()) {
      if (it.shadow()) {
        continue;
      }
      String pk = perRule.get(it.rule()) > 1
          ? ";pk=:" + Base64.getEncoder().encodeToString(it.key().getBytes(StandardCharsets.UTF_8)) + ":"
          : "";
      for (WindowState w : it.windows()) {
        String name = sfString(it.rule() + "." + periodLabel(w.periodMs()));
        if (policy.length() > 0) {
          policy.append(", ");
          limit.append(", ");
        }
        policy.append(name).append(";q=").append(w.limit()).append(";w=").append(ceilSeconds(w.periodMs())).append(pk);
        limit.append(name).append(";r=").append(Math.max(0, w.remaining()))
            .append(";t=").append(ceilSeconds(w.resetAfterMs())).append(pk);
      }
    }
    return new Values(policy.toString(), limit.toString());
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
