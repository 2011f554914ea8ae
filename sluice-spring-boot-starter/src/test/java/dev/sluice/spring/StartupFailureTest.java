package dev.sluice.spring;

import static dev.sluice.spring.Fixtures.CORE;
import static dev.sluice.spring.Fixtures.RULES;
import static dev.sluice.spring.Fixtures.misconfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.spring.annotation.RateLimited;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Each misconfiguration stops the start, and the message names what to fix: never a limiter that
 * silently limits nothing.
 */
class StartupFailureTest {
  private final ApplicationContextRunner app = new ApplicationContextRunner().withConfiguration(CORE);
  private final WebApplicationContextRunner web = new WebApplicationContextRunner().withConfiguration(CORE);

  @Test
  void anUnparsableRuleSetNamesTheLineAndTheProblem() {
    app.withPropertyValues("sluice.rules=limits:\n  - name: a\n    config:\n      - {limit: 0, period: 60}\n")
        .run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("the rules do not load", "sluice.rules:4", "limit");
        });
  }

  @Test
  void rulesWrittenAsAStructureRatherThanAStringAreRefusedNotIgnored() {
    app.withPropertyValues("sluice.rules.limits[0].name=a", "sluice.rules.limits[0].config[0].limit=5").run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("sluice.rules.limits[0]", "one string of native YAML");
      assertThat(e.action()).contains("rules: |");
    });
  }

  @Test
  void anEnvoyFileInSluiceRulesIsRefusedByName() {
    app.withPropertyValues("sluice.rules=domain: d\ndescriptors:\n  - key: k\n").run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("sluice.rules:1:1", "Envoy", "sluice.config");
    });
  }

  @Test
  void anEnvoyFileInSluiceConfigLoadsItsLimitsAsRules(@TempDir Path dir) throws Exception {
    Path envoy = Files.writeString(dir.resolve("envoy.yaml"), EnvoyRoutesTest.EDGE);
    app.withPropertyValues("sluice.config=" + envoy).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(ctx.getBean(dev.sluice.RateLimiter.class).rules().get("envoy:edge/remote_address").windows().get(0)
          .limit()).isEqualTo(3);
      assertThat(ctx.getBean(EnvoyDomains.class).current()).containsOnlyKeys("edge");
    });
  }

  @Test
  void anEnvoyFileThatDoesNotLoadOrADomainDefinedTwiceNamesTheFileAndLine(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), EnvoyRoutesTest.EDGE);
    Path b = Files.writeString(dir.resolve("b.yaml"), "domain: edge\ndescriptors:\n  - key: x\n    rate_limit: "
        + "{unit: fortnight, requests_per_unit: 1}\n");
    app.withPropertyValues("sluice.config=" + dir).run(ctx ->
        assertThat(misconfiguration(ctx.getStartupFailure()).getMessage()).contains(b + ":4", "invalid rate limit unit "
            + "'fortnight'"));
    Files.writeString(b, "domain: edge\ndescriptors:\n  - key: x\n");
    app.withPropertyValues("sluice.config=" + dir).run(ctx ->
        assertThat(misconfiguration(ctx.getStartupFailure()).getMessage()).contains(b + ":1", "duplicate domain 'edge'",
            "a.yaml"));
  }

  private WebApplicationContextRunner envoyWeb(Path dir) throws Exception {
    Files.writeString(dir.resolve("edge.yaml"), EnvoyRoutesTest.EDGE);
    return web.withPropertyValues("sluice.config=" + dir, "sluice.rules=" + RULES, "sluice.web.routes[0].path=/api/**");
  }

  @Test
  void aRouteNamingAnUnknownEnvoyDomainNamesTheKnownDomains(@TempDir Path dir) throws Exception {
    envoyWeb(dir).withPropertyValues("sluice.web.routes[0].domain=egde",
        "sluice.web.routes[0].descriptors[0].remote_address=client-ip").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.routes[0].domain", "'egde'", "not defined",
              "the Envoy domains are edge");
        });
  }

  @Test
  void aRouteDescriptorThatNoLimitOfTheDomainCanMatchNamesTheLimitedDescriptors(@TempDir Path dir) throws Exception {
    envoyWeb(dir).withPropertyValues("sluice.web.routes[0].domain=edge",
        "sluice.web.routes[0].descriptors[0].remote_address=client-ip",
        "sluice.web.routes[0].descriptors[1].generic_key=value:web",
        "sluice.web.routes[0].descriptors[1].user=header:X-User").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.routes[0].descriptors[1] (generic_key:web/user) matches no "
              + "rate limit of domain 'edge'", "generic_key:api/user", "remote_address")
              .doesNotContain("descriptors[0]");
        });
  }

  @Test
  void aRouteGivingBothAnOperationAndADomainIsRefused(@TempDir Path dir) throws Exception {
    envoyWeb(dir).withPropertyValues("sluice.web.routes[0].operation=api.call", "sluice.web.routes[0].domain=edge",
        "sluice.web.routes[0].descriptors[0].remote_address=client-ip").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.routes[0] gives both an operation ('api.call') and an Envoy "
              + "domain ('edge')");
          assertThat(e.action()).contains("either operation", "or domain and descriptors");
        });
  }

  @Test
  void aRouteGivingNeitherAnOperationNorADomainIsRefused(@TempDir Path dir) throws Exception {
    envoyWeb(dir).withPropertyValues("sluice.web.routes[0].descriptors[0].remote_address=client-ip").run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("sluice.web.routes[0] has descriptors but no domain");
      assertThat(e.action()).contains("operation", "Envoy domain");
    });
    envoyWeb(dir).run(ctx -> assertThat(misconfiguration(ctx.getStartupFailure()).getMessage())
        .contains("sluice.web.routes[0].operation is missing"));
  }

  @Test
  void aDomainWithoutDescriptorsOrADescriptorWithABadSourceIsRefused(@TempDir Path dir) throws Exception {
    envoyWeb(dir).withPropertyValues("sluice.web.routes[0].domain=edge").run(ctx ->
        assertThat(misconfiguration(ctx.getStartupFailure()).getMessage())
            .contains("sluice.web.routes[0].descriptors is empty"));
    envoyWeb(dir).withPropertyValues("sluice.web.routes[0].domain=edge",
        "sluice.web.routes[0].descriptors[0].remote_address=cookie:ip").run(ctx ->
        assertThat(misconfiguration(ctx.getStartupFailure()).getMessage())
            .contains("sluice.web.routes[0].descriptors[0].remote_address is 'cookie:ip'"));
  }

  @Test
  void aRouteNamingAnUnknownOperationNamesTheRouteAndTheKnownOperations() {
    web.withPropertyValues("sluice.rules=" + RULES, "sluice.web.routes[0].path=/api/**",
        "sluice.web.routes[0].operation=api.cal", "sluice.web.routes[0].attributes.ip=client-ip").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.routes[0]", "'api.cal'", "not defined", "api.call",
              "tenant.call");
        });
  }

  @Test
  void aRouteThatDoesNotMapAnAttributeTheOperationReadsNamesTheAttribute() {
    web.withPropertyValues("sluice.rules=" + RULES, "sluice.web.routes[0].path=/api/**",
        "sluice.web.routes[0].operation=api.call", "sluice.web.routes[0].attributes.ip=client-ip").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.routes[0]", "api.call", "'user'", "does not map");
        });
  }

  @Test
  void anUnknownAttributeSourceNamesTheForms() {
    web.withPropertyValues("sluice.rules=" + RULES, "sluice.web.routes[0].path=/t/**",
        "sluice.web.routes[0].operation=tenant.call", "sluice.web.routes[0].attributes.tenant=cookie:T").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.routes[0].attributes.tenant", "cookie:T");
          assertThat(e.action()).contains("header:NAME", "client-ip");
        });
  }

  @Test
  void aBadTrustedProxyIsNamed() {
    web.withPropertyValues("sluice.rules=" + RULES, "sluice.web.trusted-proxies[0]=10.0.0.0/8",
        "sluice.web.trusted-proxies[1]=10.0.0.0/33").run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("sluice.web.trusted-proxies[1]", "10.0.0.0/33");
        });
  }

  @Test
  void routesInAnApplicationThatServesNoRequestsWouldRunNothing() {
    app.withPropertyValues("sluice.rules=" + RULES, "sluice.web.routes[0].path=/t/**",
        "sluice.web.routes[0].operation=tenant.call", "sluice.web.routes[0].attributes.tenant=header:X-Tenant")
        .run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("not a web application");
        });
  }

  static class UnknownRule {
    @RateLimited(rule = "per_usr", key = "#user")
    public String call(String user) {
      return user;
    }
  }

  @Test
  void anAnnotationNamingAnUnknownRuleNamesTheMethod() {
    app.withPropertyValues("sluice.rules=" + RULES).withBean(UnknownRule.class).run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("UnknownRule.call()", "'per_usr'", "per_user");
    });
  }

  static class UnknownOperation {
    @RateLimited(operation = "api.calls", attributes = "user=#user")
    public String call(String user) {
      return user;
    }
  }

  @Test
  void anAnnotationNamingAnUnknownOperationNamesIt() {
    app.withPropertyValues("sluice.rules=" + RULES).withBean(UnknownOperation.class).run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("UnknownOperation.call()", "'api.calls'", "not defined");
    });
  }

  static class Unmapped {
    @RateLimited(operation = "api.call", attributes = "user=#user")
    public String call(String user) {
      return user;
    }
  }

  @Test
  void anAnnotationThatDoesNotGiveAnAttributeNamesIt() {
    app.withPropertyValues("sluice.rules=" + RULES).withBean(Unmapped.class).run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("Unmapped.call()", "'ip'", "does not map");
    });
  }

  static class BadSpel {
    @RateLimited(rule = "per_user", key = "#user.")
    public String call(String user) {
      return user;
    }
  }

  @Test
  void anExpressionThatDoesNotParseNamesTheMethodAndTheExpression() {
    app.withPropertyValues("sluice.rules=" + RULES).withBean(BadSpel.class).run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("BadSpel.call()", "'#user.'", "does not parse");
    });
  }

  static class KeyForTwoAttributes {
    @RateLimited(operation = "api.call", key = "#user")
    public String call(String user) {
      return user;
    }
  }

  @Test
  void aKeyForAnOperationThatReadsSeveralAttributesIsRefused() {
    app.withPropertyValues("sluice.rules=" + RULES).withBean(KeyForTwoAttributes.class).run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("KeyForTwoAttributes.call()", "gives a key", "user", "ip");
    });
  }

  @Test
  void anUnreachableStoreWithRulesThatFailClosedStopsTheStart() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    String closed = "limits:\n  - name: strict\n    failure_mode: closed\n    config:\n      - {limit: 5, period: 3}\n";
    app.withPropertyValues("sluice.rules=" + closed, "sluice.store=redis://user:secret@127.0.0.1:" + port)
        .run(ctx -> {
          SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
          assertThat(e.getMessage()).contains("cannot connect", "127.0.0.1:" + port, "sluice.store")
              .doesNotContain("secret");
          assertThat(e.action()).contains("failure_mode: closed");
        });
  }

  @Test
  void anUnknownStoreSchemeIsNamed() {
    app.withPropertyValues("sluice.store=memcached://localhost").run(ctx -> {
      SluiceConfigurationException e = misconfiguration(ctx.getStartupFailure());
      assertThat(e.getMessage()).contains("memcached://localhost", "not a store");
    });
  }

  @Test
  void theFailureAnalyzerPrintsWhatAndWhatToDo() {
    SluiceConfigurationException e = new SluiceConfigurationException("sluice.web.routes[0] names operation 'x'",
        "Define the operation.");
    FailureAnalysis a = new SluiceFailureAnalyzer().analyze(new IllegalStateException("wrapped", e));
    assertThat(a.getDescription()).isEqualTo("Sluice: sluice.web.routes[0] names operation 'x'");
    assertThat(a.getAction()).isEqualTo("Define the operation.");
  }

  @Configuration(proxyBeanMethods = false)
  static class Nothing {
    @Bean
    String nothing() {
      return "";
    }
  }

  @Test
  void noRulesAndNoUsesStartsAnEmptyLimiter() {
    app.withUserConfiguration(Nothing.class).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(ctx.getBean(dev.sluice.RateLimiter.class).rules().size()).isZero();
    });
  }
}
