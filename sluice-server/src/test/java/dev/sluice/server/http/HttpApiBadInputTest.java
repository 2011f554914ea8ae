package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
    return e;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      malformed JSON                | {"rule":"api.call","key":       | malformed_json   | not valid JSON
      trailing garbage              | {"rule":"api.call","key":"k"} x | malformed_json   | not valid JSON
      duplicate field               | {"rule":"api.call","rule":"api.call","key":"k"} | malformed_json | Duplicate field
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
}
