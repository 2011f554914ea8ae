package dev.sluice.redis;

import io.lettuce.core.ScriptOutputType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The keys beside a (rule, key)'s state that policies write: its ban ({@code <state key>:ban}, in
 * the layout the decisions read, expiring when the ban ends) and its audit list
 * ({@code <state key>:audit}).
 * They share the state key's hash tag, so the decision script can read them with the state.
 */
final class StateSiblings {
  private static final ResourceScript SCRIPT = new ResourceScript("siblings.lua");
  private static final byte[] BAN = ":ban".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] AUDIT = ":audit".getBytes(StandardCharsets.US_ASCII);

  /** The ban key of the state key {@code state}. */
  static byte[] banKey(byte[] state) {
    return sibling(state, BAN);
  }

  /** The audit list of the state key {@code state}. */
  static byte[] auditKey(byte[] state) {
    return sibling(state, AUDIT);
  }

  private static byte[] sibling(byte[] state, byte[] suffix) {
    byte[] name = Arrays.copyOf(state, state.length + suffix.length);
    System.arraycopy(suffix, 0, name, state.length, suffix.length);
    return name;
  }

  private final Link link;
  private final KeyNames names;

  StateSiblings(Link link, KeyNames names) {
    this.link = link;
    this.names = names;
  }

  /** Bans the key until {@code untilMillis} on the server's clock (0: until lifted); a time passed lifts it. */
  CompletionStage<Void> ban(String rule, String key, long untilMillis) {
    return call(rule, key, BAN, "ban", Long.toString(untilMillis)).thenApply(r -> null);
  }

  /** Lifts a ban and the denials counted towards one; whether there was either. */
  CompletionStage<Boolean> unban(String rule, String key) {
    return call(rule, key, BAN, "unban").thenApply(r -> ((Long) r) > 0);
  }

  /** The audit values, newest first. */
  CompletionStage<List<String>> audit(String rule, String key) {
    return call(rule, key, AUDIT, "audit").thenApply(reply -> {
      List<String> values = new ArrayList<>();
      for (Object o : (List<?>) reply) {
        values.add(new String((byte[]) o, StandardCharsets.UTF_8));
      }
      return values;
    });
  }

  private CompletableFuture<Object> call(String rule, String key, byte[] suffix, String... args) {
    byte[] name = sibling(names.name(rule, key), suffix);
    byte[][] a = new byte[args.length][];
    for (int i = 0; i < args.length; i++) {
      a[i] = args[i].getBytes(StandardCharsets.UTF_8);
    }
    ScriptOutputType type = "audit".equals(args[0]) ? ScriptOutputType.MULTI : ScriptOutputType.INTEGER;
    return SCRIPT.run(link, type, new byte[][] {name}, a);
  }
}
