package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.InvalidKeyException;
import dev.sluice.policy.Page;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyFullException;
import dev.sluice.RuleSet;
import dev.sluice.UnknownRuleException;
import dev.sluice.config.ConfigLoader;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the handlers of {@link PolicyApi}'s resources share: the policies and rules they act on,
 * the strict reading of paths, queries and bodies, and the answers, a refusal of the policies
 * mapped to the status and code that name what was wrong.
 */
abstract class PolicyApiHandler {
  /** One logger for every admin endpoint, as when they were one class. */
  static final Logger LOG = LoggerFactory.getLogger(PolicyApi.class);

  /** Entries a listing returns when {@code count} is not given. */
  static final int DEFAULT_PAGE = 100;
  /** The longest cursor ({@code after}) read: a rule name, a space and a key. */
  static final int MAX_CURSOR_CHARS = 70_000;

  private final Supplier<Policies> policies;
  final Supplier<RuleSet> rules;
  final Clock clock;
  /** How failures that are not the policies' own are answered (the API's common rendering). */
  private final Function<Throwable, HttpResponse> otherFailure;

  PolicyApiHandler(Supplier<Policies> policies, Supplier<RuleSet> rules, Clock clock,
      Function<Throwable, HttpResponse> otherFailure) {
    this.policies = policies;
    this.rules = rules;
    this.clock = clock;
    this.otherFailure = otherFailure;
  }

  Policies policies() throws ApiException {
    try {
      return policies.get();
    } catch (UnsupportedOperationException e) {
      throw unsupported();
    }
  }

  /** The limiter's policies, null when its store keeps none. */
  Policies policiesOrNull() {
    try {
      return policies.get();
    } catch (UnsupportedOperationException e) {
      return null;
    }
  }

  static ApiException unsupported() {
    return new ApiException(503, "unsupported", "this service's store keeps no policies (live limits, bans, lists, "
        + "audit); use the memory or the Redis store");
  }

  /** A rule in force, named in a path or a query. */
  String rule(String name) throws ApiException {
    if (rules.get().get(name) == null) {
      throw ApiException.badRequest("unknown_rule", "unknown rule '" + clip(name) + "'");
    }
    return name;
  }

  static String key(String key) throws ApiException {
    if (key.isEmpty()) {
      throw ApiException.badRequest("invalid_key", "'key' must not be empty");
    }
    return key;
  }

  static List<String> segments(ServiceRequestContext ctx, String prefix, int n, String shape) throws ApiException {
    return PathSegments.of(ctx, prefix, n, shape);
  }

  /** The query, with only {@code allowed} parameters, each at most once. */
  static QueryParams query(ServiceRequestContext ctx, Set<String> allowed) throws ApiException {
    QueryParams q = ctx.queryParams();
    for (String name : q.names()) {
      if (!allowed.contains(name)) {
        throw ApiException.badRequest("invalid_request", "unknown query parameter '" + clip(name) + "'; expected "
            + String.join(", ", allowed.stream().sorted().toList()));
      }
      if (q.getAll(name).size() > 1) {
        throw ApiException.badRequest("invalid_request", "query parameter '" + name + "' is given more than once");
      }
    }
    return q;
  }

  static String after(QueryParams q) throws ApiException {
    String after = q.get("after");
    if (after != null && (after.isEmpty() || after.length() > MAX_CURSOR_CHARS)) {
      throw ApiException.badRequest("invalid_page", "'after' must be the 'next' of an earlier page, was "
          + (after.isEmpty() ? "empty" : "too long"));
    }
    return after;
  }

  static int count(QueryParams q, int fallback) throws ApiException {
    return intParam(q, "count", fallback, 1, Policies.MAX_PAGE, "invalid_page");
  }

  static int intParam(QueryParams q, String name, int fallback, int min, int max, String code)
      throws ApiException {
    String v = q.get(name);
    if (v == null) {
      return fallback;
    }
    long n;
    try {
      n = v.length() > 12 ? Long.MAX_VALUE : Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(code, "'" + name + "' must be an integer from " + min + " to " + max + ", was '"
          + clip(v) + "'");
    }
    if (n < min || n > max) {
      throw ApiException.badRequest(code, "'" + name + "' must be from " + min + " to " + max + ", was " + clip(v));
    }
    return (int) n;
  }

