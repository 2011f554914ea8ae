package dev.sluice.spring.web;

import dev.sluice.spring.annotation.RateLimited;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A small servlet application: a few handlers, one of them annotated. */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import(MvcApp.Handlers.class)
public class MvcApp {
  static final String RULES = """
      limits:
        - name: per_user
          config:
            - {limit: 5, period: 60}
        - name: per_addr
          config:
            - {limit: 2, period: 60}
        - name: per_tenant
          config:
            - {limit: 3, period: 60}
        - name: per_caller
          config:
            - {limit: 2, period: 60}
      operations:
        - name: api.call
          items:
            - {rule: per_user, key: "user:{user}"}
        - name: addr.call
          items:
            - {rule: per_addr, key: "ip:{ip}"}
        - name: tenant.call
          items:
            - {rule: per_tenant, key: "tenant:{tenant}"}
      """;

  @RestController
  public static class Handlers {
    @GetMapping("/api/items")
    public String items() {
      return "items";
    }

    @GetMapping("/addr")
    public String addr() {
      return "addr";
    }

    @GetMapping("/tenants/{tenant}/items")
    public String tenantItems(@PathVariable String tenant) {
      return "items of " + tenant;
    }

    @GetMapping("/by-header")
    public String byHeader() {
      return "by header";
    }

    @GetMapping("/annotated/{caller}")
    @RateLimited(rule = "per_caller", key = "#caller")
    public String annotated(@PathVariable String caller) {
      return "hello " + caller;
    }
  }
}
