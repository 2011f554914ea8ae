package dev.sluice.bench.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring MVC application whose one route Sluice limits per user, with limits the load never
 * reaches; started with {@code --sluice.enabled=false}, the same application without Sluice.
 */
@SpringBootApplication
public class BenchApplication {
  public static void main(String[] args) {
    SpringApplication.run(BenchApplication.class, args);
  }
}
