package dev.sluice.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Decides each call of the method before it runs: an operation, its attributes taken from the
 * method's arguments by SpEL ({@code #user.id}, {@code #p0}), or one rule and key. A denied call
 * does not run: a method that returns a value throws {@link RateLimitedException}, which a web
 * application answers with 429 (503 when the store failed closed), the RateLimit fields,
 * {@code Retry-After} and a problem body; a method returning {@code Mono}, {@code Flux} or
 * {@code CompletionStage} is decided without blocking, and signals the exception.
 *
 * <pre>{@code
 * @RateLimited(operation = "orders.create", key = "#customerId")
 * public Order create(String customerId, OrderForm form) { ... }
 *
 * @RateLimited(operation = "auth.login", attributes = {"user=#form.user", "ip=#request.remoteAddr"})
 * public Mono<Token> login(LoginForm form, ServerHttpRequest request) { ... }
 * }</pre>
 *
 * <p>Everything is checked at start-up: the operation or rule must exist, every attribute the
 * operation reads must be given, and every expression must parse; otherwise the application
 * does not start.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimited {
  /** The operation each call runs; or give {@link #rule}. */
  String operation() default "";

  /** A rule decided directly, with {@link #key} as its key; or give {@link #operation}. */
  String rule() default "";

  /**
   * SpEL over the arguments: the key of {@link #rule}, or the value of the one attribute that
   * {@link #operation} reads (an operation reading several takes {@link #attributes}).
   */
  String key() default "";

  /** {@code name=expression} for each attribute of the operation. */
  String[] attributes() default {};

  /** Units each call costs (for an operation, a multiplier of its items' costs). */
  long cost() default 1;
}
