package dev.sluice.spring.web;

import java.util.List;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterProperties;
import org.springframework.boot.web.servlet.AbstractFilterRegistrationBean;
import org.springframework.boot.web.servlet.DelegatingFilterProxyRegistrationBean;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;

/** {@link SpringSecurityContract} in a Spring MVC application. */
class ServletSpringSecurityTest extends SpringSecurityContract {
  @Override
  Class<?> application() {
    return SecuredApps.Servlet.class;
  }

  @Override
  WebApplicationType type() {
    return WebApplicationType.SERVLET;
  }

  // The order the servlet container is given them in.
  @Override
  List<Object> filtersInOrder() {
    List<Object> filters = List.copyOf(app().getBeansOfType(AbstractFilterRegistrationBean.class).values());
    return filters.stream().sorted(AnnotationAwareOrderComparator.INSTANCE).toList();
  }

  @Override
  boolean isSecurity(Object filter) {
    return filter instanceof DelegatingFilterProxyRegistrationBean r
        && r.getFilterName().equals("springSecurityFilterChain")
        && r.getOrder() == SecurityFilterProperties.DEFAULT_FILTER_ORDER;
  }

  @Override
  boolean isSluice(Object filter) {
    return filter instanceof FilterRegistrationBean<?> r && r.getFilter() instanceof SluiceServletFilter;
  }
}
