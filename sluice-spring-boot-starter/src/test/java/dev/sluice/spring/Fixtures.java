package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.spring.actuate.SluiceActuatorAutoConfiguration;
import dev.sluice.spring.annotation.SluiceRateLimitedAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;

/** Rules and helpers the starter's tests share. */
final class Fixtures {
  /** A user may call 5 times a minute; the operation counts the user (when known) and the address. */
  static final String RULES = """
      limits:
        - name: per_user
          config:
            - {limit: 5, period: 60}
        - name: per_ip
          config:
            - {limit: 100, period: 60}
        - name: per_tenant
          config:
            - {limit: 3, period: 60}
      operations:
        - name: api.call
          items:
            - {rule: per_user, key: "user:{user}", when: user}
            - {rule: per_ip, key: "ip:{ip}"}
        - name: tenant.call
          items:
            - {rule: per_tenant, key: "tenant:{tenant}"}
      """;

  static final AutoConfigurations CORE = AutoConfigurations.of(SluiceAutoConfiguration.class,
      SluiceRateLimitedAutoConfiguration.class, SluiceActuatorAutoConfiguration.class);

  private Fixtures() {}

  /** The misconfiguration that stopped a start, wherever it is in the chain of causes. */
  static SluiceConfigurationException misconfiguration(Throwable failure) {
    assertThat(failure).as("the application must not start").isNotNull();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SluiceConfigurationException e) {
        return e;
      }
    }
    throw new AssertionError("the start failed, but not for a misconfiguration of Sluice", failure);
  }
}
