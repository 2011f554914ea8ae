package dev.sluice.spring.web;

import java.util.List;
import org.springframework.boot.WebApplicationType;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.web.server.WebFilter;

/** {@link SpringSecurityContract} in a WebFlux application. */
class WebFluxSpringSecurityTest extends SpringSecurityContract {
  @Override
  Class<?> application() {
    return SecuredApps.Reactive.class;
  }

  @Override
  WebApplicationType type() {
    return WebApplicationType.REACTIVE;
  }

  // The order WebFlux's HTTP handler applies them in.
  @Override
  List<Object> filtersInOrder() {
    return app().getBeanProvider(WebFilter.class).orderedStream().map(Object.class::cast).toList();
  }

  @Override
  boolean isSecurity(Object filter) {
    return filter instanceof WebFilterChainProxy;
  }

  @Override
  boolean isSluice(Object filter) {
    return filter instanceof SluiceWebFilter;
  }
}
