package dev.sluice.spring.web;

import dev.sluice.spring.annotation.RateLimited;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A small WebFlux application. */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import(FluxApp.Handlers.class)
public class FluxApp {
  @RestController
  public static class Handlers {
    @GetMapping("/api/items")
    public Mono<String> items() {
      return Mono.just("items");
    }

    @GetMapping("/addr")
    public Mono<String> addr() {
      return Mono.just("addr");
    }

    @GetMapping("/annotated/{caller}")
    @RateLimited(rule = "per_caller", key = "#caller")
    public Mono<String> annotated(@PathVariable String caller) {
      return Mono.just("hello " + caller);
    }

    @GetMapping("/stream/{tenant}")
    @RateLimited(operation = "tenant.call", key = "#tenant")
    public Flux<String> stream(@PathVariable String tenant) {
      return Flux.just("a", "b");
    }
  }
}
