package dev.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Talks to a running service over the network, as its users do. */
final class ServiceClient {
  static final ObjectMapper JSON = new ObjectMapper();

  private final int port;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  ServiceClient(int port) {
    this.port = port;
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  HttpResponse<String> post(String path, String body, String... headers) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("content-type", "application/json");
    if (headers.length > 0) {
      b.headers(headers);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10)).GET();
    if (headers.length > 0) {
      b.headers(headers);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  JsonNode getJson(String path) throws IOException, InterruptedException {
    return JSON.readTree(get(path).body());
  }

  static JsonNode json(HttpResponse<String> r) throws IOException {
    return JSON.readTree(r.body());
  }

  /** Envoy's generated blocking stub over a plain (cleartext HTTP/2) gRPC channel. */
  RateLimitServiceGrpc.RateLimitServiceBlockingStub envoy() {
    return GrpcClients.builder("http://127.0.0.1:" + port).build(
        RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
  }
}
