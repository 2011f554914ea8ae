package dev.sluice.spring.annotation;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.spring.DenialResponses;
import dev.sluice.spring.Requirements;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Decides each call of a {@link RateLimited} method before it runs. A method returning
 * {@code Mono} or {@code Flux} is decided when its result is subscribed to, and one returning a
 * {@code CompletionStage} when the limiter answers: neither blocks a thread. Others are decided
 * on the caller's thread.
 */
final class RateLimitedInterceptor implements MethodInterceptor {
  private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
      RateLimitedInterceptor.class.getClassLoader());

  /** What the beans the interceptor needs are, resolved when a plan is first made. */
  record Context(RateLimiter limiter, DenialResponses responses, Requirements requirements) {}

  private final Supplier<Context> context;
  private volatile Context resolved;
  private final ConcurrentHashMap<Method, Plan> plans = new ConcurrentHashMap<>();

  RateLimitedInterceptor(Supplier<Context> context) {
    this.context = context;
  }

  Context context() {
    Context c = resolved;
    if (c == null) {
      c = context.get();
      resolved = c;
    }
    return c;
  }

  /** Checks and remembers the plan of {@code m}. */
  void register(Method m, RateLimited a) {
    Context c = context();
    plans.computeIfAbsent(m, x -> Plan.of(m, a, c.limiter().rules(), c.requirements()));
  }

  @Override
  public Object invoke(MethodInvocation inv) throws Throwable {
    Plan plan = plan(inv);
    Context c = context();
    Object[] args = inv.getArguments();
    Class<?> returns = inv.getMethod().getReturnType();
    if (REACTOR && ReactiveCalls.handles(returns)) {
      return ReactiveCalls.call(returns, () -> decideAsync(c, plan, args), d -> denied(c, d), inv::proceed);
    }
    if (CompletionStage.class.isAssignableFrom(returns)) {
      return decideAsync(c, plan, args).toCompletableFuture().<Object>thenCompose(d -> {
        if (!d.allowed()) {
          return CompletableFuture.failedFuture(denied(c, d));
        }
        Supplier<CompletionStage<Object>> call = () -> {
          try {
            @SuppressWarnings("unchecked")
            CompletionStage<Object> result = (CompletionStage<Object>) inv.proceed();
            return result;
          } catch (Throwable t) {
            return CompletableFuture.failedFuture(t);
          }
        };
        if (d.waitMs() > 0) {
          return CompletableFuture.supplyAsync(() -> null,
              CompletableFuture.delayedExecutor(d.waitMs(), TimeUnit.MILLISECONDS)).thenCompose(x -> call.get());
        }
        return call.get();
      });
    }
    Decision d = plan.isOperation() ? c.limiter().acquire(plan.request(args))
        : c.limiter().acquire(Request.of(plan.rule(), plan.key(args), plan.cost()));
    if (!d.allowed()) {
      throw denied(c, d);
    }
    if (d.waitMs() > 0) {
      Thread.sleep(d.waitMs());
    }
    return inv.proceed();
  }

  private static RateLimitedException denied(Context c, Decision d) {
    return new RateLimitedException(d, c.responses().headers(d));
  }

  private static CompletionStage<Decision> decideAsync(Context c, Plan plan, Object[] args) {
    try {
      return plan.isOperation() ? c.limiter().acquireAsync(plan.request(args))
          : c.limiter().acquireAsync(Request.of(plan.rule(), plan.key(args), plan.cost()));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private Plan plan(MethodInvocation inv) {
    Method m = inv.getMethod();
    Plan p = plans.get(m);
    if (p != null) {
      return p;
    }
    Class<?> target = inv.getThis() == null ? null : AopUtils.getTargetClass(inv.getThis());
    Method specific = BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(m, target));
    p = plans.get(specific);
    if (p != null) {
      return p;
    }
    RateLimited a = AnnotatedElementUtils.findMergedAnnotation(specific, RateLimited.class);
    if (a == null) {
      a = AnnotatedElementUtils.findMergedAnnotation(m, RateLimited.class);
    }
    register(specific, a);
    return plans.get(specific);
  }
}
