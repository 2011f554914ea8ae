package dev.sluice.spring.web;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.http.RateLimitProblem;
import dev.sluice.spring.DenialResponses;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import org.springframework.http.ProblemDetail;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Decides a request by the first route that matches it (its operation, or its Envoy descriptors), before the request reaches the
 * application: a denial is answered here (429, or 503 when the store failed closed, with the
 * RateLimit fields, {@code Retry-After} and the problem body); an admitted request goes on with
 * the RateLimit fields set, after the wait a shaping rule imposes.
 */
public final class SluiceServletFilter extends OncePerRequestFilter {
  private final RouteTable routes;
  private final RateLimiter limiter;
  private final DenialResponses responses;

  public SluiceServletFilter(RouteTable routes, RateLimiter limiter, DenialResponses responses) {
    this.routes = routes;
    this.limiter = limiter;
    this.responses = responses;
  }

  @Override
  protected boolean shouldNotFilter(HttpServletRequest request) {
    return routes.isEmpty();
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    Decision d;
    try {
      RouteCall call = routes.match(new View(request));
      d = call == null ? null : call.decide(limiter);
      if (d == null) {
        chain.doFilter(request, response);
        return;
      }
    } catch (IllegalArgumentException e) {
      String detail = Refusals.detail(e);
      if (detail == null) {
        throw e;
      }
      write(response, DenialResponses.badRequest(detail));
      return;
    }
    responses.headers(d, response::setHeader);
    if (!d.allowed()) {
      ProblemDetail problem = DenialResponses.problem(d);
      if (responses.problemDetails()) {
        write(response, problem);
      } else {
        response.setStatus(problem.getStatus());
      }
      return;
    }
    if (d.waitMs() > 0) {
      try {
        Thread.sleep(d.waitMs());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ServletException("interrupted while waiting for the request's slot", e);
      }
    }
    chain.doFilter(request, response);
  }

  private static void write(HttpServletResponse response, ProblemDetail problem) throws IOException {
    byte[] body = DenialResponses.json(problem).getBytes(StandardCharsets.UTF_8);
    response.setStatus(problem.getStatus());
    response.setContentType(RateLimitProblem.MEDIA_TYPE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  private record View(HttpServletRequest request) implements RequestView {
    @Override
    public String method() {
      return request.getMethod();
    }

    @Override
    public String path() {
      String uri = request.getRequestURI();
      String context = request.getContextPath();
      return context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
    }

    @Override
    public List<String> headers(String name) {
      var e = request.getHeaders(name);
      return e == null ? List.of() : Collections.list(e);
    }

    @Override
    public String query(String name) {
      return request.getParameter(name);
    }

    @Override
    public String remoteAddress() {
      return request.getRemoteAddr();
    }

    @Override
    public String principal() {
      return Principals.name(request.getUserPrincipal());
    }
  }
}
