package dev.sluice.spring.web;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.http.RateLimitProblem;
import dev.sluice.spring.DenialResponses;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The WebFlux twin of {@link SluiceServletFilter}: the decision is asynchronous (no thread waits
 * for the store), and a shaping rule's wait is a delay, not a sleep.
 */
public final class SluiceWebFilter implements WebFilter, Ordered {
  private final RouteTable routes;
  private final RateLimiter limiter;
  private final DenialResponses responses;
  private final int order;

  public SluiceWebFilter(RouteTable routes, RateLimiter limiter, DenialResponses responses, int order) {
    this.routes = routes;
    this.limiter = limiter;
    this.responses = responses;
    this.order = order;
  }

  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    return exchange.getPrincipal().map(p -> Objects.requireNonNullElse(Principals.name(p), "")).defaultIfEmpty("")
        .flatMap(name -> decide(exchange, chain, name.isEmpty() ? null : name));
  }

  private Mono<Void> decide(ServerWebExchange exchange, WebFilterChain chain, String principal) {
    RouteCall call;
    try {
      call = routes.match(new View(exchange.getRequest(), principal));
    } catch (IllegalArgumentException e) {
      return refused(exchange, e);
    }
    if (call == null) {
      return chain.filter(exchange);
    }
    // A null decision (an Envoy route whose descriptors met no limit) lets the request through;
    // only errors of the decision itself, not of the chain, are answered as refusals.
    return Mono.fromCompletionStage(() -> call.decideAsync(limiter)).map(Optional::of).defaultIfEmpty(Optional.empty())
        .onErrorResume(IllegalArgumentException.class, e -> refused(exchange, e).then(Mono.empty()))
        .flatMap(d -> d.isPresent() ? answer(exchange, chain, d.get()) : chain.filter(exchange));
  }

  private Mono<Void> answer(ServerWebExchange exchange, WebFilterChain chain, Decision d) {
    ServerHttpResponse response = exchange.getResponse();
    responses.headers(d, response.getHeaders()::set);
    if (!d.allowed()) {
      ProblemDetail problem = DenialResponses.problem(d);
      if (responses.problemDetails()) {
        return write(response, problem);
      }
      response.setStatusCode(HttpStatusCode.valueOf(problem.getStatus()));
      return response.setComplete();
    }
    if (d.waitMs() > 0) {
      return Mono.delay(Duration.ofMillis(d.waitMs())).then(chain.filter(exchange));
    }
    return chain.filter(exchange);
  }

  private static Mono<Void> refused(ServerWebExchange exchange, IllegalArgumentException e) {
    String detail = Refusals.detail(e);
    if (detail == null) {
      return Mono.error(e);
    }
    return write(exchange.getResponse(), DenialResponses.badRequest(detail));
  }

  private static Mono<Void> write(ServerHttpResponse response, ProblemDetail problem) {
    byte[] body = DenialResponses.json(problem).getBytes(StandardCharsets.UTF_8);
    response.setStatusCode(HttpStatusCode.valueOf(problem.getStatus()));
    response.getHeaders().set("Content-Type", RateLimitProblem.MEDIA_TYPE);
    response.getHeaders().setContentLength(body.length);
    DataBuffer buffer = response.bufferFactory().wrap(body);
    return response.writeWith(Mono.just(buffer));
  }

  private record View(ServerHttpRequest request, String principal) implements RequestView {
    @Override
    public String method() {
      return request.getMethod().name();
    }

    @Override
    public String path() {
      return request.getPath().pathWithinApplication().value();
    }

    @Override
    public List<String> headers(String name) {
      List<String> v = request.getHeaders().get(name);
      return v == null ? List.of() : v;
    }

    @Override
    public String query(String name) {
      return request.getQueryParams().getFirst(name);
    }

    @Override
    public String remoteAddress() {
      InetSocketAddress a = request.getRemoteAddress();
      return a == null || a.getAddress() == null ? null : a.getAddress().getHostAddress();
    }
  }
}
