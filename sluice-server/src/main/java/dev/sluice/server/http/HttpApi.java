package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.ContentTooLargeException;
import com.linecorp.armeria.common.ExchangeType;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpObject;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.common.ResponseHeadersBuilder;
import com.linecorp.armeria.common.encoding.StreamDecoder;
import com.linecorp.armeria.common.encoding.StreamDecoderFactory;
import com.linecorp.armeria.common.util.CompositeException;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.HttpStatusException;
import com.linecorp.armeria.server.RoutingContext;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.ServerErrorHandler;
import com.linecorp.armeria.server.ServiceConfig;
import com.linecorp.armeria.server.ServiceRequestContext;
import com.linecorp.armeria.server.encoding.DecodingService;
import dev.sluice.Attribute;
import dev.sluice.Decision;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.RateLimitProblem;
import dev.sluice.InvalidCostException;
import dev.sluice.InvalidAttributeException;
import dev.sluice.InvalidKeyException;
import dev.sluice.MissingAttributeException;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.UnknownOperationException;
import dev.sluice.Item;
import dev.sluice.KeyOverride;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.UnknownRuleException;
import dev.sluice.Window;
import dev.sluice.server.DecisionJson;
import dev.sluice.server.StoreHealth;
import dev.sluice.server.FatalErrors;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.config.SourceFile;
import dev.sluice.internal.log.ThrottledLog;
import dev.sluice.spi.LeaseBoard;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.util.AsciiString;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP JSON API (SPEC §7): {@code POST /v1/acquire}, {@code GET /v1/rules},
 * {@code POST /v1/reset}, {@code GET /metrics}, {@code GET /healthz}, {@code GET /readyz}, and the
 * admin endpoints of policies ({@link PolicyApi}). Client
 * mistakes get {@code 400} and {@code {"error":{"code","message"}}}, or a problem for a client
 * that prefers {@code application/problem+json} ({@link ProblemJson}), as a denial is then; no
 * answer ever carries a stack trace.
 */
public final class HttpApi {
  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
  private static final JsonFactory JSON = new JsonFactory();
  // Names Armeria does not know, validated once rather than on every answer.
  private static final AsciiString POLICY = HttpHeaderNames.of(RateLimitHeaders.POLICY);
  private static final AsciiString RATELIMIT = HttpHeaderNames.of(RateLimitHeaders.RATELIMIT);

  /** "x-gzip" is gzip (RFC 9110, 8.4.1.3). */
  private static final StreamDecoderFactory X_GZIP = new StreamDecoderFactory() {
    @Override
    public String encodingHeaderValue() {
      return "x-gzip";
    }

    @Override
    public StreamDecoder newDecoder(ByteBufAllocator alloc, int maxLength) {
      return StreamDecoderFactory.gzip().newDecoder(alloc, maxLength);
    }
  };

  private final RateLimiter limiter;
  private final ConfigReloader config;
  private final PrometheusMeterRegistry prometheus;
  private final RequestJson requests;
  private final long maxBodyBytes;
  private final AdminGuard admin;
  private final long readyTimeoutMillis;
  private final RateLimitHeaders rateLimitHeaders = new RateLimitHeaders();
  private final StoreHealth storeHealth;
  private final Optional<LeaseBoard> leaseBoard;
  /** Failures that are not the client's: a line per kind every 10 s, however many requests fail. */
  private final ThrottledLog failures = new ThrottledLog(LOG::warn);

  /**
   * @param maxBodyBytes the largest request body accepted
   * @param admin who may use the admin endpoints ({@code /v1/reset})
   * @param storeHealth the outcomes of the limiter's store calls, for {@code /readyz}; if null,
   *     readiness rests on the store's ping alone
   * @param leaseBoard the lease board of the limiter's store, for {@code GET /v1/leases}; empty if
   *     it keeps none (or is not known)
   */
  public HttpApi(RateLimiter limiter, ConfigReloader config, PrometheusMeterRegistry prometheus, long maxBodyBytes,
      AdminGuard admin, StoreHealth storeHealth, Optional<LeaseBoard> leaseBoard) {
    this(limiter, config, prometheus, maxBodyBytes, admin, storeHealth, leaseBoard, false);
  }