  /** GET and DELETE take no body, nor does PUT on a list entry: one sent is a mistake, said so. */
  static void noBody(AggregatedHttpRequest req) throws ApiException {
    if (!req.content().isEmpty()) {
      throw ApiException.badRequest("invalid_request", req.method() + " on this path takes no body");
    }
  }

  static void onlyFields(JsonNode n, String at, Set<String> allowed, String code) throws ApiException {
    try {
      RequestJson.onlyFields(n, at, allowed);
    } catch (ApiException e) {
      throw ApiException.badRequest(code, e.getMessage());
    }
  }

  static Duration duration(String text, String field, String code) throws ApiException {
    Duration d;
    try {
      d = ConfigLoader.parseDuration(text, "'" + field + "'");
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(code, ClientMessages.of(e, "'" + field + "' must be a duration such as 1m, "
          + "was '" + clip(text) + "'"));
    }
    if (d.isNegative() || d.isZero()) {
      throw ApiException.badRequest(code, "'" + field + "' must be > 0, was '" + clip(text) + "'");
    }
    return d;
  }


  /**
   * {@code stage}'s answer: now if it is there, else later. The policies' refusals become 400s
   * (507 when the policies held are at their bound);
   * an argument they refuse without saying which is answered with {@code code}, the one of the
   * request's field that can be wrong by then.
   */
  <T> HttpResponse answer(CompletionStage<T> stage, Function<T, HttpResponse> respond, String code) {
    CompletableFuture<T> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return respond.apply(f.join());
    }
    return HttpResponse.of(f.thenApply(respond).exceptionally(t -> failure(t, code)));
  }

  HttpResponse failure(Throwable t, String code) {
    Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    if (c instanceof UnknownRuleException e) {
      return HttpApi.error(ApiException.badRequest("unknown_rule", "unknown rule '" + clip(e.rule()) + "'"));
    }
    if (c instanceof InvalidKeyException e) {
      return HttpApi.error(ApiException.badRequest(code.equals("invalid_entry") ? code : "invalid_key",
          (code.equals("invalid_entry") ? "the entry " : "'key' ") + e.problem()));
    }
    if (c instanceof UnsupportedOperationException) {
      return HttpApi.error(unsupported());
    }
    if (c instanceof PolicyFullException) {
      // 507 Insufficient Storage: the request is fine, the policies held are at their bound.
      return HttpApi.error(new ApiException(507, "policies_full", ClientMessages.of(c,
          "the policies held are at their bound; remove some before adding more")));
    }
    if (c instanceof IllegalArgumentException) {
      return HttpApi.error(ApiException.badRequest(code, ClientMessages.of(c, "the request is not valid")));
    }
    return otherFailure.apply(c);
  }

  static HttpResponse ok(HttpApi.JsonWriter w) {
    return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, HttpApi.write(w));
  }

  static HttpResponse noContent() {
    return HttpResponse.of(HttpStatus.NO_CONTENT);
  }

  static HttpResponse notFound(String message) {
    return HttpApi.error(new ApiException(404, "not_found", message));
  }

  interface ItemWriter<T> {
    void write(JsonGenerator g, T item) throws IOException;
  }

  static <T> void writePage(JsonGenerator g, Page<T> page, ItemWriter<T> item) throws IOException {
    g.writeStartObject();
    g.writeArrayFieldStart("items");
    for (T t : page.items()) {
      item.write(g, t);
    }
    g.writeEndArray();
    if (page.next() == null) {
      g.writeNullField("next");
    } else {
      g.writeStringField("next", page.next());
    }
    g.writeEndObject();
  }

  static String names(Set<String> names) {
    if (names.isEmpty()) {
      return "(none)";
    }
    List<String> l = names.stream().limit(20).toList();
    return String.join(", ", l) + (names.size() > l.size() ? ", ..." : "");
  }

  static String clip(String s) {
    return RequestJson.clip(s);
  }
}
