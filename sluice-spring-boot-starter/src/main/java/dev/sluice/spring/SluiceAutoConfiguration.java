package dev.sluice.spring;

import dev.sluice.DecisionListener;
import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.config.ConfigException;
import dev.sluice.spi.Store;
import dev.sluice.spring.web.RouteTable;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnNotWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The limiter of an application: its store ({@code sluice.store}), its rules ({@code sluice.rules},
 * {@code sluice.config}, reloaded when the files change) and its listeners (the meters, when the
 * application has a {@link MeterRegistry}). Whatever does not resolve stops the start with a
 * {@link SluiceConfigurationException} that says what to fix.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnProperty(prefix = "sluice", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

  @Bean
  SluiceRuleSet sluiceRuleSet(SluiceProperties properties, Environment environment) {
    StructuredRules.refuse(environment);
    return SluiceRuleSet.load(properties);
  }

  @Bean
  @ConditionalOnMissingBean
  RateLimiter sluiceRateLimiter(SluiceProperties properties, SluiceRuleSet rules,
      Optional<StoreUris.RedisOpener> redis, ObjectProvider<DecisionListener> listeners) {
    Store store = StoreUris.open(properties.getStore(), redis.orElse(null));
    Sluice.Builder b = Sluice.builder().store(store).rules(rules.loaded().rules());
    if (properties.getStoreTimeout() != null) {
      b.storeTimeout(properties.getStoreTimeout());
    }
    listeners.orderedStream().forEach(b::listener);
    RateLimiter limiter;
    try {
      limiter = b.build();
    } catch (UnsupportedRuleException e) {
      store.close();
      throw new SluiceConfigurationException("the store cannot decide a rule: " + e.getMessage(),
          "Change the rule's windows or algorithm, or use another store.", e);
    }
    List<String> closed = rules.loaded().rules().rules().stream().filter(r -> r.failureMode() == FailureMode.CLOSED)
        .map(Rule::name).toList();
    if (!closed.isEmpty() && !reachable(limiter)) {
      limiter.close();
      throw new SluiceConfigurationException("the store " + StoreUris.redacted(String.valueOf(properties.getStore()))
          + " (sluice.store) does not answer, and rules " + closed + " have failure_mode: closed: they would deny "
          + "every request", "Start the store or correct sluice.store.");
    }
    return limiter;
  }

  private static boolean reachable(RateLimiter limiter) {
    try {
      return Boolean.TRUE.equals(limiter.ping().toCompletableFuture().get(5, TimeUnit.SECONDS));
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return false;
    }
  }

  @Bean
  EnvoyDomains sluiceEnvoyDomains(SluiceRuleSet rules) {
    return new EnvoyDomains(rules.domains());
  }

  @Bean
  Requirements sluiceRequirements() {
    return new Requirements();
  }

  @Bean
  @ConditionalOnMissingBean
  DenialResponses sluiceDenialResponses(SluiceProperties properties) {
    return new DenialResponses(properties.getWeb().isProblemDetails(), properties.getWeb().getHeaders());
  }

  @Bean
  SluiceRoutes sluiceRoutes(SluiceProperties properties, Requirements requirements, RateLimiter limiter,
      EnvoyDomains domains) {
    RouteTable table = RouteTable.of(properties.getWeb().isEnabled() ? properties.getWeb() : new SluiceProperties.Web(),
        domains::current);
    for (Map.Entry<String, Map.Entry<String, java.util.Set<String>>> u : table.uses().entrySet()) {
      requirements.add(Requirements.operation(u.getKey(), u.getValue().getKey(), u.getValue().getValue()),
          limiter.rules());
    }
    for (Requirements.Use u : table.envoyUses()) {
      requirements.add(u, limiter.rules(), domains.current());
    }
    return new SluiceRoutes(table);
  }

  @Bean
  @ConditionalOnProperty(prefix = "sluice", name = "config")
  ConfigWatcher sluiceConfigWatcher(SluiceProperties properties, SluiceRuleSet rules, RateLimiter limiter,
      EnvoyDomains domains, Requirements requirements, ObjectProvider<ConfigWatcher.Listener> listeners) {
    try {
      return new ConfigWatcher(rules.sources(), rules.texts(), limiter, domains, requirements,
          properties.getReloadInterval(),
          listeners.orderedStream().toList());
    } catch (ConfigException e) {
      throw new SluiceConfigurationException("sluice.config cannot be watched:\n" + RuleSources.describe(e),
          "Correct sluice.config.", e);
    }
  }

  /** Routes in an application that serves no requests would run nothing. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnNotWebApplication
  static class NotWeb {
    @Bean
    SmartInitializingSingleton sluiceRoutesNeedAWebApplication(SluiceProperties properties) {
      return () -> {
        if (properties.getWeb().isEnabled() && !properties.getWeb().getRoutes().isEmpty()) {
          throw new SluiceConfigurationException("sluice.web.routes are configured, but the application is not a "
              + "web application: no request would run them", "Add spring-boot-starter-webmvc or "
              + "spring-boot-starter-webflux, or remove sluice.web.routes (use @RateLimited on methods).");
        }
      };
    }
  }

  /** The Redis store, on the application's Lettuce resources when Boot's Redis support made them. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.sluice.redis.RedisStore", "io.lettuce.core.resource.ClientResources"})
  static class Redis {
    @Bean
    StoreUris.RedisOpener sluiceRedisOpener(SluiceProperties properties, Optional<ClientResources> resources) {
      return new RedisStoreOpener(resources.orElse(null), properties.getRedisPrefix());
    }
  }

  /** The limiter's meters, in the application's registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  @ConditionalOnBean(MeterRegistry.class)
  static class Metrics {
    @Bean
    SluiceMeters sluiceMeters(MeterRegistry registry, SluiceRuleSet rules) {
      SluiceMeters m = new SluiceMeters(registry);
      m.rulesInForce(rules.loaded().rules().size());
      return m;
    }
  }
}
