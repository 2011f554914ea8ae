package dev.sluice.http;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The RFC 9457 problem that explains a denial, with the problem types of the IETF draft
 * "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers, "Problem Types"):
 *
 * <pre>
 * HTTP/1.1 429 Too Many Requests
 * Content-Type: application/problem+json
 *
 * {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
 *  "title":"Request cannot be satisfied as assigned quota has been exceeded",
 *  "status":429,
 *  "detail":"auth.createToken.3s: 5 per 3s exceeded",
 *  "violated-policies":["auth.createToken.3s"]}
 * </pre>
 *
 * <p>The type follows what denied, in this order:
 * <ul>
 *   <li>a <b>ban</b> or a <b>deny list</b> — {@link #ABNORMAL_USAGE_DETECTED}, 429; the violated
 *       policies are the rules whose ban or list denied;
 *   <li>a <b>window</b> (the limit, a cost above it, a wait too long) —
 *       {@link #QUOTA_EXCEEDED}, 429; the violated policies are the denying windows, named as the
 *       {@code RateLimit-Policy} field names them ({@code rule.period});
 *   <li>the <b>store</b> (unreachable under {@code failure_mode: closed}, or full) —
 *       {@link #TEMPORARY_REDUCED_CAPACITY}, 503: the client did nothing wrong, and a 429 would
 *       tell it to slow down for a fault of the server's.
 * </ul>
 *
 * <p>Keys are not named: they are the caller's data (addresses, user ids), as in the headers. The
 * list of policies is bounded by {@link #MAX_POLICIES} and {@link #MAX_POLICY_BYTES}, the denying
 * windows first as they come; the decision's body, where a front end sends one, explains every
 * window. The front ends render it with their own JSON: Spring's {@code ProblemDetail} in the
 * Spring Boot starter, Jackson in the service.
 *
 * @param type one of the three types above
 * @param title the type's short summary, the same for every problem of the type
 * @param status the HTTP status a front end answers with
 * @param detail this occurrence, in words, without keys
 * @param violatedPolicies the {@code violated-policies} extension member; empty for
 *     {@link #TEMPORARY_REDUCED_CAPACITY}
 */
public record RateLimitProblem(URI type, String title, int status, String detail, List<String> violatedPolicies) {
  public static final String MEDIA_TYPE = "application/problem+json";

  public static final URI QUOTA_EXCEEDED = URI.create("https://iana.org/assignments/http-problem-types#quota-exceeded");
  public static final URI TEMPORARY_REDUCED_CAPACITY =
      URI.create("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
  public static final URI ABNORMAL_USAGE_DETECTED =
      URI.create("https://iana.org/assignments/http-problem-types#abnormal-usage-detected");

  /** The name of the extension member that lists the violated policies. */
  public static final String VIOLATED_POLICIES = "violated-policies";

  /** The most policies a problem names. */
  public static final int MAX_POLICIES = 32;

  /** The most bytes (UTF-16 chars, rule names are ASCII-clipped) the policy names take together. */
  public static final int MAX_POLICY_BYTES = 2048;

  public RateLimitProblem {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(detail, "detail");
    violatedPolicies = List.copyOf(violatedPolicies);
  }

  /**
   * The problem that explains {@code d}.
   *
   * @throws IllegalArgumentException if {@code d} was allowed: there is nothing to explain
   */
  public static RateLimitProblem of(Decision d) {
    if (d.allowed()) {
      throw new IllegalArgumentException("an allowed decision has no problem");
    }
    Set<String> blocked = new LinkedHashSet<>();
    Set<String> windows = new LinkedHashSet<>();
    List<String> details = new ArrayList<>();
    boolean store = false;
    for (ItemDecision it : d.items()) {
      if (it.allowed() || it.shadow()) {
        continue;
      }
      DenyReason r = it.reason();
      switch (r) {
        case BANNED, DENY_LISTED -> {
          if (blocked.add(RateLimitHeaders.unquoted(it.rule()))) {
            details.add(RateLimitHeaders.unquoted(it.rule()) + (r == DenyReason.BANNED ? ": banned" : ": deny-listed"));
          }
        }
        case STORE_UNAVAILABLE, STORE_FULL -> store = true;
        default -> {
          for (WindowState w : it.windows()) {
            if (w.exceeded()) {
              String name = RateLimitHeaders.unquoted(it.rule() + "." + RateLimitHeaders.periodLabel(w.periodMs()));
              if (windows.add(name)) {
                details.add(name + ": " + w.limit() + " per " + RateLimitHeaders.periodLabel(w.periodMs())
                    + (r == DenyReason.COST_EXCEEDS_LIMIT ? ", the cost can never fit"
                        : r == DenyReason.WAIT_EXCEEDS_MAX_WAIT ? ", the wait is longer than allowed" : " exceeded"));
              }
            }
          }
        }
      }
    }
    if (!blocked.isEmpty()) {
      return new RateLimitProblem(ABNORMAL_USAGE_DETECTED, "Requests refused as abnormal usage was detected", 429,
          detail(details), bounded(blocked));
    }
    if (!windows.isEmpty() || !store) {
      return new RateLimitProblem(QUOTA_EXCEEDED, "Request cannot be satisfied as assigned quota has been exceeded",
          429, details.isEmpty() ? "quota exceeded" : detail(details), bounded(windows));
    }
    return new RateLimitProblem(TEMPORARY_REDUCED_CAPACITY,
        "Request cannot be satisfied now as the limiter's store is unavailable", 503,
        "the rate limit store could not decide, and the rule's failure mode denies", List.of());
  }

  private static List<String> bounded(Set<String> names) {
    List<String> out = new ArrayList<>(Math.min(names.size(), MAX_POLICIES));
    int bytes = 0;
    for (String n : names) {
      if (out.size() == MAX_POLICIES || bytes + n.length() > MAX_POLICY_BYTES) {
        break;
      }
      out.add(n);
      bytes += n.length();
    }
    return out;
  }

  private static String detail(List<String> parts) {
    StringBuilder b = new StringBuilder();
    for (String p : parts) {
      if (b.length() + p.length() > MAX_POLICY_BYTES) {
        return b.append("; ...").toString();
      }
      if (b.length() > 0) {
        b.append("; ");
      }
      b.append(p);
    }
    return b.toString();
  }
}
