package dev.sluice.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpHeaders;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.DecoratingHttpServiceFunction;
import dev.sluice.Decision;
import dev.sluice.http.RateLimitProblem;
import dev.sluice.server.DecisionJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * RFC 9457 problem bodies ({@code application/problem+json}) for the clients that ask for them
 * with {@code Accept}: a denial as {@link RateLimitProblem} (the types the Spring Boot starter
 * answers with), and the API's other errors as {@code about:blank} problems that keep their
 * {@code code}. A client that does not prefer problems gets the API's JSON as before.
 */
final class ProblemJson {
  static final MediaType PROBLEM = MediaType.parse(RateLimitProblem.MEDIA_TYPE);
  /** The member that carries the decision's JSON in a denial's problem, so that nothing is lost. */
  static final String DECISION = "decision";
  /** The member that carries the API's error code in an error's problem. */
  static final String CODE = "code";
  private static final ObjectMapper MAPPER = new ObjectMapper();
  /** An Accept value past this is not read: the answer is the API's JSON, as without one. */
  private static final int MAX_ACCEPT_CHARS = 4096;

  private ProblemJson() {}

  /**
   * Whether {@code accept} prefers {@code application/problem+json} to {@code application/json}:
   * each gets the quality of the most specific media range that matches it (RFC 9110, 12.5.1),
   * and the problem must rank higher, or equal and matched more specifically ({@code
   * application/problem+json, *}{@code /*} asks for problems; {@code application/json,
   * application/problem+json} or {@code *}{@code /*} keep the API's JSON, as does a malformed
   * value).
   */
  static boolean preferred(String accept) {
    if (accept == null || accept.length() > MAX_ACCEPT_CHARS || !mentionsProblem(accept)) {
      return false;
    }
    Match problem = new Match();
    Match json = new Match();
    for (String range : accept.split(",")) {
      String[] parts = range.split(";");
      String type = parts[0].strip().toLowerCase(Locale.ROOT);
      int slash = type.indexOf('/');
      if (slash <= 0 || slash == type.length() - 1) {
        continue;
      }
      double q = quality(parts);
      if (Double.isNaN(q)) {
        continue;
      }
      problem.offer(type, "application", "problem+json", slash, q);
      json.offer(type, "application", "json", slash, q);
    }
    if (problem.specificity == 0 || problem.q <= 0) {
      return false;
    }
    return problem.q > json.q || problem.q == json.q && problem.specificity > json.specificity;
  }

  /** Most requests name no problem type: they are answered without parsing their Accept. */
  private static boolean mentionsProblem(String accept) {
    for (int i = accept.indexOf('/'); i >= 0; i = accept.indexOf('/', i + 1)) {
      if (accept.regionMatches(true, i + 1, "problem", 0, 7)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The best range seen for one media type: its specificity (0 none, 1 {@code *}/{@code *}, 2
   * type/{@code *}, 3 exact) and that range's quality.
   */
  private static final class Match {
    int specificity;
    double q;

    void offer(String range, String type, String subtype, int slash, double quality) {
      String t = range.substring(0, slash);
      String s = range.substring(slash + 1);
      int spec = range.equals("*/*") ? 1
          : t.equals(type) && s.equals("*") ? 2
          : t.equals(type) && s.equals(subtype) ? 3 : 0;
      if (spec > specificity) {
        specificity = spec;
        q = quality;
      }
    }
  }

  /** The range's {@code q} (1 when absent), or NaN when it is not a quality value. */
  private static double quality(String[] parts) {
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].strip();
      if (p.length() > 2 && (p.charAt(0) == 'q' || p.charAt(0) == 'Q') && p.charAt(1) == '=') {
        try {
          double q = Double.parseDouble(p.substring(2).strip());
          return q >= 0 && q <= 1 ? q : Double.NaN;
        } catch (NumberFormatException e) {
          return Double.NaN;
        }
      }
    }
    return 1;
  }

  static boolean preferred(HttpHeaders requestHeaders) {
    return requestHeaders != null && preferred(requestHeaders.get(HttpHeaderNames.ACCEPT));
  }

  /**
   * The problem of a denial, with its status (503 for a store that failed closed, else 429) and
   * the decision's JSON as the member {@value #DECISION}: a client that asks for problems still
   * reads every window, as the API's JSON gives them.
   */
  static HttpData body(RateLimitProblem p, Decision d) {
    return HttpData.ofUtf8(HttpApi.write(g -> {
      g.writeStartObject();
      g.writeStringField("type", p.type().toString());
      g.writeStringField("title", p.title());
      g.writeNumberField("status", p.status());
      g.writeStringField("detail", p.detail());
      g.writeArrayFieldStart(RateLimitProblem.VIOLATED_POLICIES);
      for (String name : p.violatedPolicies()) {
        g.writeString(name);
      }
      g.writeEndArray();
      g.writeFieldName(DECISION);
      g.writeRawValue(DecisionJson.httpBody(d).toStringUtf8());
      g.writeEndObject();
    }));
  }

  /**
   * Decorates the API so that its errors ({@code {"error":{"code","message"}}}) are problems for
   * a client that prefers them; everything else passes as it is.
   */
  static DecoratingHttpServiceFunction errorsAsProblems() {
    return (delegate, ctx, req) -> preferred(req.headers())
        ? HttpResponse.of(delegate.serve(ctx, req).aggregate().thenApply(r -> asProblem(r).toHttpResponse()))
        : delegate.serve(ctx, req);
  }

  static HttpResponse asProblemIfPreferred(HttpHeaders requestHeaders, HttpResponse r) {
    return preferred(requestHeaders) ? HttpResponse.of(r.aggregate().thenApply(a -> asProblem(a).toHttpResponse())) : r;
  }

  static AggregatedHttpResponse asProblemIfPreferred(HttpHeaders requestHeaders, AggregatedHttpResponse r) {
    return preferred(requestHeaders) ? asProblem(r) : r;
  }

  /**
   * The API's error {@code r} as an {@code about:blank} problem whose title is the status's
   * phrase, its message the detail and its code the member {@value #CODE}; its other headers
   * ({@code Retry-After}) kept. Any other answer is returned as it is.
   */
  static AggregatedHttpResponse asProblem(AggregatedHttpResponse r) {
    MediaType type = r.contentType();
    if (r.status().code() < 400 || type == null || !type.is(MediaType.JSON)) {
      return r;
    }
    JsonNode error;
    try {
      error = MAPPER.readTree(r.content().array()).path("error");
    } catch (IOException e) {
      return r;
    }
    if (!error.path(CODE).isTextual() || !error.path("message").isTextual()) {
      return r;
    }
    HttpStatus status = r.status();
    String body = HttpApi.write(g -> {
      g.writeStartObject();
      g.writeStringField("type", "about:blank");
      g.writeStringField("title", status.reasonPhrase());
      g.writeNumberField("status", status.code());
      g.writeStringField("detail", error.get("message").textValue());
      g.writeStringField(CODE, error.get(CODE).textValue());
      g.writeEndObject();
    });
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ResponseHeaders headers = r.headers().toBuilder().contentType(PROBLEM).contentLength(bytes.length).build();
    return AggregatedHttpResponse.of(headers, HttpData.wrap(bytes), r.trailers());
  }
}
