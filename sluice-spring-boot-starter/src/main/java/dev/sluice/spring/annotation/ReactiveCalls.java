package dev.sluice.spring.annotation;

import dev.sluice.Decision;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Reactor's side of {@link RateLimitedInterceptor}, loaded only when Reactor is present. */
final class ReactiveCalls {
  /** The method call itself. */
  interface Call {
    Object proceed() throws Throwable;
  }

  private ReactiveCalls() {}

  static boolean handles(Class<?> returns) {
    return Mono.class.isAssignableFrom(returns) || Flux.class.isAssignableFrom(returns);
  }

  static Object call(Class<?> returns, Supplier<CompletionStage<Decision>> decide,
      Function<Decision, RuntimeException> denied, Call call) {
    // Decided at subscription, once per subscription, as the method's own work would run.
    Mono<Decision> decision = Mono.defer(() -> Mono.fromCompletionStage(decide.get()));
    Function<Decision, Publisher<?>> then = d -> {
      if (!d.allowed()) {
        return Mono.error(denied.apply(d));
      }
      Mono<Object> proceed = Mono.defer(() -> {
        try {
          return Mono.just(call.proceed());
        } catch (Throwable t) {
          return Mono.error(t);
        }
      });
      Flux<Object> result = proceed.flatMapMany(p -> (Publisher<?>) p);
      return d.waitMs() > 0 ? Mono.delay(Duration.ofMillis(d.waitMs())).thenMany(result) : result;
    };
    if (Mono.class.isAssignableFrom(returns)) {
      return decision.flatMap(d -> Mono.from(then.apply(d)));
    }
    return decision.flatMapMany(then::apply);
  }
}
