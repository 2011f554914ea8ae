package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** Who may use admin endpoints, decided from the bound address and the token. */
class AdminGuardTest {

  @Test
  void onLoopbackWithoutATokenAdminEndpointsAreOpen() throws Exception {
    for (String a : new String[] {"127.0.0.1", "127.0.0.2", "::1"}) {
      AdminGuard g = AdminGuard.of(null, InetAddress.getByName(a));
      assertThat(g.refusesAll()).as(a).isFalse();
      assertThatCode(() -> g.check("/v1/reset", null)).doesNotThrowAnyException();
    }
  }

  @Test
  void beyondLoopbackWithoutATokenEveryCallIsRefusedWith403NamingHowToEnableIt() throws Exception {
    for (String a : new String[] {"10.9.9.9", "0.0.0.0", "::", "192.168.1.5"}) {
      AdminGuard g = AdminGuard.of("", InetAddress.getByName(a));
      assertThat(g.refusesAll()).as(a).isTrue();
      ApiException e = catchThrowableOfType(() -> g.check("/v1/reset", "anything"), ApiException.class);
      assertThat(e.status).isEqualTo(403);
      assertThat(e.code).isEqualTo("admin_disabled");
      assertThat(e.getMessage()).contains("/v1/reset").contains("--admin-token").contains("SLUICE_ADMIN_TOKEN");
      assertThat(g.warning()).contains("--admin-token");
    }
  }

  @Test
  void withATokenOnlyThatTokenIsAcceptedWhereverTheServiceListens() throws Exception {
    for (String a : new String[] {"127.0.0.1", "10.9.9.9"}) {
      AdminGuard g = AdminGuard.of("s3cret-token", InetAddress.getByName(a));
      assertThat(g.refusesAll()).isFalse();
      assertThat(g.needsToken()).isTrue();
      assertThatCode(() -> g.check("/v1/reset", "s3cret-token")).doesNotThrowAnyException();
      for (String wrong : new String[] {null, "", "s3cret", "s3cret-token ", "S3CRET-TOKEN", "s3cret-tokenx"}) {
        ApiException e = catchThrowableOfType(() -> g.check("/v1/reset", wrong), ApiException.class);
        assertThat(e.status).as("%s", wrong).isEqualTo(401);
        assertThat(e.getMessage()).doesNotContain("s3cret");
      }
      assertThat(g.warning()).doesNotContain("s3cret");
    }
  }
}
