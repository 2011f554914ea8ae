package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.ExchangeType;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.RoutingContext;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.Ban;
import dev.sluice.InvalidKeyException;
import dev.sluice.KeyLimit;
import dev.sluice.ListKind;
import dev.sluice.LiveLimit;
import dev.sluice.Offender;
import dev.sluice.Page;
import dev.sluice.Policies;
import dev.sluice.PolicyFullException;
import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.UnknownRuleException;
import dev.sluice.Window;
import dev.sluice.config.ConfigLoader;
import java.io.IOException;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
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
 * The admin endpoints of the policies kept in the store ({@link Policies}): live limits, bans,
 * access lists, audit and top offenders. Every one is behind the {@link AdminGuard}, as
 * {@code POST /v1/reset} is, including the reads: they tell who uses the service.
 *
 * <p>Path segments are percent-decoded one by one, so a key holding {@code /} is written with
 * {@code %2F}. Bodies are read strictly (the fields named here and nothing else); a refused
 * request is a {@code 400} naming the field, and changes nothing: every check is made before
 * the store is called, by this class or by the limiter.
 */
final class PolicyApi {
  private static final Logger LOG = LoggerFactory.getLogger(PolicyApi.class);

  /** Entries a listing returns when {@code count} is not given. */
  static final int DEFAULT_PAGE = 100;
  /** Offenders {@code /v1/top} returns when {@code count} is not given. */
  static final int DEFAULT_TOP = 10;
  /** Minutes {@code /v1/top} covers when {@code minutes} is not given, and the most it covers. */
  static final int DEFAULT_MINUTES = 5;
  static final int MAX_MINUTES = 60;
  /** The latest expiry a manual ban may have, from now: ten years is "until lifted". */
  static final Duration MAX_BAN = Duration.ofDays(3650);
  /** The longest cursor ({@code after}) read: a rule name, a space and a key. */
  static final int MAX_CURSOR_CHARS = 70_000;

  private static final Set<String> LIMIT_FIELDS = Set.of("tier", "windows");
  private static final Set<String> WINDOW_FIELDS = Set.of("limit", "period");
  private static final Set<String> BAN_FIELDS = Set.of("until", "for");
  private static final Set<String> PAGE_PARAMS = Set.of("rule", "after", "count");
  private static final Set<String> LIST_PAGE_PARAMS = Set.of("after", "count");
  private static final Set<String> TOP_PARAMS = Set.of("rule", "minutes", "count");

  private final Supplier<Policies> policies;
  private final Supplier<RuleSet> rules;
  private final AdminGuard admin;
  private final Clock clock;
  /** How failures that are not the policies' own are answered (the API's common rendering). */
  private Function<Throwable, HttpResponse> otherFailure = t -> HttpApi.error(
      new ApiException(503, "unavailable", "the request could not be answered; try again"));

  /** The policies of {@code limiter}, asked for on each request: a store that keeps none answers 503. */
  PolicyApi(RateLimiter limiter, AdminGuard admin) {
    this(limiter::policies, limiter::rules, admin, Clock.systemUTC());
  }

  /** Over given policies, for tests of the mapping alone. */
  PolicyApi(Policies policies, Supplier<RuleSet> rules, AdminGuard admin, Clock clock) {
    this(() -> policies, rules, admin, clock);
  }

  private PolicyApi(Supplier<Policies> policies, Supplier<RuleSet> rules, AdminGuard admin, Clock clock) {
    this.policies = policies;
    this.rules = rules;
    this.admin = admin;
    this.clock = clock;
  }

