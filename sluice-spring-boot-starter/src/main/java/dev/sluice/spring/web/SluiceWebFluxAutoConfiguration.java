package dev.sluice.spring.web;

import dev.sluice.RateLimiter;
import dev.sluice.spring.DenialResponses;
import dev.sluice.spring.SluiceAutoConfiguration;
import dev.sluice.spring.SluiceProperties;
import dev.sluice.spring.SluiceRoutes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.server.WebFilter;
import org.springframework.web.util.pattern.PathPattern;
import reactor.core.publisher.Mono;

/** The WebFlux filter of {@code sluice.web.routes}, in a reactive web application. */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({WebFilter.class, Mono.class, RequestMappingInfoHandlerMapping.class})
@ConditionalOnBean(RateLimiter.class)
public class SluiceWebFluxAutoConfiguration {
  private static final String SECURITY_FILTER = "org.springframework.security.web.server.WebFilterChainProxy";

  @Bean
  @ConditionalOnProperty(prefix = "sluice.web", name = "enabled", havingValue = "true", matchIfMissing = true)
  SluiceWebFilter sluiceWebFilter(SluiceProperties properties, RateLimiter limiter, DenialResponses responses,
      SluiceRoutes routes) {
    return new SluiceWebFilter(routes.table(), limiter, responses, properties.getWeb().getFilterOrder());
  }

  @Bean
  @ConditionalOnProperty(prefix = "sluice.web", name = "enabled", havingValue = "true", matchIfMissing = true)
  SmartInitializingSingleton sluiceFluxSecurityOrderCheck(ObjectProvider<SluiceRoutes> routes,
      SluiceProperties properties, ObjectProvider<WebFilter> filters) {
    return () -> {
      // The order WebFlux applies them in; Security is not a dependency, hence its class by name.
      List<WebFilter> ordered = filters.orderedStream().toList();
      int sluice = -1;
      for (int i = 0; i < ordered.size(); i++) {
        if (ordered.get(i) instanceof SluiceWebFilter) {
          sluice = i;
        } else if (sluice >= 0 && ordered.get(i).getClass().getName().equals(SECURITY_FILTER)) {
          SecurityOrderCheck.sluiceRunsFirst(routes.getObject().table(), properties.getWeb().getFilterOrder(),
              "Spring Security's WebFilterChainProxy");
        }
      }
    };
  }

  @Bean
  @ConditionalOnExpression("${sluice.web.enabled:true} && ${sluice.web.check-routes:true}")
  SmartInitializingSingleton sluiceFluxRouteCheck(ObjectProvider<SluiceRoutes> routes,
      ObjectProvider<RequestMappingInfoHandlerMapping> mappings) {
    return () -> {
      List<RouteCheck.Handler> handlers = new ArrayList<>();
      mappings.orderedStream().forEach(m -> {
        for (RequestMappingInfo info : m.getHandlerMethods().keySet()) {
          Set<String> patterns = info.getPatternsCondition().getPatterns().stream().map(PathPattern::getPatternString)
              .collect(Collectors.toSet());
          Set<HttpMethod> methods = info.getMethodsCondition().getMethods().stream().map(RequestMethod::asHttpMethod)
              .collect(Collectors.toSet());
          handlers.add(new RouteCheck.Handler(patterns, methods));
        }
      });
      RouteCheck.check(routes.getObject().table(), handlers);
    };
  }
}
