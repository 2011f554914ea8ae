package dev.sluice.redis;

import dev.sluice.spi.LeaseBoard;
import io.lettuce.core.ScriptOutputType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The lease board in Redis, every key under the hash tag {@code {leases}} (one Cluster slot, apart
 * from {@code {policies}}'s): each call is one run of {@code leases.lua}, on the server's clock. A
 * publish is checked against the leader record by the script that writes it, so a deposed leader
 * writes nothing. See {@code docs/redis-internals.md}, "Leases".
 *
 * <p>Bounded: at most {@value #MAX_INSTANCES} instances with a report kept and as many with sizes
 * kept, each entry at most {@link LeaseBoard#MAX_ENTRY_BYTES}; past them a new instance is refused
 * ({@link IllegalStateException}) and nothing is written.
 */
final class RedisLeaseBoard implements LeaseBoard {
  static final int MAX_INSTANCES = 10_000;
  /** {@link #reports} reads at most this many pages: ten thousand reports in pages of about 64, twice over. */
  private static final int MAX_PAGES = 2 * MAX_INSTANCES / 64;

  private static final ResourceScript SCRIPT = new ResourceScript("leases.lua");

  private final Link link;
  private final byte[][] keys;
  private final int maxInstances;

  RedisLeaseBoard(Link link, String prefix) {
    this(link, prefix, MAX_INSTANCES);
  }

  /** With a smaller bound, for tests. */
  RedisLeaseBoard(Link link, String prefix, int maxInstances) {
    this.link = Objects.requireNonNull(link, "link");
    String tag = prefix + "{leases}:";
    this.keys = List.of("leader", "epoch", "reports", "seen", "sizes", "sized").stream()
        .map(n -> bytes(tag + n)).toArray(byte[][]::new);
    this.maxInstances = maxInstances;
  }

  /** Every Redis key of the board. */
  List<String> keyNames() {
    return Arrays.stream(keys).map(b -> new String(b, StandardCharsets.UTF_8)).toList();
  }

  @Override
  public CompletionStage<Leader> campaign(String instance, long termMillis) {
    try {
      LeaseBoard.checkInstance(instance);
      LeaseBoard.checkMillis(termMillis, "term");
      return this.<List<Object>>call(ScriptOutputType.MULTI, "campaign", instance, Long.toString(termMillis))
          .thenApply(r -> new Leader(text(r.get(0)), number(r.get(1)), number(r.get(2)), number(r.get(3))));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Leader> leader() {
    try {
      return this.<List<Object>>call(ScriptOutputType.MULTI, "leader").thenApply(r -> {
        String leader = text(r.get(0));
        return new Leader(leader.isEmpty() ? null : leader, number(r.get(1)), number(r.get(2)), number(r.get(3)));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> resign(String instance, long token) {
    try {
      LeaseBoard.checkInstance(instance);
      return this.<Long>call(ScriptOutputType.INTEGER, "resign", instance, Long.toString(token)).thenApply(r -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<ReportAnswer> report(String instance, byte[] report, long ttlMillis) {
    try {
      LeaseBoard.checkInstance(instance);
      LeaseBoard.checkEntry(Objects.requireNonNull(report, "report"), "report of " + instance);
      LeaseBoard.checkMillis(ttlMillis, "report ttl");
      byte[][] args = {bytes("report"), bytes(instance), bytes(Long.toString(ttlMillis)),
          bytes(Integer.toString(maxInstances)), report};
      return this.<List<Object>>run(ScriptOutputType.MULTI, args).thenApply(r -> {
        String leader = text(r.get(2));
        return new ReportAnswer(blob(r.get(0)), number(r.get(1)),
            new Leader(leader.isEmpty() ? null : leader, number(r.get(3)), number(r.get(4)), number(r.get(5))),
            Math.toIntExact(number(r.get(6))));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Pages through the reports with {@code HSCAN}, each page one call, until done or {@code maxBytes} read. */
  @Override
  public CompletionStage<Map<String, byte[]>> reports(long maxBytes) {
    return page("0", new LinkedHashMap<>(), new long[1], 0, maxBytes);
  }

  private CompletionStage<Map<String, byte[]>> page(String cursor, Map<String, byte[]> out, long[] total, int pages,
      long maxBytes) {
    return this.<List<Object>>call(ScriptOutputType.MULTI, "reports", cursor).thenCompose(r -> {
      for (int i = 2; i + 1 < r.size(); i += 2) {
        String id = text(r.get(i));
        byte[] report = blob(r.get(i + 1));
        // HSCAN may return an entry twice: counted once.
        if (out.containsKey(id)) {
          continue;
        }
        if (total[0] + report.length > maxBytes) {
          return CompletableFuture.completedFuture(out);
        }
        total[0] += report.length;
        out.put(id, report);
      }
      String next = text(r.get(0));
      if (next.equals("0") || pages + 1 >= MAX_PAGES) {
        return CompletableFuture.completedFuture(out);
      }
      return page(next, out, total, pages + 1, maxBytes);
    });
  }

  @Override
  public CompletionStage<Boolean> publish(String instance, long token, Map<String, byte[]> sizes, long ttlMillis) {
    try {
      LeaseBoard.checkInstance(instance);
      Objects.requireNonNull(sizes, "sizes");
      LeaseBoard.checkMillis(ttlMillis, "sizes ttl");
      if (sizes.size() > maxInstances) {
        throw new IllegalStateException("lease board full: sizes of " + sizes.size()
            + " instances would be kept, more than the " + maxInstances + " it holds; nothing was published");
      }
      byte[][] args = new byte[6 + 2 * sizes.size()][];
      args[0] = bytes("publish");
      args[1] = bytes(instance);
      args[2] = bytes(Long.toString(token));
      args[3] = bytes(Long.toString(ttlMillis));
      args[4] = bytes(Integer.toString(maxInstances));
      args[5] = bytes(Integer.toString(sizes.size()));
      int i = 6;
      for (Map.Entry<String, byte[]> e : sizes.entrySet()) {
        LeaseBoard.checkInstance(e.getKey());
        LeaseBoard.checkEntry(Objects.requireNonNull(e.getValue(), "sizes"), "sizes of " + e.getKey());
        args[i++] = bytes(e.getKey());
        args[i++] = e.getValue();
      }
      return this.<Long>run(ScriptOutputType.INTEGER, args).thenApply(r -> r == 1L);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private <T> CompletionStage<T> call(ScriptOutputType type, String... args) {
    return run(type, Arrays.stream(args).map(RedisLeaseBoard::bytes).toArray(byte[][]::new));
  }

  private <T> CompletionStage<T> run(ScriptOutputType type, byte[][] args) {
    return SCRIPT.<T>run(link, type, keys, args).handle(RedisLeaseBoard::result);
  }

  /** For a stage's {@code handle}: the value, or the failure as the caller should see it. */
  private static <T> T result(T value, Throwable error) {
    if (error == null) {
      return value;
    }
    throw StoreErrors.scriptFailure(error, "lease command",
        Map.of("LEASEFULL", m -> new IllegalStateException("lease board full: " + m)));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] blob(Object reply) {
    if (reply == null) {
      return new byte[0];
    }
    if (!(reply instanceof byte[] b)) {
      throw new MalformedReplyException("expected a string in a lease reply, got " + reply);
    }
    return b;
  }

  private static String text(Object reply) {
    return new String(blob(reply), StandardCharsets.UTF_8);
  }

  private static long number(Object reply) {
    if (!(reply instanceof Long n)) {
      throw new MalformedReplyException("expected an integer in a lease reply, got " + reply);
    }
    return n;
  }
}