  /**
   * Binds the routes.
   *
   * @param maxBodyBytes the largest body read
   * @param otherFailure answers a failure that is not a refusal of the request (a store error)
   */
  void bind(ServerBuilder sb, long maxBodyBytes, Function<Throwable, HttpResponse> otherFailure) {
    this.otherFailure = otherFailure;
    sb.route().get("/v1/limits").build(service("/v1/limits", this::listLimits));
    sb.route().pathPrefix("/v1/limits/").methods(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
        .maxRequestLength(maxBodyBytes).build(service("/v1/limits", this::limit));
    sb.route().get("/v1/bans").build(service("/v1/bans", this::listBans));
    sb.route().pathPrefix("/v1/bans/").methods(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
        .maxRequestLength(maxBodyBytes).build(service("/v1/bans", this::ban));
    sb.route().pathPrefix("/v1/lists/").methods(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
        .maxRequestLength(maxBodyBytes).build(service("/v1/lists", this::list));
    sb.route().pathPrefix("/v1/audit/").methods(HttpMethod.GET).build(service("/v1/audit", this::audit));
    sb.route().get("/v1/top").build(service("/v1/top", this::top));
  }

  private interface Handler {
    HttpResponse handle(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException;
  }

  /** The guard, then {@code h} on the whole (bounded) request; every failure a JSON error. */
  private HttpService service(String endpoint, Handler h) {
    return new HttpService() {
      @Override
      public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        CompletableFuture<AggregatedHttpRequest> body = req.aggregate();
        return HttpResponse.of(body.thenApply(agg -> handle(endpoint, h, ctx, agg)).exceptionally(otherFailure));
      }

      @Override
      public ExchangeType exchangeType(RoutingContext routingContext) {
        return ExchangeType.UNARY;
      }
    };
  }

  private HttpResponse handle(String endpoint, Handler h, ServiceRequestContext ctx, AggregatedHttpRequest req) {
    try {
      admin.check(req.method() + " " + endpoint, HttpApi.bearerToken(req.headers().get(HttpHeaderNames.AUTHORIZATION)));
      String encoding = req.headers().get(HttpHeaderNames.CONTENT_ENCODING);
      if (encoding != null && !encoding.strip().equalsIgnoreCase("identity")) {
        throw new ApiException(415, "unsupported_encoding", "the admin endpoints read bodies as they are; "
            + "send them without Content-Encoding");
      }
      return h.handle(ctx, req);
    } catch (ApiException e) {
      return HttpApi.error(e);
    } catch (RuntimeException e) {
      return failure(e, "invalid_request");
    }
  }

  // ---- live limits

  private HttpResponse limit(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    List<String> p = segments(ctx, "/v1/limits/", 2, "/v1/limits/{rule}/{key}");
    String rule = rule(p.get(0));
    String key = key(p.get(1));
    HttpMethod m = req.method();
    if (m == HttpMethod.GET) {
      noBody(req);
      return answer(policies().limit(rule, key), l -> l.isPresent()
          ? ok(g -> writeLimit(g, rule, key, l.get()))
          : notFound("key '" + clip(key) + "' has no live limit under rule '" + rule + "'"), "invalid_limit");
    }
    if (m == HttpMethod.DELETE) {
      noBody(req);
      return answer(policies().removeLimit(rule, key), removed -> {
        if (removed) {
          LOG.info("live limit of rule '{}' removed for one key", rule);
        }
        return removed ? noContent()
            : notFound("key '" + clip(key) + "' has no live limit under rule '" + rule + "'");
      }, "invalid_limit");
    }
    LiveLimit limit = liveLimit(RequestJson.object(req.content().array()));
    return answer(policies().setLimit(rule, key, limit), v -> {
      LOG.info("live limit of rule '{}' set for one key", rule);
      return ok(g -> writeLimit(g, rule, key, limit));
    }, "invalid_limit");
  }

  private HttpResponse listLimits(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, PAGE_PARAMS);
    String rule = q.get("rule") == null ? null : rule(q.get("rule"));
    String after = after(q);
    int count = count(q, DEFAULT_PAGE);
    return answer(policies().limits(rule, after, count),
        page -> ok(g -> writePage(g, page, (w, l) -> writeLimit(w, l.rule(), l.key(), l.limit()))), "invalid_page");
  }

  /** {@code {"tier": "name"}} or {@code {"windows": [{"limit": 10, "period": "1m"}, ...]}}. */
  private LiveLimit liveLimit(JsonNode body) throws ApiException {
    onlyFields(body, "", LIMIT_FIELDS, "invalid_limit");
    JsonNode tier = body.get("tier");
    JsonNode windows = body.get("windows");
    if ((tier == null) == (windows == null)) {
      throw ApiException.badRequest("invalid_limit",
          "a live limit names a 'tier' or gives 'windows', exactly one of them");
    }
    if (tier != null) {
      if (!tier.isTextual()) {
        throw ApiException.badRequest("invalid_limit", "'tier' must be a string, was " + RequestJson.typeName(tier));
      }
      String name = tier.textValue();
      if (rules.get().tier(name) == null) {
        throw ApiException.badRequest("unknown_tier", "unknown tier '" + clip(name) + "'; tiers in force: "
            + names(rules.get().tiers().keySet()));
      }
      return LiveLimit.tier(name);
    }
    if (!windows.isArray()) {
      throw ApiException.badRequest("invalid_limit", "'windows' must be an array, was "
          + RequestJson.typeName(windows));
    }
    if (windows.isEmpty() || windows.size() > LiveLimit.MAX_WINDOWS) {
      throw ApiException.badRequest("invalid_limit", "'windows' must hold 1 to " + LiveLimit.MAX_WINDOWS
          + " windows, held " + windows.size());
    }
    List<Window> ws = new ArrayList<>();
    Set<Duration> periods = new HashSet<>();
    for (int i = 0; i < windows.size(); i++) {
      String at = "windows[" + i + "]";
      JsonNode w = windows.get(i);
      if (!w.isObject()) {
        throw ApiException.badRequest("invalid_limit", "'" + at + "' must be an object, was "
            + RequestJson.typeName(w));
      }
      onlyFields(w, at + ".", WINDOW_FIELDS, "invalid_limit");
      long limit = windowLimit(w.get("limit"), at + ".limit");
      Duration period = windowPeriod(w.get("period"), at + ".period");
      if (!periods.add(period)) {
        throw ApiException.badRequest("invalid_limit", "'" + at + ".period' repeats the period of an earlier "
            + "window; each window has its own period");
      }
      ws.add(new Window(limit, period));
    }
    return LiveLimit.windows(ws);
  }

  private static long windowLimit(JsonNode n, String field) throws ApiException {
    if (n == null || n.isNull()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' is required");
    }
    if (!n.isIntegralNumber()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be an integer >= 1, was "
          + RequestJson.typeName(n));
    }
    BigInteger v = n.bigIntegerValue();
    if (v.signum() <= 0 || v.bitLength() > 63) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be between 1 and " + Long.MAX_VALUE
          + ", was " + clip(v.toString()));
    }
    return v.longValue();
  }

  private static Duration windowPeriod(JsonNode n, String field) throws ApiException {
    if (n == null || n.isNull()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' is required");
    }
    if (!n.isTextual()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be a duration string such as 1m, was "
          + RequestJson.typeName(n));
    }
    Duration d = duration(n.textValue(), field, "invalid_limit");
    if (d.toNanos() % 1000 != 0) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be a whole number of microseconds");
    }
    return d;
  }

  // ---- bans

  private HttpResponse ban(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    List<String> p = segments(ctx, "/v1/bans/", 2, "/v1/bans/{rule}/{key}");
    String rule = rule(p.get(0));
    String key = key(p.get(1));
    HttpMethod m = req.method();
    if (m == HttpMethod.GET) {
      noBody(req);
      return answer(policies().ban(rule, key), b -> b.isPresent() ? ok(g -> writeBan(g, b.get()))
          : notFound("key '" + clip(key) + "' is not banned under rule '" + rule + "'"), "invalid_expiry");
    }
    if (m == HttpMethod.DELETE) {
      noBody(req);
      return answer(policies().unban(rule, key), lifted -> {
        if (lifted) {
          LOG.info("ban of one key under rule '{}' lifted", rule);
        }
        return lifted ? noContent() : notFound("key '" + clip(key) + "' is not banned under rule '" + rule + "'");
      }, "invalid_expiry");
    }
    Instant until = banUntil(RequestJson.object(req.content().array()));
    return answer(policies().ban(rule, key, until), v -> {
      LOG.info("one key banned under rule '{}' until {}", rule, until);
      return ok(g -> writeBan(g, new Ban(rule, key, until.toEpochMilli(), false)));
    }, "invalid_expiry");
  }

  private HttpResponse listBans(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, PAGE_PARAMS);
    String rule = q.get("rule") == null ? null : rule(q.get("rule"));
    String after = after(q);
    int count = count(q, DEFAULT_PAGE);
    return answer(policies().bans(rule, after, count), page -> ok(g -> writePage(g, page, PolicyApi::writeBan)),
        "invalid_page");
  }

  /** {@code {"until": "2026-01-01T00:00:00Z"}} or {@code {"for": "15m"}}: when the ban ends, after now. */
  private Instant banUntil(JsonNode body) throws ApiException {
    onlyFields(body, "", BAN_FIELDS, "invalid_expiry");
    JsonNode until = body.get("until");
    JsonNode lasts = body.get("for");
    if ((until == null) == (lasts == null)) {
      throw ApiException.badRequest("invalid_expiry", "a ban gives 'until' (a time) or 'for' (a duration), "
          + "exactly one of them");
    }
    Instant now = clock.instant();
    Instant end;
    if (until != null) {
      if (!until.isTextual()) {
        throw ApiException.badRequest("invalid_expiry", "'until' must be a time such as 2030-01-01T00:00:00Z, was "
            + RequestJson.typeName(until));
      }
      try {
        end = OffsetDateTime.parse(until.textValue()).toInstant();
      } catch (DateTimeParseException e) {
        throw ApiException.badRequest("invalid_expiry", "'until' must be a time such as 2030-01-01T00:00:00Z "
            + "(with its offset), was '" + clip(until.textValue()) + "'");
      }
      if (!end.isAfter(now)) {
        throw ApiException.badRequest("invalid_expiry", "'until' " + until.textValue() + " is in the past (now is "
            + now + ")");
      }
      if (end.isAfter(now.plus(MAX_BAN))) {
        throw ApiException.badRequest("invalid_expiry", "'until' is more than 3650 days ahead");
      }
    } else {
      if (!lasts.isTextual()) {
        throw ApiException.badRequest("invalid_expiry", "'for' must be a duration string such as 15m, was "
            + RequestJson.typeName(lasts));
      }
      Duration d = duration(lasts.textValue(), "for", "invalid_expiry");
      if (d.toMillis() < 1) {
        throw ApiException.badRequest("invalid_expiry", "'for' must be at least 1ms, was '"
            + clip(lasts.textValue()) + "'");
      }
      if (d.compareTo(MAX_BAN) > 0) {
        throw ApiException.badRequest("invalid_expiry", "'for' must be at most 3650d, was '"
            + clip(lasts.textValue()) + "'");
      }
      end = now.plus(d);
    }
    // The store keeps milliseconds.
    return Instant.ofEpochMilli(end.toEpochMilli());
  }

  // ---- access lists

  private HttpResponse list(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    HttpMethod m = req.method();
    boolean listing = m == HttpMethod.GET;
    List<String> p = listing ? segments(ctx, "/v1/lists/", 2, "/v1/lists/{allow|deny}/{rule}")
        : segments(ctx, "/v1/lists/", 3, "/v1/lists/{allow|deny}/{rule}/{entry}");
    ListKind kind = switch (p.get(0)) {
      case "allow" -> ListKind.ALLOW;
      case "deny" -> ListKind.DENY;
      default -> throw new ApiException(404, "not_found", "no list '" + clip(p.get(0))
          + "': the lists are /v1/lists/allow/{rule} and /v1/lists/deny/{rule}");
    };
    String rule = rule(p.get(1));
    noBody(req);
    if (listing) {
      QueryParams q = query(ctx, LIST_PAGE_PARAMS);
      String after = after(q);
      int count = count(q, DEFAULT_PAGE);
      return answer(policies().list(kind, rule, after, count), page -> ok(g -> writePage(g, page,
          (w, e) -> w.writeString(e))), "invalid_page");
    }
    String entry = p.get(2);
    if (entry.isEmpty()) {
      throw ApiException.badRequest("invalid_entry", "the list entry is empty");
    }
    if (m == HttpMethod.DELETE) {
      return answer(policies().removeFromList(kind, rule, entry), removed -> {
        if (removed) {
          LOG.info("an entry of the {} list of rule '{}' removed", kind.wireName(), rule);
        }
        return removed ? noContent() : notFound("the " + kind.wireName() + " list of rule '" + rule
            + "' has no run-time entry '" + clip(entry) + "'");
      }, "invalid_entry");
    }
    return answer(policies().addToList(kind, rule, entry), v -> {
      LOG.info("an entry added to the {} list of rule '{}'", kind.wireName(), rule);
      return ok(g -> {
        g.writeStartObject();
        g.writeStringField("list", kind.wireName());
        g.writeStringField("rule", rule);
        g.writeStringField("entry", entry);
        g.writeEndObject();
      });
    }, "invalid_entry");
  }

  // ---- what was recorded

  private HttpResponse audit(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    List<String> p = segments(ctx, "/v1/audit/", 2, "/v1/audit/{rule}/{key}");
    String rule = rule(p.get(0));
    String key = key(p.get(1));
    noBody(req);
    return answer(policies().audit(rule, key), values -> ok(g -> {
      g.writeStartObject();
      g.writeStringField("rule", rule);
      g.writeStringField("key", key);
      g.writeArrayFieldStart("values");
      for (String v : values) {
        g.writeString(v);
      }
      g.writeEndArray();
      g.writeEndObject();
    }), "invalid_request");
  }

  private HttpResponse top(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, TOP_PARAMS);
    if (q.get("rule") == null) {
      throw ApiException.badRequest("invalid_request", "'rule' is required: /v1/top?rule=<rule>&minutes=5&count=10");
    }
    String rule = rule(q.get("rule"));
    int minutes = intParam(q, "minutes", DEFAULT_MINUTES, 1, MAX_MINUTES, "invalid_request");
    int count = count(q, DEFAULT_TOP);
    return answer(policies().top(rule, Duration.ofMinutes(minutes), count), top -> ok(g -> {
      g.writeStartObject();
      g.writeStringField("rule", rule);
      g.writeNumberField("minutes", minutes);
      g.writeArrayFieldStart("items");
      for (Offender o : top) {
        g.writeStartObject();
        g.writeStringField("key", o.key());
        g.writeNumberField("denials", o.denials());
        g.writeNumberField("error", o.error());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }), "invalid_page");
  }

  // ---- reading requests

  private Policies policies() throws ApiException {
    try {
      return policies.get();
    } catch (UnsupportedOperationException e) {
      throw unsupported();
    }
  }

  private static ApiException unsupported() {
    return new ApiException(503, "unsupported", "this service's store keeps no policies (live limits, bans, lists, "
        + "audit); use the memory or the Redis store");
  }

  /** A rule in force, named in a path or a query. */
  private String rule(String name) throws ApiException {
    if (rules.get().get(name) == null) {
      throw ApiException.badRequest("unknown_rule", "unknown rule '" + clip(name) + "'");
    }
    return name;
  }

  private static String key(String key) throws ApiException {
    if (key.isEmpty()) {
      throw ApiException.badRequest("invalid_key", "'key' must not be empty");
    }
    return key;
  }

  static List<String> segments(ServiceRequestContext ctx, String prefix, int n, String shape) throws ApiException {
    return PathSegments.of(ctx, prefix, n, shape);
  }

  static String percentDecoded(String s) throws ApiException {
    return PathSegments.decoded(s, "key");
  }

  /** The query, with only {@code allowed} parameters, each at most once. */
  private static QueryParams query(ServiceRequestContext ctx, Set<String> allowed) throws ApiException {
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

  private static String after(QueryParams q) throws ApiException {
    String after = q.get("after");
    if (after != null && (after.isEmpty() || after.length() > MAX_CURSOR_CHARS)) {
      throw ApiException.badRequest("invalid_page", "'after' must be the 'next' of an earlier page, was "
          + (after.isEmpty() ? "empty" : "too long"));
    }
    return after;
  }

  private static int count(QueryParams q, int fallback) throws ApiException {
    return intParam(q, "count", fallback, 1, Policies.MAX_PAGE, "invalid_page");
  }

  private static int intParam(QueryParams q, String name, int fallback, int min, int max, String code)
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
  private static void noBody(AggregatedHttpRequest req) throws ApiException {
    if (!req.content().isEmpty()) {
      throw ApiException.badRequest("invalid_request", req.method() + " on this path takes no body");
    }
  }

  private static void onlyFields(JsonNode n, String at, Set<String> allowed, String code) throws ApiException {
    try {
      RequestJson.onlyFields(n, at, allowed);
    } catch (ApiException e) {
      throw ApiException.badRequest(code, e.getMessage());
    }
  }

  private static Duration duration(String text, String field, String code) throws ApiException {
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

  // ---- answers

  /**
   * {@code stage}'s answer: now if it is there, else later. The policies' refusals become 400s
   * (507 when the policies held are at their bound);
   * an argument they refuse without saying which is answered with {@code code}, the one of the
   * request's field that can be wrong by then.
   */
  private <T> HttpResponse answer(CompletionStage<T> stage, Function<T, HttpResponse> respond, String code) {
    CompletableFuture<T> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return respond.apply(f.join());
    }
    return HttpResponse.of(f.thenApply(respond).exceptionally(t -> failure(t, code)));
  }

  private HttpResponse failure(Throwable t, String code) {
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

  private static HttpResponse ok(HttpApi.JsonWriter w) {
    return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, HttpApi.write(w));
  }

  private static HttpResponse noContent() {
    return HttpResponse.of(HttpStatus.NO_CONTENT);
  }

  private static HttpResponse notFound(String message) {
    return HttpApi.error(new ApiException(404, "not_found", message));
  }

  private interface ItemWriter<T> {
    void write(JsonGenerator g, T item) throws IOException;
  }

  private static <T> void writePage(JsonGenerator g, Page<T> page, ItemWriter<T> item) throws IOException {
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

  /** A live limit as a PUT body gives it, with its rule and key. */
  private static void writeLimit(JsonGenerator g, String rule, String key, LiveLimit l) throws IOException {
    g.writeStartObject();
    g.writeStringField("rule", rule);
    g.writeStringField("key", key);
    if (l.tier() != null) {
      g.writeStringField("tier", l.tier());
    } else {
      g.writeArrayFieldStart("windows");
      for (Window w : l.windows()) {
        g.writeStartObject();
        g.writeNumberField("limit", w.limit());
        g.writeStringField("period", w.periodText());
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  private static void writeBan(JsonGenerator g, Ban b) throws IOException {
    g.writeStartObject();
    g.writeStringField("rule", b.rule());
    g.writeStringField("key", b.key());
    g.writeStringField("until", Instant.ofEpochMilli(b.untilMillis()).toString());
    g.writeBooleanField("automatic", b.automatic());
    g.writeEndObject();
  }

  private static String names(Set<String> names) {
    if (names.isEmpty()) {
      return "(none)";
    }
    List<String> l = names.stream().limit(20).toList();
    return String.join(", ", l) + (names.size() > l.size() ? ", ..." : "");
  }

  private static String clip(String s) {
    return RequestJson.clip(s);
  }
}
