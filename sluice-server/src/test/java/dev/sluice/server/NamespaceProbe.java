package dev.sluice.server;

import dev.sluice.server.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs {@code sluice serve} and a client of it in one JVM, for a test that starts this JVM in a
 * network namespace of its own: there the service can bind an address beyond loopback that no
 * other host can reach. Prints one line per answer ({@code RESET 403 {...}}) on standard output;
 * the service's log goes to standard error.
 *
 * <p>Arguments: config directory, address to bind, address to connect to, port, and optionally the
 * admin token.
 */
public final class NamespaceProbe {
  private NamespaceProbe() {}

  public static void main(String[] args) throws Exception {
    String config = args[0];
    String bind = args[1];
    String connect = args[2];
    String port = args[3];
    String token = args.length > 4 ? args[4] : null;
    List<String> serve = new ArrayList<>(List.of("serve", "--config", config, "--host", bind, "--port", port));
    if (token != null) {
      serve.addAll(List.of("--admin-token", token));
    }
    Thread service = new Thread(() -> Main.commandLine(System.in, new PrintWriter(new StringWriter()),
        new PrintWriter(System.err, true)).execute(serve.toArray(String[]::new)), "serve");
    service.setDaemon(true);
    service.start();

    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    String base = "http://" + (connect.contains(":") ? "[" + connect + "]" : connect) + ":" + port;
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      try {
        if (http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
          break;
        }
      } catch (java.io.IOException e) {
        // not listening yet
      }
      if (System.nanoTime() > deadline || !service.isAlive()) {
        System.out.println("NOT STARTED");
        System.out.flush();
        Runtime.getRuntime().halt(1);
      }
      Thread.sleep(100);
    }
    String body = "{\"rule\":\"api\",\"key\":\"k\"}";
    print(http, "ACQUIRE", post(base + "/v1/acquire", body, null));
    print(http, "RESET", post(base + "/v1/reset", body, null));
    if (token != null) {
      print(http, "RESET_WITH_TOKEN", post(base + "/v1/reset", body, token));
    }
    System.out.flush();
    System.err.flush();
    Runtime.getRuntime().halt(0);
  }

  private static HttpRequest post(String uri, String body, String token) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      b.header("authorization", "Bearer " + token);
    }
    return b.build();
  }

  private static void print(HttpClient http, String what, HttpRequest req) throws Exception {
    HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
    System.out.println(what + " " + r.statusCode() + " " + r.body());
  }
}
