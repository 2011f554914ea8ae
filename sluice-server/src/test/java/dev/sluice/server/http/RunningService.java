package dev.sluice.server.http;

import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** A service on the memory store and a free port, with a few native rules, for the API tests. */
final class RunningService implements AutoCloseable {
  static final String RULES = """
      limits:
        - name: api.call
          config:
            - limit: 1000000
              period: 1h
        - name: tiny
          config:
            - limit: 1
              period: 1h
      """;

  final SluiceService service;
  final Path dir;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  RunningService(String adminToken) throws Exception {
    this(adminToken, RULES);
  }

  /** With the rules of {@code yaml} instead. */
  RunningService(String adminToken, String yaml) throws Exception {
    dir = Files.createTempDirectory("sluice-api");
    Files.writeString(dir.resolve("limits.yaml"), yaml);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withAdminToken(adminToken).withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create());
  }

  int port() {
    return service.port();
  }

  HttpResponse<String> send(String method, String path, String contentType, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + path))
        .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) {
      b.header("content-type", contentType);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> sendWithHeaders(String method, String path, byte[] body, String... headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + path))
        .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.ofByteArray(body));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
    return send("POST", path, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Sends raw bytes on a fresh connection and returns the status code of the answer (-1 if the
   * server closed the connection without one).
   */
  int raw(byte[] request) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request);
      out.flush();
      s.shutdownOutput();
      InputStream in = s.getInputStream();
      byte[] head = in.readNBytes(12);
      String line = new String(head, StandardCharsets.ISO_8859_1);
      if (!line.startsWith("HTTP/1.1 ") || line.length() < 12) {
        return -1;
      }
      return Integer.parseInt(line.substring(9, 12));
    }
  }

  @Override
  public void close() throws IOException {
    service.close();
    Files.deleteIfExists(dir.resolve("limits.yaml"));
    Files.deleteIfExists(dir);
  }
}
