package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.StoreException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Which failures of the Redis store are outages (failure modes decide) and which fail the request. */
class StoreErrorsTest {

  @ParameterizedTest
  @ValueSource(strings = {
      "LOADING Redis is loading the dataset in memory",
      "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
      "READONLY You can't write against a read only replica.",
      "NOREPLICAS Not enough good replicas to write.",
      "TRYAGAIN Multiple keys request during rehashing of slot",
      "CLUSTERDOWN The cluster is down",
      "OOM command not allowed when used memory > 'maxmemory'.",
      "OOM command not allowed when used memory > 'maxmemory'. script: 82cd, on @user_script:1.",
      "ERR Error running script (call to f_82cd): @user_script:1: @user_script: 1: -OOM command not allowed when"
          + " used memory > 'maxmemory'.",
      "ERR Error running script (call to f_82cd): @user_script:1: -READONLY You can't write against a read only"
          + " replica."})
  void errorRepliesOfAServerThatCannotTakeCommandsForNowAreOutages(String reply) {
    assertThat(StoreErrors.isOutage(reply)).isTrue();
    Throwable e = new RedisCommandExecutionException(reply);
    assertThat(StoreErrors.classify(new CompletionException(e))).isSameAs(e);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "WRONGTYPE Operation against a key holding the wrong kind of value script: g, on @user_function:3.",
      "ERR user_function:4: Script attempted to access nonexistent global variable 'nosuch' script: e",
      "ERR Error running script (call to f_82cd): @user_script:1: WRONGTYPE Operation against a key holding the"
          + " wrong kind of value",
      "NOPERM No permissions to access a key",
      "BUSYKEY Target key name already exists.",
      "ERR value is not an integer or out of range"})
  void otherErrorRepliesFailTheRequest(String reply) {
    assertThat(StoreErrors.isOutage(reply)).isFalse();
    Throwable c = StoreErrors.classify(new CompletionException(new RedisCommandExecutionException(reply)));
    assertThat(c).isInstanceOf(StoreException.class).hasMessage("the Redis store refused the decision: " + reply);
  }

  @Test
  void failuresOfTheConnectionOrTheClientAreOutages() {
    for (Throwable e : new Throwable[] {new RedisCommandTimeoutException("Command timed out after 1 second(s)"),
        new RedisConnectionException("Unable to connect to 127.0.0.1:1"), new RedisException("Connection closed"),
        new IllegalStateException("the Redis store is closed")}) {
      assertThat(StoreErrors.classify(e)).isSameAs(e);
    }
  }

  @Test
  void aReplyThatCannotBeReadFailsTheRequest() {
    Throwable c = StoreErrors.classify(new CompletionException(new MalformedReplyException("script reply has 3 bytes")));
    assertThat(c).isInstanceOf(StoreException.class)
        .hasMessage("the Redis store's reply could not be read: script reply has 3 bytes");
  }
}
