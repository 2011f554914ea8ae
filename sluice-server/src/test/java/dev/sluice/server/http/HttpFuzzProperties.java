package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Decision;
import dev.sluice.Request;
import dev.sluice.testing.FuzzCases;
import java.math.BigInteger;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Random bodies, bytes, methods, paths and headers never make the API answer with a server error:
 * whatever a client sends, the answer is a decision (200 / 429) or a client error (4xx), and a
 * 400 always has the error body. A request the API rejects changes nothing: a peek (cost 0) at
 * every key it names shows the state it had before. The service keeps answering {@code /healthz}.
 */
@AddLifecycleHook(FuzzCases.class)
class HttpFuzzProperties {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String TOKEN = "fuzz-token";
  private static RunningService api;

  @BeforeContainer
  static void start() throws Exception {
    api = new RunningService(TOKEN);
  }

  @AfterProperty
  void theServiceStillAnswers() throws Exception {
    assertThat(api.send("GET", "/healthz", null, new byte[0]).statusCode()).isEqualTo(200);
    assertThat(api.send("GET", "/readyz", null, new byte[0]).statusCode()).isEqualTo(200);
  }

  @AfterContainer
  static void stop() throws Exception {
    api.close();
  }

  @Property
  @FuzzCases.Share(20)
  void randomJsonBodiesNeverYieldAServerError(@ForAll("jsonBodies") String body) throws Exception {
    HttpResponse<String> r = api.post("/v1/acquire", body);
    assertThat(r.statusCode()).as(body).isIn(200, 400, 429);
    if (r.statusCode() == 400) {
      assertThat(JSON.readTree(r.body()).get("error").get("code").asText()).isNotEmpty();
      HttpApiBadInputTest.assertNamesNoLibrary(JSON.readTree(r.body()).get("error").get("message").asText());
    } else {
      assertThat(JSON.readTree(r.body()).get("allowed").isBoolean()).isTrue();
    }
  }

  @Property
  @FuzzCases.Share(15)
  void randomBytesNeverYieldAServerError(@ForAll("bytes") byte[] body, @ForAll("knownPaths") String path)
      throws Exception {
    HttpResponse<String> r = api.send("POST", path, "application/json", body);
    assertThat(r.statusCode()).isLessThan(500);
    if (r.statusCode() >= 400) {
      HttpApiBadInputTest.assertNamesNoLibrary(JSON.readTree(r.body()).get("error").get("message").asText());
    }
  }

  @Property
  @FuzzCases.Share(10)
  void randomBytesUnderAnyContentEncodingNeverYieldAServerError(@ForAll("bytes") byte[] body,
      @ForAll("encodings") String encoding) throws Exception {
    HttpResponse<String> r = api.sendWithHeaders("POST", "/v1/acquire", body, "content-encoding", encoding);
    assertThat(r.statusCode()).as(encoding).isLessThan(500);
    if (r.statusCode() >= 400) {
      // The 415 names the encoding it was sent.
      HttpApiBadInputTest.assertNamesNoLibrary(
          JSON.readTree(r.body()).get("error").get("message").asText().replace(encoding.strip(), ""));
    }
  }

  @Provide
  Arbitrary<String> encodings() {
    return Arbitraries.oneOf(Arbitraries.of("gzip", "deflate", "x-gzip", "identity", "br", "GZIP", "gzip, deflate"),
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(12));
  }

  @Property
  @FuzzCases.Share(15)
  void randomHeadersNeverYieldAServerError(@ForAll("methods") String method, @ForAll("paths") String path,
      @ForAll("headerLists") List<String> headers, @ForAll("jsonBodies") String body) throws Exception {
    StringBuilder req = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: fuzz\r\n");
    for (String h : headers) {
      req.append(h).append("\r\n");
    }
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    req.append("Content-Length: ").append(b.length).append("\r\nConnection: close\r\n\r\n");
    byte[] head = req.toString().getBytes(StandardCharsets.UTF_8);
    byte[] all = new byte[head.length + b.length];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(b, 0, all, head.length, b.length);
    int status = api.raw(all);
    // -1: the server refused the request outright and closed the connection, which is fine.
    assertThat(status).as(req.toString()).isLessThan(500);
  }

