package dev.sluice.bench;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.ExchangeType;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpObject;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.common.ResponseHeadersBuilder;
import com.linecorp.armeria.common.SessionProtocol;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.RoutingContext;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.ServiceRequestContext;
import com.linecorp.armeria.server.grpc.GrpcService;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.stub.StreamObserver;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

/**
 * The framework's floor: Armeria on its own, answering {@code POST /v1/acquire} and Envoy's
 * {@code ShouldRateLimit} as {@code sluice serve} would, with answers fixed in advance, so that
 * what the service costs beyond it is its own work (reading the request, deciding, writing the
 * answer). It is set up as the service sets up Armeria: one HTTP port for both protocols, no
 * {@code Server} header, Netty's leak sampling off, the body read whole before the handler runs
 * (a unary route) and answered on the event loop that read it, with the same Armeria calls.
 *
 * <p>The answers are a real answer of the service, recorded by {@link FloorComparison}: the HTTP
 * one as a file of a status line, {@code name: value} header lines, an empty line and the body;
 * the gRPC one as the response's protobuf bytes.
 *
 * <pre>
 * java -Xms512m -Xmx512m -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.FloorServer \
 *     --port 18180 --http-answer http-answer.txt --grpc-answer grpc-answer.bin
 * </pre>
 */
public final class FloorServer {
  private FloorServer() {}

  public static void main(String[] args) throws Exception {
    int port = 0;
    Path httpAnswer = null;
    Path grpcAnswer = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--port" -> port = Integer.parseInt(args[i + 1]);
        case "--http-answer" -> httpAnswer = Path.of(args[i + 1]);
        case "--grpc-answer" -> grpcAnswer = Path.of(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option '" + args[i]
            + "'; known: --port, --http-answer, --grpc-answer");
      }
    }
    if (httpAnswer == null || grpcAnswer == null) {
      throw new IllegalArgumentException("--http-answer and --grpc-answer are required");
    }
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    Server server = build(port, httpAnswer(httpAnswer), RateLimitResponse.parseFrom(Files.readAllBytes(grpcAnswer)));
    server.start().join();
    System.out.println("floor listening on 127.0.0.1:" + server.activeLocalPort());
    new CountDownLatch(1).await();
  }

  /**
   * A fixed HTTP answer: headers (with the body's length) and body, shared by every request (both
   * are immutable), answered with the call the service answers with.
   */
  record Answer(ResponseHeaders headers, HttpData body) {
    HttpResponse toResponse() {
      return HttpResponse.of(new HttpObject[] {headers, body});
    }
  }

  static Server build(int port, Answer http, RateLimitResponse grpc) {
    ServerBuilder sb = Server.builder();
    sb.port(new InetSocketAddress("127.0.0.1", port), SessionProtocol.HTTP);
    sb.disableServerHeader();
    sb.route().post("/v1/acquire").build(new HttpService() {
      @Override
      public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        CompletableFuture<AggregatedHttpRequest> body = req.aggregate();
        if (body.isDone() && !body.isCompletedExceptionally()) {
          return http.toResponse();
        }
        return HttpResponse.of(body.thenApply(agg -> http.toResponse()));
      }

      @Override
      public ExchangeType exchangeType(RoutingContext routingContext) {
        return ExchangeType.UNARY;
      }
    });
    sb.service("/healthz", (ctx, req) -> HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, "{\"status\":\"ok\"}"));
    sb.service(GrpcService.builder().addService(new RateLimitServiceGrpc.RateLimitServiceImplBase() {
      @Override
      public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> out) {
        out.onNext(grpc);
        out.onCompleted();
      }
    }).build());
    return sb.build();
  }

  /** Reads an answer written by {@link FloorComparison}: status line, header lines, empty line, body. */
  static Answer httpAnswer(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    String text = new String(all, StandardCharsets.UTF_8);
    int split = text.indexOf("\n\n");
    String[] lines = text.substring(0, split).split("\n");
    ResponseHeadersBuilder h = ResponseHeaders.builder(HttpStatus.valueOf(Integer.parseInt(lines[0].strip())));
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      h.add(lines[i].substring(0, colon).strip(), lines[i].substring(colon + 1).strip());
    }
    byte[] body = text.substring(split + 2).getBytes(StandardCharsets.UTF_8);
    return new Answer(h.contentLength(body.length).build(), HttpData.wrap(body));
  }
}
