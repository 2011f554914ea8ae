package dev.sluice.spring.web;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.web.server.WebFilter;

/** {@link SpringSecurityContract} in a WebFlux application. */
class WebFluxSpringSecurityTest extends SpringSecurityContract {
  @BeforeAll
  static void startApp() {
    app = WebApps.startSecured(SecuredApps.Reactive.class, WebApplicationType.REACTIVE, SecuredApps.properties());
    port = WebApps.port(app);
  }

  @Override
  ConfigurableApplicationContext start(String... extra) {
    return WebApps.startSecured(SecuredApps.Reactive.class, WebApplicationType.REACTIVE, SecuredApps.properties(extra));
  }

  // The order WebFlux's HTTP handler applies them in.
  @Override
  List<Object> filtersInOrder() {
    return app.getBeanProvider(WebFilter.class).orderedStream().map(Object.class::cast).toList();
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