  /**
   * @param trustRequestTime whether {@code POST /v1/acquire} honours a body's {@code "atMicros"}
   *     (replay and tests only: a caller choosing its time can free its own windows)
   */
  public HttpApi(RateLimiter limiter, ConfigReloader config, PrometheusMeterRegistry prometheus, long maxBodyBytes,
      AdminGuard admin, StoreHealth storeHealth, Optional<LeaseBoard> leaseBoard, boolean trustRequestTime) {
    this.requests = new RequestJson(trustRequestTime);
    this.storeHealth = storeHealth;
    this.leaseBoard = Objects.requireNonNull(leaseBoard, "leaseBoard");
    this.limiter = limiter;
    this.config = config;
    this.prometheus = prometheus;
    this.maxBodyBytes = maxBodyBytes;
    this.admin = admin;
    this.readyTimeoutMillis = 2_000;
  }

  /** Binds the API's routes and its error rendering. */
  public void bind(ServerBuilder sb) {
    // A body sent with Content-Encoding gzip or deflate is decoded before it is read, and the
    // limit applies to what it decodes to (the decoder stops there: a small bomb cannot grow
    // into memory). Without the header, the body passes through untouched.
    var decoding = DecodingService.newDecorator(StreamDecoderFactory.gzip(), X_GZIP, StreamDecoderFactory.deflate());
    sb.route().post("/v1/acquire").maxRequestLength(maxBodyBytes).decorator(decoding).build(body(this::acquire));
    sb.route().post("/v1/reset").maxRequestLength(maxBodyBytes).decorator(decoding).build(body(this::reset));
    sb.route().get("/v1/rules").build((ctx, req) -> json(HttpStatus.OK, rulesJson()));
    new PolicyApi(limiter, leaseBoard, admin).bind(sb, maxBodyBytes, this::failure);
    sb.route().get("/metrics").build((ctx, req) -> HttpResponse.of(HttpStatus.OK,
        MediaType.parse("text/plain; version=0.0.4; charset=utf-8"), prometheus.scrape()));
    sb.route().get("/healthz").build((ctx, req) -> json(HttpStatus.OK, "{\"status\":\"ok\"}"));
    sb.route().get("/readyz").build((ctx, req) -> HttpResponse.of(ready()));
    sb.errorHandler(new ErrorRenderer());
    sb.decorator(ProblemJson.errorsAsProblems());
    // Armeria reports every 10 s, with its whole stack trace, each exception that no logging
    // decorator saw — a client's body over the limit among them: 40 lines for a 400. The API
    // answers those itself and logs what is worth a line (failure()).
    sb.unloggedExceptionsReportInterval(Duration.ZERO);
  }

  private interface BodyHandler {
    /** The answer, or a stage of it ({@link #answer}) when it comes later. */
    HttpResponse handle(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException;
  }

  /**
   * Reads the whole body (bounded), runs {@code h}, and turns every failure into a JSON error.
   *
   * <p>The route is unary, so Armeria hands over the body already read, and the request is
   * decided and answered on the event loop that read it, without a hop. A decision already made
   * (a store in process memory) is answered at once, with nothing deferred; a remote store
   * answers later, on its client's thread, and the event loop never waits for it.
   */
  private HttpService body(BodyHandler h) {
    return new HttpService() {
      @Override
      public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        CompletableFuture<AggregatedHttpRequest> body = req.aggregate();
        if (body.isDone() && !body.isCompletedExceptionally()) {
          return handle(h, ctx, body.join());
        }
        return HttpResponse.of(body.thenApply(agg -> handle(h, ctx, agg)).exceptionally(HttpApi.this::failure));
      }

      @Override
      public ExchangeType exchangeType(RoutingContext routingContext) {
        return ExchangeType.UNARY;
      }
    };
  }

  private HttpResponse handle(BodyHandler h, ServiceRequestContext ctx, AggregatedHttpRequest agg) {
    try {
      String encoding = agg.headers().get(HttpHeaderNames.CONTENT_ENCODING);
      if (encoding != null && !encoding.strip().equalsIgnoreCase("identity")) {
        // The decoder took the encodings it reads off the request: this one is another.
        throw new ApiException(415, "unsupported_encoding", "Content-Encoding '" + clip(encoding)
            + "' is not read here; send the body as it is, or with gzip or deflate");
      }
      return h.handle(ctx, agg);
    } catch (ApiException e) {
      return error(e);
    } catch (RuntimeException e) {
      return failure(e);
    }
  }

