package dev.sluice.spring.annotation;

import java.lang.reflect.Method;
import java.util.Map;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Proxies the beans that have {@link RateLimited} methods, and checks each such method as its
 * bean is made: a method whose operation, rule, attributes or expressions do not resolve stops
 * the start. The advice runs before the bean's other advisors (a transaction is not opened for
 * a call that is denied).
 */
final class RateLimitedPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
  private static final long serialVersionUID = 1L;

  private final transient RateLimitedInterceptor interceptor;

  RateLimitedPostProcessor(RateLimitedInterceptor interceptor) {
    this.interceptor = interceptor;
    this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, RateLimited.class, true),
        interceptor);
    setBeforeExistingAdvisors(true);
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> target = AopUtils.getTargetClass(bean);
    if (AnnotationUtils.isCandidateClass(target, RateLimited.class)) {
      Map<Method, RateLimited> methods = MethodIntrospector.selectMethods(target,
          (MethodIntrospector.MetadataLookup<RateLimited>) m -> AnnotatedElementUtils.findMergedAnnotation(m,
              RateLimited.class));
      methods.forEach(interceptor::register);
    }
    return super.postProcessAfterInitialization(bean, beanName);
  }
}
