package dev.sluice.redis;

import dev.sluice.StoreException;
import io.lettuce.core.RedisCommandExecutionException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tells the store's outages from errors of a request, for the limiter (see {@code
 * Store#decide}): failure modes apply to outages; a request the server refused for reasons of
 * its own, or whose reply cannot be read, fails with a {@link StoreException} instead, since it
 * would fail the same way every time and {@code failure_mode: open} would admit it for good.
 *
 * <p>Outages: everything that is not an error reply of the server (timeouts, refused or lost
 * connections, the client's full queue, a closed store), and the error replies by which a server
 * says it cannot take the command <em>for now</em> ({@link #OUTAGES}). {@code OOM} is one: a
 * server at {@code maxmemory} with {@code noeviction} refuses every write until memory is freed,
 * which is a lack of capacity, as a server that stopped answering is. Every other error reply
 * ({@code WRONGTYPE}, a script error, {@code NOPERM}, an argument the server refuses) is the
 * request's.
 */
final class StoreErrors {
  /** First words of the error replies of a server that cannot take a command for now. */
  static final Set<String> OUTAGES = Set.of(
      "LOADING", // a restarted server still reading its data set
      "BUSY", // a script or function running past its time limit
      "MASTERDOWN", // a replica that lost its master
      "READONLY", // a replica, or a demoted master, until the client follows the failover
      "NOREPLICAS", // min-replicas-to-write not met
      "TRYAGAIN", // a Cluster slot in migration
      "CLUSTERDOWN", // a Cluster with no master for a slot
      "MOVED", // slot moves the client did not follow yet
      "ASK",
      "OOM"); // maxmemory reached with noeviction

  /**
   * Before Redis 7 an error of a command inside a script came wrapped: {@code ERR Error running
   * script (call to f_…): @user_script:1: @user_script: 1: -OOM command not allowed …}.
   */
  private static final Pattern WRAPPED = Pattern.compile("^ERR Error running script.*?: -?([A-Z]+) ");

  private StoreErrors() {}

  /** {@code error}'s cause as the limiter should see it: a {@link StoreException} unless an outage. */
  static Throwable classify(Throwable error) {
    Throwable c = error;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    if (c instanceof RedisCommandExecutionException && !isOutage(c.getMessage())) {
      return new StoreException("the Redis store refused the decision: " + c.getMessage(), c);
    }
    if (c instanceof MalformedReplyException) {
      return new StoreException("the Redis store's reply could not be read: " + c.getMessage(), c);
    }
    return c;
  }

  /**
   * For a stage's {@code handle} on one of the store's own scripts beside the decisions: the
   * failure to complete it with. An error reply that carries one of the script's codes (a word
   * and a space, such as {@code POLICYFULL }) becomes what {@code byCode} makes of the text after
   * it; any other error reply but an outage, a {@link StoreException} naming {@code command}.
   */
  static CompletionException scriptFailure(Throwable error, String command,
      Map<String, Function<String, RuntimeException>> byCode) {
    Throwable c = error;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    if (c instanceof RedisCommandExecutionException && c.getMessage() != null) {
      String m = c.getMessage();
      for (Map.Entry<String, Function<String, RuntimeException>> code : byCode.entrySet()) {
        int at = m.indexOf(code.getKey() + " ");
        if (at >= 0) {
          return new CompletionException(code.getValue().apply(m.substring(at + code.getKey().length() + 1)));
        }
      }
      if (!isOutage(m)) {
        return new CompletionException(new StoreException("the Redis store refused the " + command + ": " + m, c));
      }
    }
    return new CompletionException(c);
  }

  /** For a stage's {@code handle}: the failure to complete it with. */
  static CompletionException failure(Throwable error) {
    return new CompletionException(classify(error));
  }

  /** Whether an error reply says the server cannot take commands for now. */
  static boolean isOutage(String reply) {
    if (reply == null) {
      return false;
    }
    int space = reply.indexOf(' ');
    if (OUTAGES.contains(space < 0 ? reply : reply.substring(0, space))) {
      return true;
    }
    Matcher m = WRAPPED.matcher(reply);
    return m.find() && OUTAGES.contains(m.group(1));
  }
}
