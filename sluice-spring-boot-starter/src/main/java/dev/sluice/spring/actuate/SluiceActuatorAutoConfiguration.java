package dev.sluice.spring.actuate;

import dev.sluice.RateLimiter;
import dev.sluice.spring.SluiceAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code sluice} health indicator and actuator endpoint, when the application has the actuator. */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBean(RateLimiter.class)
public class SluiceActuatorAutoConfiguration {

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
    SluiceHealthIndicator sluiceHealthIndicator(RateLimiter limiter) {
      return new SluiceHealthIndicator(limiter);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(Endpoint.class)
  static class EndpointConfiguration {
    @Bean
    @ConditionalOnMissingBean
    SluiceEndpoint sluiceEndpoint(RateLimiter limiter) {
      return new SluiceEndpoint(limiter);
    }
  }
}
