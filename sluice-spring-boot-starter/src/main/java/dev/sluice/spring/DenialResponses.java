package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.RateLimitProblem;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * What a response says about a decision, the same from the filters and from {@link RateLimited}
 * methods: the {@code RateLimit-Policy} and {@code RateLimit} fields (allowed or not),
 * {@code Retry-After} on a denial, and the denial's RFC 9457 problem as Spring's
 * {@link ProblemDetail} with the IETF draft's problem types ({@link RateLimitProblem}).
 */
public final class DenialResponses {
  public static final String POLICY = "RateLimit-Policy";
  public static final String RATELIMIT = "RateLimit";
  public static final String RETRY_AFTER = "Retry-After";

  private final RateLimitHeaders fields = new RateLimitHeaders();
  private final boolean problemDetails;
  private final SluiceProperties.Headers when;

  public DenialResponses(boolean problemDetails) {
    this(problemDetails, SluiceProperties.Headers.ALWAYS);
  }

  public DenialResponses(boolean problemDetails, SluiceProperties.Headers when) {
    this.problemDetails = problemDetails;
    this.when = when;
  }

  /** Whether denials have a problem body. */
  public boolean problemDetails() {
    return problemDetails;
  }

  /** The header fields that go with {@code d}, in order. */
  public Map<String, String> headers(Decision d) {
    Map<String, String> h = new LinkedHashMap<>(4);
    headers(d, h::put);
    return h;
  }

  /** Sets the header fields that go with {@code d} through {@code set}, in order. */
  public void headers(Decision d, BiConsumer<String, String> set) {
    if (when == SluiceProperties.Headers.ALWAYS || when == SluiceProperties.Headers.ON_DENIAL && !d.allowed()) {
      RateLimitHeaders.Values v = fields.of(d);
      if (!v.isEmpty()) {
        set.accept(POLICY, v.policy());
        set.accept(RATELIMIT, v.rateLimit());
      }
    }
    long retry = RateLimitHeaders.retryAfterSeconds(d);
    if (retry >= 0) {
      set.accept(RETRY_AFTER, Long.toString(retry));
    }
  }

  /** The status of a denial: 429, or 503 when the store failed and the failure mode denied. */
  public static int status(Decision denied) {
    return RateLimitProblem.of(denied).status();
  }

  /** The problem that explains a denial. */
  public static ProblemDetail problem(Decision denied) {
    RateLimitProblem p = RateLimitProblem.of(denied);
    ProblemDetail pd = ProblemDetail.forStatusAndDetail(HttpStatus.valueOf(p.status()), p.detail());
    pd.setType(p.type());
    pd.setTitle(p.title());
    if (!p.violatedPolicies().isEmpty()) {
      pd.setProperty(RateLimitProblem.VIOLATED_POLICIES, p.violatedPolicies());
    }
    return pd;
  }

  /** A request the limiter refused (a missing or malformed attribute): 400, in the same form. */
  public static ProblemDetail badRequest(String detail) {
    return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, detail);
  }

  /**
   * {@code p} in JSON as Spring's converters write a {@link ProblemDetail} (its properties at
   * the top level), for the filters, which answer before any converter runs.
   */
  public static String json(ProblemDetail p) {
    StringBuilder b = new StringBuilder(256).append('{');
    field(b, "type", p.getType() == null ? "about:blank" : p.getType().toString());
    if (p.getTitle() != null) {
      field(b, "title", p.getTitle());
    }
    b.append("\"status\":").append(p.getStatus()).append(',');
    if (p.getDetail() != null) {
      field(b, "detail", p.getDetail());
    }
    if (p.getInstance() != null) {
      field(b, "instance", p.getInstance().toString());
    }
    if (p.getProperties() != null) {
      for (Map.Entry<String, Object> e : p.getProperties().entrySet()) {
        string(b, e.getKey());
        b.append(':');
        value(b, e.getValue());
        b.append(',');
      }
    }
    b.setLength(b.length() - 1);
    return b.append('}').toString();
  }

  private static void field(StringBuilder b, String name, String value) {
    string(b, name);
    b.append(':');
    string(b, value);
    b.append(',');
  }

  private static void value(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof Number || v instanceof Boolean) {
      b.append(v);
    } else if (v instanceof List<?> list) {
      b.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        value(b, list.get(i));
      }
      b.append(']');
    } else {
      string(b, v.toString());
    }
  }

  private static void string(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
