package dev.sluice.spring.web;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A servlet and a WebFlux application secured with HTTP Basic and in-memory users: {@code /public/**}
 * is open to anyone, {@code /admin/**} needs the role ADMIN, everything else a user.
 */
final class SecuredApps {
  static final String PASSWORD = "pw";

  static final String RULES = """
      limits:
        - name: per_user
          config:
            - {limit: 5, period: 60}
        - name: per_ip
          config:
            - {limit: 2, period: 60}
      operations:
        - name: user.call
          items:
            - {rule: per_user, key: "user:{user}"}
        - name: open.call
          items:
            - {rule: per_user, key: "user:{user}", when: user}
            - {rule: per_ip, key: "ip:{ip}", unless: user}
      """;

  private static final String[] PROPERTIES = {
      "sluice.rules=" + RULES,
      "sluice.web.routes[0].path=/api/**",
      "sluice.web.routes[0].operation=user.call",
      "sluice.web.routes[0].attributes.user=principal",
      "sluice.web.routes[1].path=/public/strict",
      "sluice.web.routes[1].operation=user.call",
      "sluice.web.routes[1].attributes.user=principal",
      "sluice.web.routes[2].path=/public/open",
      "sluice.web.routes[2].operation=open.call",
      "sluice.web.routes[2].attributes.user=principal",
      "sluice.web.routes[2].attributes.ip=client-ip",
      "sluice.web.routes[3].path=/admin/**",
      "sluice.web.routes[3].operation=user.call",
      "sluice.web.routes[3].attributes.user=principal"};

  private SecuredApps() {}

  /** {@link #PROPERTIES} and {@code extra}. */
  static String[] properties(String... extra) {
    String[] all = java.util.Arrays.copyOf(PROPERTIES, PROPERTIES.length + extra.length);
    System.arraycopy(extra, 0, all, PROPERTIES.length, extra.length);
    return all;
  }

  private static UserDetails[] users() {
    String[] names = {"alice", "bob", "carol", "dave", "erin", "frank", "grace"};
    UserDetails[] users = new UserDetails[names.length + 1];
    for (int i = 0; i < names.length; i++) {
      users[i] = User.withUsername(names[i]).password("{noop}" + PASSWORD).roles("USER").build();
    }
    users[names.length] = User.withUsername("root").password("{noop}" + PASSWORD).roles("USER", "ADMIN").build();
    return users;
  }

  /** Counts the calls that reached each handler: a denied request must not. */
  @RestController
  public static class Handlers {
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    int calls(String path) {
      AtomicInteger n = calls.get(path);
      return n == null ? 0 : n.get();
    }

    private String reached(String path) {
      calls.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
      return path;
    }

    @GetMapping("/api/items")
    public String items() {
      return reached("/api/items");
    }

    @GetMapping("/admin/items")
    public String adminItems() {
      return reached("/admin/items");
    }

    @GetMapping("/public/strict")
    public String strict() {
      return reached("/public/strict");
    }

    @GetMapping("/public/open")
    public String open() {
      return reached("/public/open");
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(Handlers.class)
  public static class Servlet {
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
      return http
          .authorizeHttpRequests(a -> a.requestMatchers("/public/**").permitAll()
              .requestMatchers("/admin/**").hasRole("ADMIN")
              .anyRequest().authenticated())
          .httpBasic(Customizer.withDefaults())
          .build();
    }

    @Bean
    InMemoryUserDetailsManager users() {
      return new InMemoryUserDetailsManager(SecuredApps.users());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(Handlers.class)
  public static class Reactive {
    // Anonymous authentication is on, as the servlet stack has it by default: an anonymous
    // caller then has a principal ("anonymousUser") that must not count as a user.
    @Bean
    SecurityWebFilterChain security(ServerHttpSecurity http) {
      return http
          .authorizeExchange(a -> a.pathMatchers("/public/**").permitAll()
              .pathMatchers("/admin/**").hasRole("ADMIN")
              .anyExchange().authenticated())
          .httpBasic(Customizer.withDefaults())
          .anonymous(Customizer.withDefaults())
          .build();
    }

    @Bean
    MapReactiveUserDetailsService users() {
      return new MapReactiveUserDetailsService(SecuredApps.users());
    }
  }
}