  @Provide
  Arbitrary<String> methods() {
    return Arbitraries.of("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "FOO");
  }

  @Provide
  Arbitrary<String> knownPaths() {
    return Arbitraries.of("/v1/acquire", "/v1/reset", "/v1/rules", "/metrics", "/healthz");
  }

  @Provide
  Arbitrary<String> paths() {
    return Arbitraries.oneOf(
        Arbitraries.of("/v1/acquire", "/v1/reset", "/v1/rules", "/metrics", "/healthz", "/readyz",
            "/v1/acquire?x=1", "/v1/acquire/", "//v1/acquire", "/v1/%61cquire", "/v1/acquire#f",
            "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"),
        Arbitraries.strings().withCharRange('!', '~').ofMaxLength(30).map(s -> "/" + s.replace(" ", "")));
  }

  @Provide
  Arbitrary<byte[]> bytes() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
  }

  @Provide
  Arbitrary<List<String>> headerLists() {
    Arbitrary<String> names = Arbitraries.oneOf(
        Arbitraries.of("Content-Type", "Content-Encoding", "Transfer-Encoding", "Expect", "Accept",
            "Accept-Encoding", "Authorization", "Upgrade", "HTTP2-Settings", "Te", "Content-Length", "Cookie",
            "X-Forwarded-For", "Range", "If-None-Match", "grpc-timeout", "Origin"),
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(20));
    Arbitrary<String> values = Arbitraries.oneOf(
        Arbitraries.of("application/json", "text/plain", "application/grpc", "gzip", "chunked", "100-continue",
            "h2c", "Bearer x", "-1", "99999999999999999999", "", "bytes=0-1", "trailers", "deflate, br"),
        Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(40),
        Arbitraries.strings().ofMaxLength(10));
    return Combinators.combine(names, values).as((n, v) -> n + ": " + v).list().ofMaxSize(6);
  }

