package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** Which server errors send a decision to the script: only those that guarantee nothing ran. */
class DecisionScriptTest {
  private static Throwable reply(String message) {
    return new CompletionException(new RedisCommandExecutionException(message));
  }

  @Test
  void aServerOrUserWithoutFunctionsSwitchesToTheScript() {
    // Redis 6.2, and the ACL errors of Redis 7.0 (7.2 and Valkey say "User x has no permissions…").
    assertThat(DecisionScript.isUnsupported(reply("ERR unknown command 'FCALL', with args beginning with: 'sluice_0'"))).isTrue();
    assertThat(DecisionScript.isUnsupported(reply("ERR unknown command `FUNCTION`, with args beginning with: `LOAD`"))).isTrue();
    assertThat(DecisionScript.isUnsupported(reply("NOPERM this user has no permissions to run the 'fcall' command"))).isTrue();
    assertThat(DecisionScript.isUnsupported(reply("NOPERM User bob has no permissions to run the 'function|load' command"))).isTrue();
  }

  @Test
  void aRefusalInsideTheFunctionIsNotRetriedAsTheScript() {
    // The function may have written before a later command was refused: running it again could count twice.
    assertThat(DecisionScript.isUnsupported(reply("NOPERM this user has no permissions to run the 'set' command"))).isFalse();
    assertThat(DecisionScript.isUnsupported(reply("NOPERM this user has no permissions to access one of the keys used as arguments"))).isFalse();
    assertThat(DecisionScript.isUnsupported(reply("ERR unknown command 'setrange', with args beginning with: 'sluice:{fcall|k}'"))).isFalse();
    assertThat(DecisionScript.isUnsupported(reply("ERR Function not found"))).isFalse();
  }

  @Test
  void onlyAMissingFunctionOrScriptIsAMiss() {
    assertThat(DecisionScript.isFunctionNotFound(reply("ERR Function not found"))).isTrue();
    assertThat(DecisionScript.isFunctionNotFound(reply("ERR user_function:12: attempt to index a nil value"))).isFalse();
    assertThat(DecisionScript.isNoScript(reply("NOSCRIPT No matching script. Please use EVAL."))).isTrue();
    assertThat(DecisionScript.isNoScript(reply("ERR Function not found"))).isFalse();
  }
}
