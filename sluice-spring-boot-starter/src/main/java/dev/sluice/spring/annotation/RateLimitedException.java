package dev.sluice.spring.annotation;

import dev.sluice.Decision;
import dev.sluice.spring.DenialResponses;
import java.util.Map;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.ErrorResponseException;

/**
 * A call of a {@link RateLimited} method that was denied. It is an {@link
 * org.springframework.web.ErrorResponse}: its status (429, or 503 when the store failed closed),
 * the RateLimit fields and {@code Retry-After}, and its body, the RFC 9457 problem with the IETF
 * draft's type ({@code quota-exceeded} and its {@code violated-policies}). Spring MVC and WebFlux
 * answer it so, through the starter's exception handler or Boot's own problem handling.
 */
public class RateLimitedException extends ErrorResponseException {
  private static final long serialVersionUID = 1L;

  private final transient Decision decision;

  public RateLimitedException(Decision decision, Map<String, String> headers) {
    super(HttpStatusCode.valueOf(DenialResponses.status(decision)), DenialResponses.problem(decision), null);
    this.decision = decision;
    headers.forEach(getHeaders()::set);
  }

  /** The denial. */
  public Decision decision() {
    return decision;
  }

  @Override
  public String getMessage() {
    return getBody().getDetail();
  }
}