  @Provide
  Arbitrary<String> jsonBodies() {
    Arbitrary<String> valid = json(3).map(v -> {
      try {
        return JSON.writeValueAsString(v);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Arbitrary<String> truncated = Combinators.combine(valid, Arbitraries.integers().between(0, 200))
        .as((s, n) -> s.substring(0, Math.min(n, s.length())));
    return Arbitraries.oneOf(valid, valid, truncated, Arbitraries.strings().ofMaxLength(60));
  }

  private static Arbitrary<Object> json(int depth) {
    Arbitrary<Object> leaf = Arbitraries.oneOf(
        Arbitraries.of("api.call", "tiny", "nope", "", "k", "€", "a\u0000b").map(s -> (Object) s),
        Arbitraries.strings().ofMaxLength(20).map(s -> (Object) s),
        Arbitraries.strings().ofLength(600).map(s -> (Object) s),
        Arbitraries.longs().map(l -> (Object) l),
        Arbitraries.integers().between(-3, 3).map(i -> (Object) i),
        Arbitraries.bigIntegers().between(BigInteger.TWO.pow(70).negate(), BigInteger.TWO.pow(70))
            .map(b -> (Object) b),
        Arbitraries.doubles().map(d -> (Object) d),
        Arbitraries.of(true, false).map(b -> (Object) b),
        Arbitraries.just(null));
    if (depth == 0) {
      return leaf;
    }
    Arbitrary<String> fieldNames = Arbitraries.oneOf(Arbitraries.of("rule", "key", "cost", "items"),
        Arbitraries.strings().ofMaxLength(8));
    Arbitrary<Object> objects = Arbitraries.maps(fieldNames, Arbitraries.lazy(() -> json(depth - 1))).ofMaxSize(4)
        .map(m -> (Object) new LinkedHashMap<>(m));
    Arbitrary<Object> items = Arbitraries.maps(Arbitraries.of("rule", "key", "cost"),
            Arbitraries.lazy(() -> json(0))).ofMaxSize(3).list().ofMaxSize(4)
        .map(l -> (Object) Map.of("items", l));
    Arbitrary<Object> acquire = Combinators.combine(Arbitraries.of("api.call", "tiny", "nope"),
            Arbitraries.strings().ofMaxLength(8), Arbitraries.longs().between(-2, 5))
        .as((r, k, c) -> (Object) Map.of("rule", r, "key", k, "cost", c));
    Arbitrary<Object> lists = Arbitraries.lazy(() -> json(depth - 1)).list().ofMaxSize(4).map(l -> (Object) l);
    return Arbitraries.oneOf(leaf, objects, items, acquire, acquire, lists);
  }
  /** An acquire body, and the (rule, key) pairs in it that a peek can look at. */
  record Body(String text, List<String[]> pairs) {
    @Override
    public String toString() {
      return text.length() <= 2_000 ? text : text.substring(0, 2_000) + "... (" + text.length() + " characters)";
    }
  }

  @Property
  @FuzzCases.Share(30)
  void aRandomAcquireIsDecidedOrRejectedAndARejectedOneConsumesNothing(@ForAll("acquireBodies") Body body)
      throws Exception {
    List<String> before = peek(body.pairs());
    HttpResponse<String> r = api.post("/v1/acquire", body.text());
    Statistics.collect(r.statusCode());
    assertThat(r.statusCode()).as("%s", body).isIn(200, 400, 429);
    if (r.statusCode() == 400) {
      HttpApiBadInputTest.assertNamesNoLibrary(JSON.readTree(r.body()).get("error").get("message").asText());
      assertThat(peek(body.pairs())).as("state after the rejected %s", body).isEqualTo(before);
    }
  }

  @Property
  @FuzzCases.Share(10)
  void aRandomResetIsDoneOrRejectedAndARejectedOneResetsNothing(@ForAll("resetBodies") Body body,
      @ForAll("authorizations") String authorization) throws Exception {
    // Something to reset: one unit consumed at every key the body names.
    for (String[] p : body.pairs()) {
      api.service.limiter().acquire(Request.of(p[0], p[1], 1));
    }
    List<String> before = peek(body.pairs());
    HttpResponse<String> r = authorization.isEmpty()
        ? api.sendWithHeaders("POST", "/v1/reset", body.text().getBytes(StandardCharsets.UTF_8))
        : api.sendWithHeaders("POST", "/v1/reset", body.text().getBytes(StandardCharsets.UTF_8),
            "authorization", authorization);
    Statistics.collect(r.statusCode());
    assertThat(r.statusCode()).as("%s with %s", body, authorization).isIn(200, 400, 401, 403);
    if (r.statusCode() != 200) {
      HttpApiBadInputTest.assertNamesNoLibrary(JSON.readTree(r.body()).get("error").get("message").asText());
      assertThat(peek(body.pairs())).as("state after the rejected %s", body).isEqualTo(before);
    }
  }

  /** Per pair, the room left in each window, by a peek (cost 0) in the service's limiter. */
  private static List<String> peek(List<String[]> pairs) {
    List<String> states = new java.util.ArrayList<>();
    for (String[] p : pairs) {
      Decision d = api.service.limiter().acquire(Request.of(p[0], p[1], 0));
      d.items().get(0).windows().forEach(w -> states.add(p[0] + "/" + p[1] + ": " + w.remaining()));
    }
    return states;
  }

  private static final List<String> RULES = List.of("\"api.call\"", "\"api.call\"", "\"tiny\"", "\"nope\"", "7",
      "null", "[\"api.call\"]", "\"\"", "\"api.call \"", "\"API.CALL\"", "{}", "\"\\u0061pi.call\"");
  /** Keys a peek can look at, as they are written in JSON and as they are. */
  private static final List<String[]> GOOD_KEYS = List.of(new String[] {"\"k\"", "k"},
      new String[] {"\"a\"", "a"}, new String[] {"\"user:1\"", "user:1"}, new String[] {"\"€\"", "€"},
      new String[] {"\"\\u20ac\"", "€"}, new String[] {"\"😀\"", "😀"}, new String[] {"\"a b\"", "a b"},
      new String[] {"\"" + "€".repeat(170) + "\"", "€".repeat(170)});
  private static final List<String> BAD_KEYS = List.of("\"\"", "\"\\ud800\"", "\"\\udc00\"", "\"x\\ud800\"",
      "\"" + "k".repeat(513) + "\"", "\"" + "€".repeat(171) + "\"", "5", "null", "true", "[\"k\"]", "{\"k\":1}",
      "\"\\u0000\"");
  private static final List<String> COSTS = List.of("0", "1", "2", "3", "-1", "-0", "1.5", "1e2", "2.0", "1E0",
      "0.0", "\"1\"", "null", "true", "[]", "{}", "9223372036854775807", "9223372036854775808",
      "-9223372036854775808", "1e400", "-1e400", "1e-400", "123456789012345678901234567890", "0x10", "NaN",
      "Infinity", "01", "+1", ".5", "1.", "4611686018427387904");

  /** How an item is made: all fields valid, valid but for one defect, or every field random. */
  private enum Mode { GOOD, ONE_DEFECT, RANDOM }

  /**
   * Acquire bodies close to valid: single items or lists of items, all valid, valid but for one
   * defect (a field of the wrong type or value, repeated, missing or unknown: the valid items
   * beside it must not be consumed), or with every field random; sometimes with the document
   * itself broken (cut short, something after it, a BOM, a comment, quotes of the wrong kind).
   */
  @Provide
  Arbitrary<Body> acquireBodies() {
    return Arbitraries.randomValue(r -> {
      List<String[]> pairs = new java.util.ArrayList<>();
      Mode mode = pick(r, List.of(Mode.GOOD, Mode.GOOD, Mode.ONE_DEFECT, Mode.ONE_DEFECT, Mode.RANDOM));
      String text;
      if (r.nextInt(3) == 0) {
        text = item(r, pairs, mode, true);
      } else {
        int n = r.nextInt(25) == 0 ? 95 + r.nextInt(10) : 1 + r.nextInt(5);
        int defect = mode == Mode.ONE_DEFECT ? r.nextInt(n) : -1;
        List<String> items = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
          Mode m = mode == Mode.ONE_DEFECT ? (i == defect ? Mode.ONE_DEFECT : Mode.GOOD) : mode;
          items.add(m == Mode.ONE_DEFECT && r.nextInt(8) == 0 ? pick(r, List.of("1", "null", "[]", "\"k\"", "{}"))
              : item(r, pairs, m, true));
        }
        String extra = mode == Mode.GOOD ? "" : pick(r, List.of("", "", ",\"rule\":\"api.call\"", ",\"items\":[]",
            ",\"x\":1", ",\"cost\":1"));
        text = "{\"items\":[" + String.join(",", items) + "]" + extra + "}";
      }
      return new Body(mode == Mode.GOOD ? text : corrupt(text, r), pairs);
    });
  }

  @Provide
  Arbitrary<Body> resetBodies() {
    return Arbitraries.randomValue(r -> {
      List<String[]> pairs = new java.util.ArrayList<>();
      Mode mode = pick(r, List.of(Mode.GOOD, Mode.GOOD, Mode.ONE_DEFECT, Mode.RANDOM));
      String text = item(r, pairs, mode, false);
      return new Body(mode == Mode.GOOD ? text : corrupt(text, r), pairs);
    });
  }

  @Provide
  Arbitrary<String> authorizations() {
    return Arbitraries.oneOf(Arbitraries.just("Bearer " + TOKEN), Arbitraries.of("", "bearer " + TOKEN,
            "BEARER  " + TOKEN + " ", "Bearer wrong", "Bearer " + TOKEN + "x", "Bearer", "Bearer ",
            "Basic Zm9vOmJhcg==", TOKEN, "Bearer " + TOKEN.substring(1), "Bearer " + TOKEN + "," + TOKEN),
        Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(30));
  }

  /** One item's fields; the pair it names if a peek can look at it. */
  private static String item(java.util.Random r, List<String[]> pairs, Mode mode, boolean withCost) {
    boolean random = mode == Mode.RANDOM;
    String rule = random ? pick(r, RULES) : r.nextBoolean() ? "\"api.call\"" : "\"tiny\"";
    String[] key = random && r.nextInt(5) == 0 ? new String[] {pick(r, BAD_KEYS), null} : pick(r, GOOD_KEYS);
    String cost = random ? pick(r, COSTS) : pick(r, List.of("0", "1", "2", "3"));
    boolean hasRule = !random || r.nextInt(10) != 0;
    boolean hasKey = !random || r.nextInt(10) != 0;
    boolean hasCost = withCost ? !random || r.nextInt(3) != 0 : random && r.nextInt(5) == 0;
    String repeated = null;
    String unknown = null;
    if (mode == Mode.ONE_DEFECT) {
      switch (r.nextInt(8)) {
        case 0 -> rule = pick(r, RULES.subList(3, RULES.size()));
        case 1 -> key = new String[] {pick(r, BAD_KEYS), null};
        case 2 -> {
          cost = pick(r, COSTS.subList(4, COSTS.size()));
          hasCost = true;
        }
        case 3 -> hasRule = false;
        case 4 -> hasKey = false;
        case 5 -> repeated = pick(r, List.of("\"rule\":\"api.call\"", "\"key\":\"k\"", "\"cost\":1"));
        case 6 -> unknown = pick(r, List.of("\"weight\":2", "\"\":1", "\"items\":[]", "\"Rule\":\"tiny\"",
            "\"key \":\"k\""));
        default -> {
          cost = pick(r, COSTS);
          hasCost = true;
        }
      }
    } else if (random) {
      if (r.nextInt(10) == 0) {
        repeated = "\"cost\":" + pick(r, COSTS);
      }
      if (r.nextInt(10) == 0) {
        unknown = pick(r, List.of("\"weight\":2", "\"\":1", "\"items\":[]", "\"Rule\":\"tiny\"", "\"key \":\"k\""));
      }
    }
    List<String> fields = new java.util.ArrayList<>();
    if (hasRule) {
      fields.add("\"rule\":" + rule);
    }
    if (hasKey) {
      fields.add("\"key\":" + key[0]);
    }
    if (hasCost) {
      fields.add("\"cost\":" + cost);
    }
    if (repeated != null) {
      fields.add(repeated);
    }
    if (unknown != null) {
      fields.add(unknown);
    }
    java.util.Collections.shuffle(fields, r);
    String unquoted = rule.startsWith("\"") ? rule.substring(1, rule.length() - 1) : null;
    if (key[1] != null && ("api.call".equals(unquoted) || "tiny".equals(unquoted))) {
      pairs.add(new String[] {unquoted, key[1]});
    }
    return "{" + String.join(r.nextInt(10) == 0 ? " , " : ",", fields) + "}";
  }

  private static String corrupt(String text, java.util.Random r) {
    return switch (r.nextInt(40)) {
      case 0 -> text.substring(0, r.nextInt(text.length() + 1));
      case 1 -> text + pick(r, List.of(" x", "{}", "]", "}", ",", "\u0000", "\n{}", "null"));
      case 2 -> "\uFEFF" + text;
      case 3 -> "/* c */" + text;
      case 4 -> text.replace('"', '\'');
      case 5 -> "[" + text + "]";
      case 6 -> text.replace(":", " : ").replace(",", " ,\n\t");
      case 7 -> text.replaceFirst("\"rule\"", "rule");
      default -> text;
    };
  }

  private static <T> T pick(java.util.Random r, List<T> l) {
    return l.get(r.nextInt(l.size()));
  }
}
