package dev.sluice.server.cli;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * Walks every master's keys under a prefix with SCAN … MATCH {@code <prefix>*} COUNT {@code n} —
 * never KEYS, which blocks the server for the whole keyspace — handing each batch to a handler
 * that pipelines its per-key commands. Like SCAN itself, a key that exists throughout is seen at
 * least once; one created or deleted meanwhile may or may not be, and a key may be seen twice while
 * the server resizes its table.
 */
final class KeyScanner {
  /** What is done with each batch of key names, on the node that returned them. */
  interface BatchHandler {
    void accept(Keyspace.Node node, List<byte[]> keys);
  }

  private final Keyspace keyspace;
  private final KeyLayout layout;
  private final int count;
  private final Progress progress;
  private long seen;
  private long calls;

  KeyScanner(Keyspace keyspace, KeyLayout layout, int count, Progress progress) {
    this.keyspace = keyspace;
    this.layout = layout;
    this.count = count;
    this.progress = progress;
  }

  /**
   * Scans every master, in turn; {@code status} adds the handler's counts to the progress line.
   *
   * @return the keys seen
   */
  long run(BatchHandler handler, Supplier<String> status) {
    ScanArgs args = ScanArgs.Builder.matches(layout.matchPattern()).limit(count);
    List<Keyspace.Node> nodes = keyspace.nodes();
    for (int i = 0; i < nodes.size(); i++) {
      Keyspace.Node node = nodes.get(i);
      String where = nodes.size() == 1 ? "" : " on node " + (i + 1) + "/" + nodes.size() + " (" + node.name() + ")";
      RedisFuture<KeyScanCursor<byte[]>> next = node.commands().scan(ScanCursor.INITIAL, args);
      while (next != null) {
        KeyScanCursor<byte[]> page = await(next);
        calls++;
        // The next page is fetched while this one's keys are handled: one round trip fewer per batch.
        next = page.isFinished() ? null : node.commands().scan(page, args);
        List<byte[]> keys = new ArrayList<>(page.getKeys().size());
        for (byte[] k : page.getKeys()) {
          // MATCH already filters; checked again because keys outside the prefix are never touched.
          if (layout.hasPrefix(k)) {
            keys.add(k);
          }
        }
        seen += keys.size();
        if (!keys.isEmpty()) {
          handler.accept(node, keys);
        }
        progress.update(() -> line(where, status.get()));
      }
    }
    return seen;
  }

  /** The final progress line. */
  String summary(String status) {
    return line("", status);
  }

  private String line(String where, String status) {
    double seconds = Math.max(progress.elapsedNanos(), 1) / 1e9;
    return String.format("scanning%s: %,d keys, %,d SCAN calls, %,.0f keys/s%s", where, seen, calls, seen / seconds,
        status.isEmpty() ? "" : ", " + status);
  }

  /** The value of a command, its failure rethrown as it was (a Redis error, a timeout). */
  static <T> T await(RedisFuture<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted");
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    }
  }

  /** The values of pipelined commands, in order. */
  static <T> List<T> awaitAll(List<RedisFuture<T>> futures) {
    CompletableFuture<?>[] all = new CompletableFuture<?>[futures.size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = futures.get(i).toCompletableFuture();
    }
    try {
      CompletableFuture.allOf(all).join();
    } catch (RuntimeException ignored) {
      // Reported below, from the first command that failed.
    }
    List<T> values = new ArrayList<>(futures.size());
    for (RedisFuture<T> f : futures) {
      values.add(await(f));
    }
    return values;
  }
}
