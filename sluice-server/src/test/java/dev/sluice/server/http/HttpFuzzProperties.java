package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
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
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random bodies and random headers never make the API answer with a server error: whatever a
 * client sends, the answer is a decision (200 / 429) or a client error (4xx), and a 400 always
 * has the error body.
 */
class HttpFuzzProperties {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static RunningService api;

  @BeforeContainer
  static void start() throws Exception {
    api = new RunningService(null);
  }

  @AfterContainer
  static void stop() throws Exception {
    api.close();
  }

  @Property(tries = 300)
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

  @Property(tries = 200)
  void randomBytesNeverYieldAServerError(@ForAll("bytes") byte[] body, @ForAll("knownPaths") String path)
      throws Exception {
    HttpResponse<String> r = api.send("POST", path, "application/json", body);
    assertThat(r.statusCode()).isLessThan(500);
    if (r.statusCode() >= 400) {
      HttpApiBadInputTest.assertNamesNoLibrary(JSON.readTree(r.body()).get("error").get("message").asText());
    }
  }

  @Property(tries = 100)
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

  @Property(tries = 200)
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
}
