package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.spi.ResolvedItem;
import io.lettuce.core.ScriptOutputType;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a request with an item of a rule that bans or audits adds to the one decision call (modes
 * {@code p} and {@code q}, the transaction's policy hooks in {@code policies.lua}): after the
 * state keys, each such item's sibling keys; after the items' arguments, their audit values. A
 * request without such items adds nothing.
 */
final class PolicyArguments {
  /** Mode {@code a}: audit values recorded after a request decided across shards. */
  private static final byte[] RECORD_AUDITS = {'a'};

  private PolicyArguments() {}

  /** Whether deciding {@code it} involves its ban or audit keys. */
  static boolean applies(ResolvedItem it) {
    return it.rule().ban() != null || audited(it);
  }

  /** Whether any item of {@code items} {@link #applies}. */
  static boolean anyApplies(List<ResolvedItem> items) {
    for (ResolvedItem it : items) {
      if (applies(it)) {
        return true;
      }
    }
    return false;
  }

  private static boolean audited(ResolvedItem it) {
    return it.rule().audit() != null && it.audit() != null;
  }

  /**
   * The keys of the items at {@code which}: their state keys, then in item order each one's ban
   * key (a rule that bans) and audit key (an item with an audit value, {@code withAudit}).
   */
  static byte[][] keys(List<ResolvedItem> items, byte[][] keys, int[] which, boolean withAudit) {
    List<byte[]> out = new ArrayList<>(which.length * 3);
    for (int i : which) {
      out.add(keys[i]);
    }
    for (int i : which) {
      ResolvedItem it = items.get(i);
      if (it.rule().ban() != null) {
        out.add(StateSiblings.banKey(keys[i]));
      }
      if (withAudit && audited(it)) {
        out.add(StateSiblings.auditKey(keys[i]));
      }
    }
    return out.toArray(new byte[0][]);
  }

  /**
   * {@code args}, the arguments of the items at {@code which}, followed by their audit values
   * (without {@code withAudit}: all absent).
   */
  static byte[][] args(byte[][] args, List<ResolvedItem> items, int[] which, boolean withAudit) {
    ByteArrayOutputStream values = new ByteArrayOutputStream();
    for (int i : which) {
      ResolvedItem it = items.get(i);
      byte[] v = withAudit && audited(it) ? it.audit().getBytes(StandardCharsets.UTF_8) : null;
      int length = v == null ? -1 : v.length;
      values.write(length);
      values.write(length >>> 8);
      values.write(length >>> 16);
      values.write(length >>> 24);
      if (v != null) {
        values.writeBytes(v);
      }
    }
    byte[][] out = Arrays.copyOf(args, args.length + 1);
    out[args.length] = values.toByteArray();
    return out;
  }

  /**
   * After a request decided across shards: records the audit values of its consumed items (one
   * call per such item, on its shard, mode {@code a}), then answers {@code decided}. A reservation may be
   * refunded, and a refund cannot take a value back out of an audit list: reservations record
   * none, and the values of an admitted request are recorded here.
   */
  static CompletableFuture<List<ItemDecision>> recordAudits(Link link, List<ResolvedItem> items, byte[][] keys,
      List<ItemDecision> decided) {
    for (ItemDecision d : decided) {
      if (!d.allowed() && !d.shadow()) {
        return CompletableFuture.completedFuture(decided);
      }
    }
    List<CompletableFuture<?>> calls = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      ResolvedItem it = items.get(i);
      if (audited(it) && it.cost() > 0 && decided.get(i).allowed()) {
        byte[][] k = {keys[i], StateSiblings.auditKey(keys[i])};
        byte[][] a = {RECORD_AUDITS, it.audit().getBytes(StandardCharsets.UTF_8),
            ItemShape.num(it.rule().audit().keep())};
        calls.add(DecisionScript.<List<?>>run(link, ScriptOutputType.MULTI, k, a));
      }
    }
    return CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0])).thenApply(v -> decided);
  }
}
