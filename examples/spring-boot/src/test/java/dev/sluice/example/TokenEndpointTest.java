package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** The sixth token request within 3 seconds, on a running application: 429 and why. */
abstract class TokenEndpointTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  abstract int port();

  HttpResponse<String> post() throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + "/auth/token"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
  }

  void theSixthCallOfFiveInThreeSecondsIsDenied() throws Exception {
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> ok = post();
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).contains("token");
      assertThat(ok.headers().firstValue("RateLimit-Policy"))
          .hasValue("\"auth.createToken.60s\";q=20;w=60, \"auth.createToken.3s\";q=5;w=3");
    }
    HttpResponse<String> denied = post();
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("RateLimit-Policy"))
        .hasValue("\"auth.createToken.60s\";q=20;w=60, \"auth.createToken.3s\";q=5;w=3");
    assertThat(denied.headers().firstValue("RateLimit").orElseThrow())
        .startsWith("\"auth.createToken.60s\";r=15;t=").contains(", \"auth.createToken.3s\";r=0;t=");
    assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 3L);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(denied.body())
        .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
        .contains("\"status\":429")
        .contains("\"violated-policies\":[\"auth.createToken.3s\"]");
  }
}
