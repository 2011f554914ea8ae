package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  private static String part(String name) throws IOException {
    try (InputStream in = DecisionScript.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void everyLuaFileIsAtMostThreeHundredLines() throws IOException {
    for (String name : DecisionScript.PARTS) {
      assertThat(part(name).lines().count()).as(name).isLessThanOrEqualTo(300);
    }
  }

  /**
   * The library's top level runs once, at FUNCTION LOAD: a name declared there and written from a
   * function would carry state from one call to the next. Only the kept item arguments may.
   */
  @Test
  void noFunctionWritesANameDeclaredAtTheLibrarysTopLevelButTheKeptItems() {
    String text = DecisionScript.text();
    List<String> topLevel = new ArrayList<>();
    Matcher declared = Pattern.compile("(?m)^local (?!function)([\\w, ]+?)(?: =|$)").matcher(text);
    while (declared.find()) {
      for (String name : declared.group(1).split(",")) {
        topLevel.add(name.trim());
      }
    }
    assertThat(topLevel).contains("ALGORITHMS", "kept_items", "INT64S");
    List<String> written = new ArrayList<>();
    for (String name : topLevel) {
      // Indented: inside a function or a block. An algorithm's table is assigned once, in the
      // do-block that defines it, at load.
      Pattern write = Pattern.compile("(?m)^[ \\t]+" + Pattern.quote(name) + "(?:\\[[^\\]]*\\]|\\.\\w+)*\\s*(?:,[^=]*)?=[^=]");
      Matcher m = write.matcher(text);
      while (m.find()) {
        written.add(name + ": " + m.group().trim());
      }
    }
    assertThat(written).allMatch(w -> w.startsWith("kept_items")
        || w.matches("(sliding_log|sliding_log_large|sliding_window|fixed_window|token_bucket|leaky_bucket): \\1 =.*"));
  }
}
