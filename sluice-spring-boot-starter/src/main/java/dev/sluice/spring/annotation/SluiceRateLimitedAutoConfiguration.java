package dev.sluice.spring.annotation;

import dev.sluice.RateLimiter;
import dev.sluice.spring.DenialResponses;
import dev.sluice.spring.Requirements;
import dev.sluice.spring.SluiceAutoConfiguration;
import dev.sluice.spring.SluiceConfigurationException;
import dev.sluice.spring.SluiceProperties;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/** {@link RateLimited} methods, and the answer of a web application to their denials. */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass(MethodInterceptor.class)
public class SluiceRateLimitedAutoConfiguration {

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static RateLimitedPostProcessor sluiceRateLimitedPostProcessor(ObjectProvider<RateLimiter> limiter,
      ObjectProvider<DenialResponses> responses, ObjectProvider<Requirements> requirements) {
    return new RateLimitedPostProcessor(new RateLimitedInterceptor(() -> {
      try {
        return new RateLimitedInterceptor.Context(limiter.getObject(), responses.getObject(),
            requirements.getObject());
      } catch (NoSuchBeanDefinitionException e) {
        throw new SluiceConfigurationException("@RateLimited is used, but Sluice is not configured (sluice.enabled "
            + "is false)", "Set sluice.enabled=true, or remove @RateLimited.", e);
      }
    }));
  }

  /** Denied controller calls answered with their status, headers and problem body. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication
  @ConditionalOnClass(name = "org.springframework.web.bind.annotation.RestControllerAdvice")
  static class Web {
    @Bean
    RateLimitedExceptionHandler sluiceRateLimitedExceptionHandler(ObjectProvider<SluiceProperties> properties) {
      SluiceProperties p = properties.getIfAvailable();
      return new RateLimitedExceptionHandler(p == null || p.getWeb().isProblemDetails());
    }
  }
}
