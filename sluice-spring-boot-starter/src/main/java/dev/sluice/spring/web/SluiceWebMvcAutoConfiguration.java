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
import org.springframework.boot.web.servlet.AbstractFilterRegistrationBean;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;

/** The servlet filter of {@code sluice.web.routes}, in a servlet web application. */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({OncePerRequestFilter.class, RequestMappingInfoHandlerMapping.class})
@ConditionalOnBean(RateLimiter.class)
public class SluiceWebMvcAutoConfiguration {
  /** The name Spring Boot registers Spring Security's filter under. */
  private static final String SECURITY_FILTER = "springSecurityFilterChain";

  @Bean
  @ConditionalOnProperty(prefix = "sluice.web", name = "enabled", havingValue = "true", matchIfMissing = true)
  FilterRegistrationBean<SluiceServletFilter> sluiceServletFilter(SluiceProperties properties, RateLimiter limiter,
      DenialResponses responses, SluiceRoutes routes) {
    RouteTable table = routes.table();
    FilterRegistrationBean<SluiceServletFilter> reg =
        new FilterRegistrationBean<>(new SluiceServletFilter(table, limiter, responses));
    reg.setName("sluiceFilter");
    reg.setOrder(properties.getWeb().getFilterOrder());
    return reg;
  }

  @Bean
  @ConditionalOnExpression("${sluice.web.enabled:true} && ${sluice.web.check-routes:true}")
  SmartInitializingSingleton sluiceMvcRouteCheck(ObjectProvider<SluiceRoutes> routes,
      ObjectProvider<RequestMappingInfoHandlerMapping> mappings) {
    return () -> {
      List<RouteCheck.Handler> handlers = new ArrayList<>();
      mappings.orderedStream().forEach(m -> {
        for (RequestMappingInfo info : m.getHandlerMethods().keySet()) {
          handlers.add(new RouteCheck.Handler(info.getPatternValues(), methods(info.getMethodsCondition().getMethods())));
        }
      });
      RouteCheck.check(routes.getObject().table(), handlers);
    };
  }

  @Bean
  @ConditionalOnProperty(prefix = "sluice.web", name = "enabled", havingValue = "true", matchIfMissing = true)
  SmartInitializingSingleton sluiceMvcSecurityOrderCheck(ObjectProvider<SluiceRoutes> routes,
      SluiceProperties properties, ObjectProvider<AbstractFilterRegistrationBean<?>> registrations) {
    return () -> {
      int order = properties.getWeb().getFilterOrder();
      registrations.stream()
          .filter(r -> SECURITY_FILTER.equals(r.getFilterName()) && r.getOrder() >= order)
          .findFirst()
          .ifPresent(r -> SecurityOrderCheck.sluiceRunsFirst(routes.getObject().table(), order,
              "Spring Security's (" + r.getOrder() + ")"));
    };
  }

  private static Set<HttpMethod> methods(Set<RequestMethod> methods) {
    return methods.stream().map(RequestMethod::asHttpMethod).collect(Collectors.toSet());
  }
}
