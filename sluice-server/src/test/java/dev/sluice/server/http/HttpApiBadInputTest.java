package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every client mistake gets 400 and {@code {"error":{"code","message"}}}, never a 500 or a trace. */
class HttpApiBadInputTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static RunningService api;

  @BeforeAll
  static void start() throws Exception {
    api = new RunningService("s3cret");
  }

  @AfterAll
  static void stop() throws Exception {
    api.close();
  }

  private static JsonNode assertError(HttpResponse<String> r, int status, String code) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    assertThat(r.headers().firstValue("content-type").orElse("")).contains("json");
    JsonNode e = JSON.readTree(r.body()).get("error");
    assertThat(e.get("code").asText()).isEqualTo(code);
    assertThat(e.get("message").asText()).isNotBlank().doesNotContain("Exception").doesNotContain("\tat ");
    assertNamesNoInternals(e.get("message").asText());
    return e;
  }

  /** A message for a client: it names what was wrong, never the classes or settings underneath. */
  static void assertNamesNoInternals(String message) {
    assertThat(message).doesNotContain("`");
    assertNamesNoLibrary(message);
  }

  /**
   * As {@link #assertNamesNoInternals}, but for messages that may echo random input: a lone
   * {@code `} may be the client's own.
   */
  static void assertNamesNoLibrary(String message) {
    assertThat(message).doesNotContain("com.", "io.", "java.", "Exception", "\tat ");
    assertThat(message.toLowerCase(java.util.Locale.ROOT)).doesNotContain("jackson", "armeria", "netty",
        "streamreadconstraints", "jsonnode", "deserializationfeature", "jsonreadfeature");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      malformed JSON                | {"rule":"api.call","key":       | malformed_json   | not valid JSON
      trailing garbage              | {"rule":"api.call","key":"k"} x | malformed_json   | not valid JSON
      duplicate field               | {"rule":"api.call","rule":"api.call","key":"k"} | malformed_json | field 'rule' appears twice
      not an object                 | [1,2,3]                          | invalid_request  | must be a JSON object, was an array
      a bare string                 | "hello"                          | invalid_request  | must be a JSON object, was a string
      rule missing                  | {"key":"k"}                      | invalid_request  | 'rule' is required
      rule not a string             | {"rule":7,"key":"k"}             | invalid_request  | 'rule' must be a string, was an integer
      key not a string              | {"rule":"api.call","key":["k"]}  | invalid_request  | 'key' must be a string, was an array
      key null                      | {"rule":"api.call","key":null}   | invalid_request  | 'key' is required
      unknown field                 | {"rule":"api.call","key":"k","weight":2} | invalid_request | unknown field 'weight'
      unknown rule                  | {"rule":"nope","key":"k"}        | unknown_rule     | unknown rule 'nope'
      empty key                     | {"rule":"api.call","key":""}     | invalid_key      | must not be empty
      negative cost                 | {"rule":"api.call","key":"k","cost":-1} | invalid_cost | must be >= 0, was -1
      decimal cost                  | {"rule":"api.call","key":"k","cost":1.5} | invalid_cost | must be a non-negative integer
      string cost                   | {"rule":"api.call","key":"k","cost":"1"} | invalid_cost | was a string
      huge cost                     | {"rule":"api.call","key":"k","cost":99999999999999999999} | invalid_cost | must be at most
      items not an array            | {"items":{}}                     | invalid_request  | 'items' must be an array
      items empty                   | {"items":[]}                     | invalid_request  | at least one item
      item not an object            | {"items":[1]}                    | invalid_request  | items[0] must be an object
      items and rule together       | {"items":[],"rule":"api.call"}   | invalid_request  | not both
      bad item field                | {"items":[{"rule":"api.call","key":"k","cost":-5}]} | invalid_cost | 'items[0].cost' must be >= 0
      """)
  void aClientMistakeIsA400NamingIt(String what, String body, String code, String message) throws Exception {
    JsonNode e = assertError(api.post("/v1/acquire", body), 400, code);
    assertThat(e.get("message").asText()).contains(message);
  }

  @Test
  void anEmptyBodyIsA400() throws Exception {
    assertError(api.post("/v1/acquire", ""), 400, "malformed_json");
  }

  @Test
  void costsThatOverflowTogetherAreA400() throws Exception {
    String big = Long.toString(Long.MAX_VALUE);
    assertError(api.post("/v1/acquire", "{\"items\":[{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":" + big
        + "},{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":" + big + "}]}"), 400, "invalid_cost");
  }

  @Test
  void aKeyLongerThan512BytesIsA400() throws Exception {
    // 171 three-byte characters: 513 bytes of UTF-8 in 171 chars.
    JsonNode e = assertError(api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"" + "€".repeat(171) + "\"}"),
        400, "invalid_key");
    assertThat(e.get("message").asText()).contains("513 bytes").contains("the maximum is 512");
    assertThat(api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"" + "€".repeat(170) + "\"}").statusCode())
        .isEqualTo(200);
  }

  @Test
  void tooManyItemsIsA400() throws Exception {
    StringBuilder b = new StringBuilder("{\"items\":[");
    for (int i = 0; i <= RequestJson.MAX_ITEMS; i++) {
      b.append(i == 0 ? "" : ",").append("{\"rule\":\"api.call\",\"key\":\"k").append(i).append("\"}");
    }
    assertError(api.post("/v1/acquire", b.append("]}").toString()), 400, "invalid_request");
  }

  @Test
  void aBodyOverTheLimitIsA400() throws Exception {
    String body = "{\"rule\":\"api.call\",\"key\":\"" + "k".repeat(70_000) + "\"}";
    assertError(api.post("/v1/acquire", body), 400, "body_too_large");
  }

  @Test
  void aBodyOverTheLimitSentInChunksIsA400() throws Exception {
    byte[] chunk = ("{\"rule\":\"api.call\",\"key\":\"" + "k".repeat(40_000)).getBytes(StandardCharsets.US_ASCII);
    String head = "POST /v1/acquire HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    StringBuilder chunks = new StringBuilder();
    for (int i = 0; i < 2; i++) {
      chunks.append(Integer.toHexString(chunk.length)).append("\r\n")
          .append(new String(chunk, StandardCharsets.US_ASCII)).append("\r\n");
    }
    chunks.append("0\r\n\r\n");
    assertThat(api.raw((head + chunks).getBytes(StandardCharsets.US_ASCII))).isEqualTo(400);
  }

  @Test
  void aMalformedUpgradeHeaderIsA400NotA500() throws Exception {
    // Found by HttpFuzzProperties: the HTTP/1 decoder fails on it with an unexpected exception.
    String req = "GET /v1/acquire HTTP/1.1\r\nHost: x\r\nUpgrade: \"\r\nContent-Length: 0\r\n"
        + "Connection: close\r\n\r\n";
    assertThat(api.raw(req.getBytes(StandardCharsets.US_ASCII))).isEqualTo(400);
  }

  @Test
  void resetChecksItsBodyAndItsAdminToken() throws Exception {
    HttpResponse<String> noToken = api.post("/v1/reset", "{\"rule\":\"tiny\",\"key\":\"k\"}");
    assertError(noToken, 401, "unauthorized");
    HttpResponse<String> badBody = api.send("POST", "/v1/reset", "application/json",
        "{\"rule\":\"tiny\"}".getBytes(StandardCharsets.UTF_8));
    assertThat(badBody.statusCode()).isIn(400, 401);
  }

  @Test
  void resetWithTheAdminTokenForgetsTheKey() throws Exception {
    assertThat(api.post("/v1/acquire", "{\"rule\":\"tiny\",\"key\":\"admin\"}").statusCode()).isEqualTo(200);
    assertThat(api.post("/v1/acquire", "{\"rule\":\"tiny\",\"key\":\"admin\"}").statusCode()).isEqualTo(429);
    var http = java.net.http.HttpClient.newHttpClient();
    var req = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + api.port() + "/v1/reset"))
        .header("authorization", "Bearer s3cret").header("content-type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"rule\":\"tiny\",\"key\":\"admin\"}")).build();
    assertThat(http.send(req, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    var unknown = java.net.http.HttpRequest.newBuilder(
            java.net.URI.create("http://127.0.0.1:" + api.port() + "/v1/reset"))
        .header("authorization", "Bearer s3cret")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"rule\":\"nope\",\"key\":\"k\"}")).build();
    assertError(http.send(unknown, HttpResponse.BodyHandlers.ofString()), 400, "unknown_rule");
    assertThat(api.post("/v1/acquire", "{\"rule\":\"tiny\",\"key\":\"admin\"}").statusCode()).isEqualTo(200);
  }

  @Test
  void unknownPathsAndWrongMethodsGetJsonErrors() throws Exception {
    assertError(api.send("GET", "/v2/nothing", null, new byte[0]), 404, "not_found");
    assertError(api.send("GET", "/v1/acquire", null, new byte[0]), 405, "method_not_allowed");
    assertError(api.send("DELETE", "/v1/rules", null, new byte[0]), 405, "method_not_allowed");
  }

  @Test
  void anyContentTypeIsReadAsJson() throws Exception {
    HttpResponse<String> r = api.send("POST", "/v1/acquire", "text/plain",
        "{\"rule\":\"api.call\",\"key\":\"ct\"}".getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(200);
  }

  @Test
  void invalidUtf8IsA400() throws Exception {
    byte[] body = {'{', '"', 'r', 'u', 'l', 'e', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
    assertError(api.send("POST", "/v1/acquire", "application/json", body), 400, "malformed_json");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      a number too long                 | {"rule":"api.call","key":"k","cost":11111111111111111111111111111111111111111111111111111111111111111111111} | a number in 'cost' has more than 64 characters
      a decimal too long                | {"rule":"api.call","key":"k","cost":1.11111111111111111111111111111111111111111111111111111111111111111111111} | a number in 'cost' has more than 64 characters
      nested too deep                   | [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]] | nested more than 32 deep
      a second value after the object   | {"rule":"api.call","key":"k"} {"rule":"api.call","key":"k"} | more data follows the JSON value
      a second number after a number    | 1 2                               | more data follows the JSON value
      NaN                               | {"rule":"api.call","key":"k","cost":NaN} | (line 1, column
      minus infinity                    | {"rule":"api.call","key":"k","cost":-Infinity} | (line 1, column
      single quotes                     | {'rule':'api.call'}               | (line 1, column 2)
      a bad escape                      | {"rule":"api.call","key":"\\uZZZZ"} | (line 1, column
      cut short                         | {"rule":"api.call","key":"k"      | it ends before the JSON value does
      a close marker too many           | {"rule":"api.call","key":"k"}}    | more data follows the JSON value
      """)
  void jsonErrorsAreNamedInPlainWords(String what, String body, String message) throws Exception {
    JsonNode e = assertError(api.post("/v1/acquire", body), 400, "malformed_json");
    assertThat(e.get("message").asText()).startsWith("the request body is not valid JSON").contains(message);
  }

  @Test
  void noErrorOfAnyBadInputNamesTheLibrariesUnderneath() throws Exception {
    List<byte[]> bodies = new ArrayList<>();
    for (String b : List.of("", " ", "nul", "1 2", "{} {}", "{}x", "{\"a\":1}]", "[" .repeat(40) + "]".repeat(40),
        "{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":" + "9".repeat(100) + "}",
        "{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":" + "9".repeat(70) + ".5}",
        "{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":1e999999}",
        "{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":NaN}", "{'rule':1}", "{\"rule\":\"\\uZZZZ\"}",
        "{\"rule\":\"api.call\",\"key\":\"a\u0001b\"}", "{\"rule\":\"api.call\",\"key\":\"\\ud800\"}",
        "{\"rule\":\"api.call\",\"key\":\"\\udc00x\"}", "{\"rule\":\"api.call\",\"rule\":\"x\",\"key\":\"k\"}",
        "{\"items\":[" + "{\"rule\":\"api.call\",\"key\":\"k\"},".repeat(100) + "{}]}",
        "{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":{\"x\":[1,2]}}", "{\"rule\":\"api.call\",\"key\":\"k\"",
        "\"" + "s".repeat(70_000) + "\"")) {
      bodies.add(b.getBytes(StandardCharsets.UTF_8));
    }
    bodies.add(new byte[] {'{', '"', 'r', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'});
    bodies.add(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF, '{', '}'});
    bodies.add(new byte[] {(byte) 0xFE, (byte) 0xFF, 0, '{', 0, '}'});
    bodies.add(gzip("{\"rule\":\"api.call\",\"key\":\"k\"}"));
    for (String path : List.of("/v1/acquire", "/v1/reset")) {
      for (byte[] body : bodies) {
        for (String encoding : new String[] {null, "gzip", "deflate", "br", "gzip, gzip", "x-unknown"}) {
          HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + path))
              .header("authorization", "Bearer s3cret").header("content-type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofByteArray(body));
          if (encoding != null) {
            b.header("content-encoding", encoding);
          }
          HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
          String what = path + " " + encoding + " " + new String(body, 0, Math.min(body.length, 80), StandardCharsets.UTF_8);
          assertThat(r.statusCode()).as(what).isLessThan(500);
          JsonNode error = JSON.readTree(r.body()).get("error");
          if (error != null) {
            assertNamesNoInternals(error.get("message").asText());
          }
        }
      }
    }
    for (String[] req : new String[][] {{"GET", "/v2/nothing"}, {"GET", "/v1/acquire"}, {"DELETE", "/v1/rules"},
        {"PUT", "/v1/reset"}, {"POST", "/healthz"}}) {
      HttpResponse<String> r = api.send(req[0], req[1], null, new byte[0]);
      assertNamesNoInternals(JSON.readTree(r.body()).get("error").get("message").asText());
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      lowercase scheme      | bearer s3cret
      uppercase scheme      | BEARER s3cret
      mixed case            | bEaReR s3cret
      spaces around         | '  Bearer    s3cret  '
      """)
  void theBearerSchemeIsCaseInsensitive(String what, String authorization) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/reset"))
        .header("authorization", authorization)
        .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"tiny\",\"key\":\"scheme\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      wrong token               | Bearer s3cre
      token with a suffix       | Bearer s3cret2
      another scheme            | Basic s3cret
      scheme glued to token     | Bearers3cret
      scheme alone              | Bearer
      token alone               | s3cret
      """)
  void aWrongTokenOrSchemeIsStillA401(String what, String authorization) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/reset"))
        .header("authorization", authorization)
        .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"tiny\",\"key\":\"scheme\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertError(r, 401, "unauthorized");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      a lone high surrogate             | /v1/acquire | {"rule":"api.call","key":"\\ud800"}                   | 'key' has a lone surrogate (U+D800) at index 0
      a lone low surrogate after text   | /v1/acquire | {"rule":"api.call","key":"ab\\udc00"}                 | 'key' has a lone surrogate (U+DC00) at index 2
      a high surrogate then a letter    | /v1/acquire | {"rule":"api.call","key":"\\ud83dx"}                  | lone surrogate (U+D83D)
      in a list of items                | /v1/acquire | {"items":[{"rule":"api.call","key":"ok"},{"rule":"api.call","key":"\\ud800"}]} | 'items[1].key' has a lone surrogate
      on reset                          | /v1/reset   | {"rule":"api.call","key":"\\ud800"}                   | 'key' has a lone surrogate
      """)
  void aKeyWithALoneSurrogateIsAnInvalidKey(String what, String path, String body, String message) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + path))
        .header("authorization", "Bearer s3cret")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    JsonNode e = assertError(r, 400, "invalid_key");
    assertThat(e.get("message").asText()).contains(message);
  }

  @Test
  void aKeyWithAWholeSurrogatePairIsFine() throws Exception {
    assertThat(api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"\\ud83d\\ude00\"}").statusCode())
        .isEqualTo(200);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"gzip", "x-gzip", "deflate", "GZIP", "identity"})
  void aCompressedBodyIsDecoded(String encoding) throws Exception {
    String json = "{\"rule\":\"api.call\",\"key\":\"compressed-" + encoding + "\"}";
    byte[] body = switch (encoding.toLowerCase(java.util.Locale.ROOT)) {
      case "gzip", "x-gzip" -> gzip(json);
      case "deflate" -> deflate(json);
      default -> json.getBytes(StandardCharsets.UTF_8);
    };
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/acquire"))
        .header("content-encoding", encoding).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(JSON.readTree(r.body()).get("items").get(0).get("key").asText()).isEqualTo("compressed-" + encoding);
  }

  @Test
  void aCompressedBodyLargerThanTheLimitOnceDecodedIsA400() throws Exception {
    // 2 MB of JSON whitespace compresses to about 2 KB: the limit applies to what it decodes to.
    String json = "{\"rule\":\"api.call\"," + " ".repeat(2_000_000) + "\"key\":\"bomb\"}";
    byte[] body = gzip(json);
    assertThat(body.length).isLessThan(64 * 1024);
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/acquire"))
        .header("content-encoding", "gzip").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertError(r, 400, "body_too_large");
  }

  @Test
  void aBodyThatIsNotWhatItsEncodingSaysIsA400() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/acquire"))
        .header("content-encoding", "gzip")
        .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"api.call\",\"key\":\"k\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
    JsonNode e = assertError(r, 400, "malformed_body");
    assertThat(e.get("message").asText()).contains("gzip");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"br", "compress", "zstd", "'gzip, gzip'"})
  void anEncodingTheServiceDoesNotReadIsA415(String encoding) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/acquire"))
        .header("content-encoding", encoding)
        .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"api.call\",\"key\":\"k\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
    JsonNode e = assertError(r, 415, "unsupported_encoding");
    assertThat(e.get("message").asText()).contains("gzip", "deflate");
  }

  @Test
  void aGzipBodyWithoutItsContentEncodingIsMalformedJsonInPlainWords() throws Exception {
    JsonNode e = assertError(api.send("POST", "/v1/acquire", "application/json",
        gzip("{\"rule\":\"api.call\",\"key\":\"k\"}")), 400, "malformed_json");
    assertThat(e.get("message").asText()).contains("(line 1, column ");
  }

  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  static byte[] gzip(String s) throws java.io.IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(out)) {
      z.write(s.getBytes(StandardCharsets.UTF_8));
    }
    return out.toByteArray();
  }

  static byte[] deflate(String s) throws java.io.IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (java.util.zip.DeflaterOutputStream z = new java.util.zip.DeflaterOutputStream(out)) {
      z.write(s.getBytes(StandardCharsets.UTF_8));
    }
    return out.toByteArray();
  }
}
