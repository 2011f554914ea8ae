package dev.sluice.spring.web;

import java.security.Principal;
import org.springframework.util.ClassUtils;

/**
 * The name of the authenticated principal, none for an anonymous caller. Spring Security's
 * anonymous authentication gives anonymous callers a principal too ({@code anonymousUser}); as a
 * key it would put them all in one bucket, so it counts as no principal, as Security's own
 * servlet integration ({@code getUserPrincipal}) treats it. Security is not a dependency of the
 * starter, hence the class looked up by name.
 */
final class Principals {
  private static final Class<?> ANONYMOUS = anonymousTokenClass();

  private Principals() {}

  static String name(Principal p) {
    if (p == null || ANONYMOUS != null && ANONYMOUS.isInstance(p)) {
      return null;
    }
    String name = p.getName();
    return name == null || name.isEmpty() ? null : name;
  }

  private static Class<?> anonymousTokenClass() {
    String name = "org.springframework.security.authentication.AnonymousAuthenticationToken";
    ClassLoader loader = Principals.class.getClassLoader();
    return ClassUtils.isPresent(name, loader) ? ClassUtils.resolveClassName(name, loader) : null;
  }
}
