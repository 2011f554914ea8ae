package dev.sluice.spring;

import static dev.sluice.spring.Fixtures.RULES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import dev.sluice.spring.actuate.SluiceActuatorAutoConfiguration;
import dev.sluice.spring.actuate.SluiceEndpoint;
import dev.sluice.spring.actuate.SluiceHealthIndicator;
import dev.sluice.spring.annotation.RateLimitedExceptionHandler;
import dev.sluice.spring.annotation.SluiceRateLimitedAutoConfiguration;
import dev.sluice.spring.web.SluiceServletFilter;
import dev.sluice.spring.web.SluiceWebFilter;
import dev.sluice.spring.web.SluiceWebFluxAutoConfiguration;
import dev.sluice.spring.web.SluiceWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.web.servlet.DispatcherServlet;
import reactor.core.publisher.Mono;

/** Which beans appear: each optional part only when the application has what it needs. */
class ConditionsTest {
  private static final AutoConfigurations ALL = AutoConfigurations.of(SluiceAutoConfiguration.class,
      SluiceWebMvcAutoConfiguration.class, SluiceWebFluxAutoConfiguration.class,
      SluiceRateLimitedAutoConfiguration.class, SluiceActuatorAutoConfiguration.class);

  @Test
  void aServletApplicationWithoutWebFluxGetsTheServletFilterOnly() {
    new WebApplicationContextRunner().withConfiguration(ALL).withClassLoader(new FilteredClassLoader(Mono.class))
        .withPropertyValues("sluice.rules=" + RULES).run(ctx -> {
          assertThat(ctx).hasNotFailed().hasSingleBean(RateLimiter.class).doesNotHaveBean(SluiceWebFilter.class)
              .hasSingleBean(RateLimitedExceptionHandler.class);
          assertThat(ctx.getBean(FilterRegistrationBean.class).getFilter()).isInstanceOf(SluiceServletFilter.class);
        });
  }

  @Test
  void aReactiveApplicationWithoutServletsGetsTheWebFilterOnly() {
    new ReactiveWebApplicationContextRunner().withConfiguration(ALL)
        .withClassLoader(new FilteredClassLoader(DispatcherServlet.class, jakarta.servlet.Filter.class))
        .withPropertyValues("sluice.rules=" + RULES).run(ctx -> {
          assertThat(ctx).hasNotFailed().hasSingleBean(SluiceWebFilter.class)
              .doesNotHaveBean(FilterRegistrationBean.class);
        });
  }

  @Test
  void anApplicationThatIsNotWebGetsTheLimiterAndTheAnnotationOnly() {
    new ApplicationContextRunner().withConfiguration(ALL).withPropertyValues("sluice.rules=" + RULES).run(ctx -> {
      assertThat(ctx).hasNotFailed().hasSingleBean(RateLimiter.class).doesNotHaveBean(SluiceWebFilter.class)
          .doesNotHaveBean(FilterRegistrationBean.class).doesNotHaveBean(RateLimitedExceptionHandler.class);
    });
  }

  @Test
  void disabledMeansNoLimiterAndNoFilter() {
    new WebApplicationContextRunner().withConfiguration(ALL).withPropertyValues("sluice.enabled=false").run(ctx ->
        assertThat(ctx).hasNotFailed().doesNotHaveBean(RateLimiter.class).doesNotHaveBean(FilterRegistrationBean.class));
  }

  @Test
  void metersOnlyWithARegistry() {
    ApplicationContextRunner app = new ApplicationContextRunner().withConfiguration(ALL);
    app.run(ctx -> assertThat(ctx).doesNotHaveBean(SluiceMeters.class));
    app.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(ctx -> {
      assertThat(ctx).hasSingleBean(SluiceMeters.class);
      assertThat(ctx.getBean(MeterRegistry.class).find("sluice.rules").gauge()).isNotNull();
    });
  }

  @Test
  void healthAndEndpointOnlyWithTheActuator() {
    ApplicationContextRunner app = new ApplicationContextRunner().withConfiguration(ALL);
    app.run(ctx -> assertThat(ctx).hasSingleBean(SluiceHealthIndicator.class).hasSingleBean(SluiceEndpoint.class));
    app.withClassLoader(new FilteredClassLoader(HealthIndicator.class, Endpoint.class)).run(ctx ->
        assertThat(ctx).hasNotFailed().doesNotHaveBean(SluiceHealthIndicator.class)
            .doesNotHaveBean(SluiceEndpoint.class));
  }

  @Test
  void aRedisUriWithoutTheRedisStoreSaysWhichDependencyToAdd() {
    new ApplicationContextRunner().withConfiguration(ALL).withClassLoader(new FilteredClassLoader(RedisStore.class))
        .withPropertyValues("sluice.store=redis://localhost:6379").run(ctx -> {
          SluiceConfigurationException e = Fixtures.misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("Redis store is not on the class path");
          assertThat(e.action()).contains("dev.sluice:sluice-redis");
        });
  }
}