  /**
   * {@code stage}'s answer: now if it is there, else later; a failure becomes a JSON error.
   *
   * @param shape how the request gave its items, so that errors name the field at fault: {@link
   *     RequestJson.Shape#LISTED} names {@code items[i]}
   */
  private <T> HttpResponse answer(CompletionStage<T> stage, Function<T, HttpResponse> respond,
      RequestJson.Shape shape) {
    CompletableFuture<T> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return respond.apply(f.join());
    }
    return HttpResponse.of(f.thenApply(respond).exceptionally(t -> failure(t, shape)));
  }

  private HttpResponse failure(Throwable t) {
    return failure(t, RequestJson.Shape.SINGLE);
  }

  private HttpResponse failure(Throwable t, RequestJson.Shape shape) {
    Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    // A body that fails to decode fails the request with several exceptions at once.
    if (c instanceof CompositeException composite) {
      for (Throwable e : composite.getExceptions()) {
        if (e instanceof DecompressionException || e instanceof ContentTooLargeException) {
          c = e;
          break;
        }
      }
    }
    FatalErrors.check(c);
    if (c instanceof HttpStatusException h && h.httpStatus() != HttpStatus.REQUEST_ENTITY_TOO_LARGE) {
      return errorResponse(h.httpStatus()).toHttpResponse();
    }
    if (c instanceof ContentTooLargeException || c instanceof HttpStatusException) {
      return bodyTooLarge().toHttpResponse();
    }
    if (c instanceof ApiException a) {
      return error(a);
    }
    if (c instanceof DecompressionException) {
      return error(ApiException.badRequest("malformed_body",
          "the request body is not valid data of its Content-Encoding (gzip or deflate)"));
    }
    ApiException refused = refused(c, shape);
    if (refused != null) {
      return error(refused);
    }
    if (c instanceof IllegalArgumentException || c instanceof ArithmeticException) {
      // The limiter's and the store's other refusals speak to the client too.
      return error(ApiException.badRequest("invalid_request", ClientMessages.of(c, "the request is not valid")));
    }
    if (c instanceof java.io.IOException || c instanceof com.linecorp.armeria.common.ClosedSessionException
        || c instanceof com.linecorp.armeria.common.stream.ClosedStreamException
        || c instanceof com.linecorp.armeria.common.ResponseCompleteException) {
      // The client went away; nobody is left to answer.
      LOG.debug("request abandoned: {}", c.toString());
    } else {
      Throwable cause = c;
      failures.log(c.getClass().getName(), () -> "request failed: " + cause);
    }
    return error(new ApiException(503, "unavailable", "the request could not be decided; try again"));
  }

  private HttpResponse acquire(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    RequestJson.Acquire a = requests.acquire(req.content().array());
    boolean problem = ProblemJson.preferred(req.headers());
    Function<Decision, HttpResponse> respond = d -> decisionResponse(d, problem);
    if (a.operation() != null) {
      return answer(limiter.acquireAsync(a.operation()), respond, RequestJson.Shape.OPERATION);
    }
    return answer(limiter.acquireAsync(a.request()), respond,
        a.listed() ? RequestJson.Shape.LISTED : RequestJson.Shape.SINGLE);
  }

  /**
   * The API's error for a request the limiter refused (its rule, key or cost), or null for any
   * other failure. The limiter is the one judge of a request: the API names the field at fault
   * ({@code 'items[1].key'}) in the limiter's words.
   *
   * @param shape how the request gave its items: as a list, named {@code items[i]}, or by
   *     operation, whose keys the client did not write
   */
  private static ApiException refused(Throwable t, RequestJson.Shape shape) {
    if (t instanceof UnknownRuleException e) {
      return ApiException.badRequest("unknown_rule", "unknown rule '" + RequestJson.clip(e.rule()) + "'");
    }
    if (t instanceof InvalidKeyException e) {
      if (shape == RequestJson.Shape.OPERATION) {
        return ApiException.badRequest("invalid_key", "the key of rule '" + RequestJson.clip(e.rule())
            + "' made from 'attributes' " + e.problem());
      }
      return ApiException.badRequest("invalid_key",
          "'" + (shape == RequestJson.Shape.LISTED ? "items[" + e.item() + "]." : "") + "key' " + e.problem());
    }
    if (t instanceof UnknownOperationException e) {
      return ApiException.badRequest("unknown_operation", "unknown operation '" + RequestJson.clip(e.operation())
          + "'");
    }
    if (t instanceof MissingAttributeException e) {
      return ApiException.badRequest("missing_attribute", e.rule() == null ? e.getMessage()
          : "'attributes." + e.attribute() + "' is required: operation '" + RequestJson.clip(e.operation())
              + "' needs it for the key of rule '" + e.rule() + "'");
    }
    if (t instanceof InvalidAttributeException e) {
      return RequestJson.invalidAttribute(e);
    }
    if (t instanceof InvalidCostException e) {
      return ApiException.badRequest("invalid_cost", e.getMessage());
    }
    return null;
  }

  /**
   * @param problem whether the client prefers a denial as a problem ({@link ProblemJson}); its
   *     status is then the problem's (503 for a store that failed closed, not the JSON's 429)
   */
  private HttpResponse decisionResponse(Decision d, boolean problem) {
    RateLimitProblem p = problem && !d.allowed() ? RateLimitProblem.of(d) : null;
    HttpData body = p == null ? DecisionJson.httpBody(d) : ProblemJson.body(p, d);
    ResponseHeadersBuilder h = ResponseHeaders.builder(d.allowed() ? HttpStatus.OK
            : p == null ? HttpStatus.TOO_MANY_REQUESTS : HttpStatus.valueOf(p.status()))
        .contentType(p == null ? MediaType.JSON_UTF_8 : ProblemJson.PROBLEM).contentLength(body.length());
    RateLimitHeaders.Values v = rateLimitHeaders.of(d);
    if (!v.isEmpty()) {
      h.add(POLICY, v.policy());
      h.add(RATELIMIT, v.rateLimit());
    }
    long retry = RateLimitHeaders.retryAfterSeconds(d);
    if (retry >= 0) {
      h.add(HttpHeaderNames.RETRY_AFTER, Long.toString(retry));
    }
    // The headers and the body as they are: HttpResponse.of(headers, body) would copy the headers
    // to set the length, validating every value again (3% of a request's CPU; benchmarks.md, 3).
    return HttpResponse.of(new HttpObject[] {h.build(), body});
  }

  /**
   * The token of {@code Authorization: Bearer <token>}, or null. The scheme is matched in any
   * letter case (RFC 7235, 2.1), and spaces around the token are not part of it.
   */
  static String bearerToken(String authorization) {
    if (authorization == null) {
      return null;
    }
    String a = authorization.strip();
    int space = a.indexOf(' ');
    if (space < 0 || !a.substring(0, space).equalsIgnoreCase("Bearer")) {
      return null;
    }
    String token = a.substring(space + 1).strip();
    return token.isEmpty() ? null : token;
  }

  private HttpResponse reset(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    admin.check("/v1/reset", bearerToken(req.headers().get(HttpHeaderNames.AUTHORIZATION)));
    Item it = requests.ruleAndKey(req.content().array());
    return answer(limiter.reset(it.rule(), it.key()), v -> {
      LOG.info("reset of rule '{}' for one key done", it.rule());
      return json(HttpStatus.OK, write(g -> {
        g.writeStartObject();
        g.writeBooleanField("reset", true);
        g.writeStringField("rule", it.rule());
        g.writeStringField("key", it.key());
        g.writeEndObject();
      }));
    }, RequestJson.Shape.SINGLE);
  }

  /**
   * 200 while the store answers: its calls are not failing (a store may answer PING and fail
   * every decision: Redis out of memory) and it answers a ping within the timeout.
   */
  private CompletionStage<HttpResponse> ready() {
    StoreHealth.Status health = storeHealth == null ? null : storeHealth.status();
    if (health != null && health.failing()) {
      return CompletableFuture.completedFuture(json(HttpStatus.SERVICE_UNAVAILABLE, write(g -> {
        g.writeStartObject();
        g.writeStringField("status", "store failing");
        g.writeStringField("message", "the store's last " + health.failedCalls() + " calls failed, over "
            + health.failingFor().toMillis() + " ms; decisions follow each rule's failure mode");
        g.writeEndObject();
      })));
    }
    return limiter.ping().toCompletableFuture().orTimeout(readyTimeoutMillis, TimeUnit.MILLISECONDS)
        .handle((ok, err) -> Boolean.TRUE.equals(ok) && err == null
            ? json(HttpStatus.OK, "{\"status\":\"ready\"}")
            : json(HttpStatus.SERVICE_UNAVAILABLE, "{\"status\":\"store unreachable\"}"));
  }

  private String rulesJson() {
    var cfg = config.current();
    ConfigReloader.Status st = config.status();
    return write(g -> {
      g.writeStartObject();
      g.writeNumberField("generation", st.generation());
      g.writeStringField("loadedAt", st.loadedAt().toString());
      g.writeObjectFieldStart("lastReload");
      g.writeBooleanField("ok", st.lastError() == null);
      if (st.lastError() == null) {
        g.writeNullField("error");
      } else {
        g.writeStringField("error", st.lastError());
        g.writeStringField("at", st.lastErrorAt().toString());
      }
      g.writeEndObject();
      g.writeArrayFieldStart("sources");
      for (SourceFile s : cfg.sources()) {
        g.writeStartObject();
        g.writeStringField("file", s.file());
        g.writeStringField("format", s.format());
        g.writeStringField("version", s.version());
        if (s.domain() != null) {
          g.writeStringField("domain", s.domain());
        }
        g.writeNumberField("rules", s.rules().size());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart("rules");
      for (Rule r : limiter.rules().rules()) {
        g.writeStartObject();
        g.writeStringField("name", r.name());
        SourceFile s = cfg.sourceOf(r.name());
        if (s != null) {
          g.writeStringField("source", s.file());
          g.writeStringField("version", s.version());
        }
        g.writeStringField("algorithm", r.algorithm().configName());
        writeWindows(g, r.windows());
        if (r.algorithm() == dev.sluice.Algorithm.LEAKY_BUCKET) {
          g.writeNumberField("maxWaitMs", r.maxWait().toMillis());
        }
        if (!r.overrides().isEmpty()) {
          g.writeArrayFieldStart("overrides");
          for (KeyOverride o : r.overrides()) {
            g.writeStartObject();
            g.writeArrayFieldStart("keys");
            for (String k : o.keys()) {
              g.writeString(k);
            }
            g.writeEndArray();
            writeWindows(g, o.windows());
            g.writeEndObject();
          }
          g.writeEndArray();
        }
        g.writeBooleanField("shadow", r.shadow());
        g.writeStringField("failureMode", r.failureMode().configName());
        writePolicies(g, r, limiter.rules());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeObjectFieldStart("tiers");
      for (java.util.Map.Entry<String, java.util.List<Window>> t : limiter.rules().tiers().entrySet()) {
        g.writeFieldName(t.getKey());
        g.writeStartObject();
        writeWindows(g, t.getValue());
        g.writeEndObject();
      }
      g.writeEndObject();
      writeOperations(g, limiter.rules());
      g.writeEndObject();
    });
  }

  /** A rule's ban and audit policies and its configured access lists, when it has them. */
  private static void writePolicies(JsonGenerator g, Rule r, dev.sluice.RuleSet rules) throws IOException {
    if (r.ban() != null) {
      g.writeObjectFieldStart("ban");
      g.writeNumberField("after", r.ban().after());
      g.writeNumberField("withinMs", r.ban().within().toMillis());
      g.writeNumberField("forMs", r.ban().duration().toMillis());
      g.writeEndObject();
    }
    if (r.lease() != null) {
      g.writeObjectFieldStart("lease");
      g.writeNumberField("leaseLengthMs", r.lease().leaseLength().toMillis());
      g.writeNumberField("reportIntervalMs", r.lease().reportInterval().toMillis());
      g.writeNumberField("slack", r.lease().slack());
      g.writeEndObject();
    }
    if (r.audit() != null) {
      g.writeObjectFieldStart("audit");
      g.writeNumberField("keep", r.audit().keep());
      g.writeStringField("attribute", r.audit().attribute());
      g.writeEndObject();
    }
    for (dev.sluice.policy.ListKind kind : dev.sluice.policy.ListKind.values()) {
      java.util.List<String> entries = rules.lists(kind).get(r.name());
      if (entries != null) {
        g.writeArrayFieldStart(kind.wireName());
        for (String e : entries) {
          g.writeString(e);
        }
        g.writeEndArray();
      }
    }
  }

  /** The operations in force and the typed attributes they read, as the configuration gives them. */
  private static void writeOperations(JsonGenerator g, dev.sluice.RuleSet rules) throws IOException {
    g.writeArrayFieldStart("attributes");
    for (Attribute a : rules.attributes()) {
      g.writeStartObject();
      g.writeStringField("name", a.name());
      g.writeStringField("type", a.type().configName());
      if (a.ipv4Prefix() != Attribute.NO_GROUPING) {
        g.writeStringField("group", "/" + a.ipv4Prefix());
      }
      if (a.ipv6Prefix() != Attribute.NO_GROUPING) {
        g.writeStringField("group6", "/" + a.ipv6Prefix());
      }
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeArrayFieldStart("operations");
    for (Operation op : rules.operations()) {
      g.writeStartObject();
      g.writeStringField("name", op.name());
      g.writeArrayFieldStart("items");
      for (OperationItem it : op.items()) {
        g.writeStartObject();
        g.writeStringField("rule", it.rule());
        g.writeStringField("key", it.key());
        if (it.when() != null) {
          g.writeStringField("when", it.when());
        }
        if (it.unless() != null) {
          g.writeStringField("unless", it.unless());
        }
        g.writeNumberField("cost", it.cost());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    g.writeEndArray();
  }

  private static void writeWindows(JsonGenerator g, java.util.List<Window> ws) throws IOException {
    g.writeArrayFieldStart("windows");
    for (Window w : ws) {
      g.writeStartObject();
      g.writeNumberField("limit", w.limit());
      g.writeNumberField("periodMs", w.periodMillis());
      g.writeEndObject();
    }
    g.writeEndArray();
  }

  interface JsonWriter {
    void write(JsonGenerator g) throws IOException;
  }

  static String write(JsonWriter w) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      w.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static HttpResponse json(HttpStatus status, String body) {
    return HttpResponse.of(status, MediaType.JSON_UTF_8, body);
  }

  static HttpResponse error(ApiException e) {
    return errorResponse(e.status, e.code, e.getMessage()).toHttpResponse();
  }

  static AggregatedHttpResponse errorResponse(int status, String code, String message) {
    String body = write(g -> {
      g.writeStartObject();
      g.writeObjectFieldStart("error");
      g.writeStringField("code", code);
      g.writeStringField("message", message);
      g.writeEndObject();
      g.writeEndObject();
    });
    return AggregatedHttpResponse.of(HttpStatus.valueOf(status), MediaType.JSON_UTF_8, body);
  }

  /**
   * Renders errors Armeria finds before a handler runs (unknown path, wrong method, a body over
   * the limit, a bad request line) in the API's error format, and maps a body over the limit to
   * 400 like every other client mistake. Anything a handler throws is answered without a trace.
   */
  private final class ErrorRenderer implements ServerErrorHandler {
    @Override
    public HttpResponse onServiceException(ServiceRequestContext ctx, Throwable cause) {
      return ProblemJson.asProblemIfPreferred(ctx.request().headers(), failure(cause));
    }

    @Override
    public AggregatedHttpResponse onProtocolViolation(ServiceConfig config, RequestHeaders headers, HttpStatus status,
        String description, Throwable cause) {
      // A request Armeria could not decode is the client's mistake, even when the decoder failed
      // with an unexpected exception (a malformed Upgrade header does that) and says 500.
      return ProblemJson.asProblemIfPreferred(headers,
          render(status.isServerError() ? HttpStatus.BAD_REQUEST : status, description));
    }

    @Override
    public AggregatedHttpResponse renderStatus(ServiceRequestContext ctx, ServiceConfig config, RequestHeaders headers,
        HttpStatus status, String description, Throwable cause) {
      if (ctx != null && ctx.path().startsWith("/envoy.")) {
        return null;
      }
      return ProblemJson.asProblemIfPreferred(headers, render(status, description));
    }

    private AggregatedHttpResponse render(HttpStatus status, String description) {
      return errorResponse(status);
    }
  }

  /** The API's error for a status Armeria decided (unknown path, wrong method, body too large...). */
  private AggregatedHttpResponse errorResponse(HttpStatus status) {
    if (status == HttpStatus.REQUEST_ENTITY_TOO_LARGE) {
      return bodyTooLarge();
    }
    String code = switch (status.code()) {
      case 400 -> "bad_request";
      case 404 -> "not_found";
      case 405 -> "method_not_allowed";
      case 415 -> "unsupported_media_type";
      case 503 -> "unavailable";
      default -> status.codeClass() == com.linecorp.armeria.common.HttpStatusClass.CLIENT_ERROR
          ? "client_error" : "server_error";
    };
    String message = status.reasonPhrase().toLowerCase(java.util.Locale.ROOT);
    return errorResponse(status.code(), code, message);
  }

  private AggregatedHttpResponse bodyTooLarge() {
    LOG.debug("a request body over {} bytes was refused", maxBodyBytes);
    return errorResponse(400, "body_too_large", "the request body is larger than " + maxBodyBytes + " bytes");
  }

  /** Echoes a header in a message without letting it grow the message without bound. */
  private static String clip(String s) {
    return s.length() <= 64 ? s : s.substring(0, 64) + "...";
  }
}
