package dev.sluice.spring.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimiter;
import dev.sluice.spring.SluiceAutoConfiguration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@link RateLimited} on a plain bean: every return type, and denied calls never run. */
class RateLimitedCallsTest {
  private static final String RULES = """
      limits:
        - name: per_user
          config:
            - {limit: 2, period: 1h}
        - name: per_ip
          config:
            - {limit: 100, period: 1h}
      operations:
        - name: login
          items:
            - {rule: per_user, key: "user:{user}", when: user}
            - {rule: per_ip, key: "ip:{ip}"}
      """;

  private final ApplicationContextRunner app = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceRateLimitedAutoConfiguration.class))
      .withPropertyValues("sluice.rules=" + RULES).withBean(Service.class);

  record Form(String user, String ip) {}

  static class Service {
    final AtomicInteger runs = new AtomicInteger();

    /** Calls that ran (read through the proxy, which has no state of its own). */
    public int runs() {
      return runs.get();
    }

    @RateLimited(rule = "per_user", key = "'user:' + #user")
    public String sync(String user) {
      runs.incrementAndGet();
      return "ok";
    }

    @RateLimited(operation = "login", attributes = {"user=#form.user", "ip=#form.ip"})
    public CompletionStage<String> async(Form form) {
      runs.incrementAndGet();
      return CompletableFuture.completedFuture("ok");
    }

    @RateLimited(operation = "login", attributes = {"user=#p0.user", "ip=#p0.ip"})
    public Mono<String> mono(Form form) {
      return Mono.fromCallable(() -> {
        runs.incrementAndGet();
        return "ok";
      });
    }

    @RateLimited(operation = "login", attributes = {"user=#form.user", "ip=#form.ip"}, cost = 2)
    public Flux<Integer> flux(Form form) {
      return Flux.just(1, 2, 3).doOnSubscribe(s -> runs.incrementAndGet());
    }
  }

  @Test
  void aDeniedSyncCallThrowsTheDenialAndDoesNotRun() {
    app.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      assertThat(s.sync("a")).isEqualTo("ok");
      assertThat(s.sync("a")).isEqualTo("ok");
      assertThatThrownBy(() -> s.sync("a")).isInstanceOfSatisfying(RateLimitedException.class, e -> {
        assertThat(e.getStatusCode().value()).isEqualTo(429);
        assertThat(e.decision().allowed()).isFalse();
        assertThat(e.getHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"per_user.3600s\";q=2;w=3600");
        assertThat(e.getHeaders().getFirst("Retry-After")).isNotNull();
        assertThat(e.getBody().getProperties()).containsKey("violated-policies");
      });
      assertThat(s.runs()).isEqualTo(2);
      assertThat(s.sync("b")).isEqualTo("ok");
    });
  }

  @Test
  void aCompletionStageIsFailedWithTheDenial() {
    app.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      Form f = new Form("u", "192.0.2.1");
      assertThat(s.async(f).toCompletableFuture().join()).isEqualTo("ok");
      assertThat(s.async(f).toCompletableFuture().join()).isEqualTo("ok");
      assertThatThrownBy(() -> s.async(f).toCompletableFuture().join()).isInstanceOf(CompletionException.class)
          .hasCauseInstanceOf(RateLimitedException.class);
      assertThat(s.runs()).isEqualTo(2);
    });
  }

  @Test
  void aMonoIsDecidedWhenSubscribedAndNotBefore() {
    app.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      RateLimiter limiter = ctx.getBean(RateLimiter.class);
      Form f = new Form("m", "192.0.2.2");
      Mono<String> first = s.mono(f);
      Mono<String> unused = s.mono(f);
      assertThat(unused).isNotNull();
      assertThat(limiter.acquire("per_user", "user:m", 0).items().get(0).windows().get(0).remaining()).isEqualTo(2);
      assertThat(first.block()).isEqualTo("ok");
      assertThat(s.mono(f).block()).isEqualTo("ok");
      assertThatThrownBy(() -> s.mono(f).block()).isInstanceOf(RateLimitedException.class);
      assertThat(s.runs()).isEqualTo(2);
    });
  }

  @Test
  void aFluxCostsItsCostAndIsDeniedBeforeItRuns() {
    app.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      Form f = new Form("x", "192.0.2.3");
      assertThat(s.flux(f).collectList().block()).containsExactly(1, 2, 3);
      assertThatThrownBy(() -> s.flux(f).collectList().block()).isInstanceOf(RateLimitedException.class);
      assertThat(s.runs()).isEqualTo(1);
    });
  }
}
