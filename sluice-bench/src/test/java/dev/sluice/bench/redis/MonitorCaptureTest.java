package dev.sluice.bench.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MonitorCaptureTest {

  @Test
  void monitorsQuotedArgumentsAreUnescaped() {
    assertThat(MonitorCapture.parse("\"evalsha\" \"ab12\" \"1\" \"sluice:{r|user:1}\" \"d\" \"\" \"a\\\"b\" \"\\x00\\n\""))
        .containsExactly("evalsha", "ab12", "1", "sluice:{r|user:1}", "d", "", "a\"b", "\u0000\n");
  }
}
