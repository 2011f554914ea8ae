package dev.sluice.spring.annotation;

import dev.sluice.http.RateLimitProblem;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a {@link RateLimitedException} from a controller, in Spring MVC and WebFlux alike, with
 * its status, headers and problem body, written by the application's own message converters.
 * It handles that exception only, so Boot's problem handling of every other error is untouched.
 */
@RestControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RateLimitedExceptionHandler {
  private static final MediaType PROBLEM = MediaType.parseMediaType(RateLimitProblem.MEDIA_TYPE);

  private final boolean problemDetails;

  public RateLimitedExceptionHandler(boolean problemDetails) {
    this.problemDetails = problemDetails;
  }

  @ExceptionHandler(RateLimitedException.class)
  public ResponseEntity<ProblemDetail> rateLimited(RateLimitedException e) {
    ResponseEntity.BodyBuilder b = ResponseEntity.status(e.getStatusCode()).headers(e.getHeaders());
    return problemDetails ? b.contentType(PROBLEM).body(e.getBody()) : b.build();
  }
}
