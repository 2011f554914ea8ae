package dev.sluice.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The decision code, assembled once from fixed resource files (shared definitions, one file per
 * algorithm, the transaction driver); no value is ever part of its text. It runs as a library of
 * Redis Functions where the server has them (Redis 7.0+, Valkey 7.2+), else as a script:
 *
 * <ul>
 *   <li>{@code FCALL}: the library's top level (its functions, tables and caches) is built once,
 *       at {@code FUNCTION LOAD}, not on every call as a script's is. Its name carries a hash of
 *       its text, so two versions of Sluice never replace each other's library mid-upgrade.
 *   <li>A server that answers "Function not found" (restarted without persistence, {@code
 *       FUNCTION FLUSH}, a new node) did not run the call: it is decided by the script instead,
 *       and the library is loaded again (once, however many calls found it missing).
 *   <li>A server without functions, or a user whose ACL lacks {@code FCALL} or {@code FUNCTION
 *       LOAD}, makes the connection use the script from then on: {@code EVALSHA}, and on {@code
 *       NOSCRIPT} (which also guarantees it did not run) the same call once more as {@code EVAL}.
 * </ul>
 *
 * <p>A request is therefore never counted twice.
 */
final class DecisionScript {
  /** Shared definitions, each algorithm's files ({@link ScriptAlgorithm}), then the transaction. */
  static final List<String> PARTS = parts();

  private static final byte[] BODY = assemble();
  /**
   * The script: the body, then the call of its transaction with the script's KEYS and ARGV. The
   * body's top level only defines functions and constants, so a library and a script decide alike.
   */
  static final byte[] TEXT = concat(BODY, "return decide(KEYS, ARGV)\n");
  static final String SHA = sha1(TEXT);
  /** Library and function name: the hash of the code tells versions apart. */
  static final String FUNCTION = "sluice_" + sha1(BODY).substring(0, 16);
  /** The library: the same body, registering the transaction as {@link #FUNCTION}. */
  static final String LIBRARY = "#!lua name=" + FUNCTION + "\n" + new String(BODY, StandardCharsets.UTF_8)
      + "redis.register_function('" + FUNCTION + "', decide)\n";

  /** "ERR unknown command 'FCALL', …", "NOPERM … run the 'function|load' command". */
  private static final Pattern FIRST_QUOTED = Pattern.compile("[`']([^`']*)[`']");
  private static final Set<String> FUNCTION_COMMANDS = Set.of("fcall", "function", "function|load");

  private DecisionScript() {}

  private static List<String> parts() {
    List<String> parts = new ArrayList<>(List.of("values.lua", "items.lua"));
    for (ScriptAlgorithm a : ScriptAlgorithm.values()) {
      parts.addAll(a.scripts);
    }
    parts.addAll(List.of("carry.lua", "policies.lua", "entries.lua", "requests.lua", "decide.lua"));
    return List.copyOf(parts);
  }

  private static byte[] assemble() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (String part : PARTS) {
      try (InputStream in = DecisionScript.class.getResourceAsStream(part)) {
        if (in == null) {
          throw new IllegalStateException("missing script resource dev/sluice/redis/" + part);
        }
        out.writeBytes(in.readAllBytes());
        out.write('\n');
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read script resource " + part, e);
      }
    }
    return out.toByteArray();
  }

  private static byte[] concat(byte[] a, String b) {
    byte[] tail = b.getBytes(StandardCharsets.UTF_8);
    byte[] out = Arrays.copyOf(a, a.length + tail.length);
    System.arraycopy(tail, 0, out, a.length, tail.length);
    return out;
  }

  private static String sha1(byte[] text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is unavailable", e);
    }
  }

  /**
   * Loads the library on every master, so the first decisions need no detour; a server without
   * functions switches the link to the script. Waits at most {@code timeout}: any other failure
   * is left to {@link #run} — a user who may not load the library may still call it, if it was
   * loaded by someone else.
   */
  static void prepare(Link link, Duration timeout) {
    try {
      link.loadLibrary(LIBRARY).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (isUnknownCommand(e)) {
        link.useScript();
      }
    } catch (TimeoutException e) {
      // Still loading, or the server is slow: run() deals with a missing library.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static final byte[] REFUND_MARKER = ":refund:".getBytes(StandardCharsets.US_ASCII);

  /**
   * A refund's keys: the items' state keys, then the key that marks this refund done, {@code
   * <first state key>:refund:<16 random hex digits>} (in the first key's hash tag, so on the
   * same slot). Lettuce sends a command again when its connection dropped before the reply
   * (at-least-once); the copy carries the same marker and does nothing, so units come back once.
   */
  static byte[][] refundKeys(byte[][] stateKeys) {
    byte[] first = stateKeys[0];
    byte[] id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong())
        .getBytes(StandardCharsets.US_ASCII);
    byte[] marker = new byte[first.length + REFUND_MARKER.length + id.length];
    System.arraycopy(first, 0, marker, 0, first.length);
    System.arraycopy(REFUND_MARKER, 0, marker, first.length, REFUND_MARKER.length);
    System.arraycopy(id, 0, marker, first.length + REFUND_MARKER.length, id.length);
    byte[][] keys = Arrays.copyOf(stateKeys, stateKeys.length + 1);
    keys[stateKeys.length] = marker;
    return keys;
  }

  /** One decision call: FCALL, or the script where the library is missing or unsupported. */
  static <T> CompletableFuture<T> run(Link link, ScriptOutputType type, byte[][] keys, byte[][] args) {
    if (!link.usesFunctions()) {
      return script(link, type, keys, args);
    }
    return link.<T>fcall(FUNCTION, type, keys, args).exceptionallyCompose(e -> {
      if (isFunctionNotFound(e)) {
        link.reloadLibrary(LIBRARY).exceptionally(f -> {
          if (isUnsupported(f)) {
            link.useScript();
          }
          return null;
        });
        return script(link, type, keys, args);
      }
      if (isUnsupported(e)) {
        link.useScript();
        return script(link, type, keys, args);
      }
      return CompletableFuture.failedFuture(e);
    });
  }

  private static <T> CompletableFuture<T> script(Link link, ScriptOutputType type, byte[][] keys, byte[][] args) {
    return link.<T>evalsha(SHA, type, keys, args).exceptionallyCompose(e -> {
      if (isNoScript(e)) {
        return link.eval(TEXT, type, keys, args);
      }
      return CompletableFuture.failedFuture(e);
    });
  }

  static boolean isNoScript(Throwable e) {
    String m = message(e);
    return unwrap(e) instanceof RedisNoScriptException || m.startsWith("NOSCRIPT");
  }

  /** The call did not run: the server has no such function (yet, or any more). */
  static boolean isFunctionNotFound(Throwable e) {
    return message(e).startsWith("ERR Function not found");
  }

  /**
   * The server has no functions (Redis before 7.0), or the user may not call or load them: both
   * refused before anything ran. Only a refusal of FCALL or FUNCTION itself counts (the first
   * quoted word of the error): a command refused inside the function may follow writes, and
   * running the script after it could count a request twice.
   */
  static boolean isUnsupported(Throwable e) {
    String m = message(e);
    if (!m.startsWith("NOPERM") && !m.startsWith("ERR unknown command")) {
      return false;
    }
    Matcher quoted = FIRST_QUOTED.matcher(m);
    return quoted.find() && FUNCTION_COMMANDS.contains(quoted.group(1).toLowerCase(Locale.ROOT));
  }

  private static boolean isUnknownCommand(Throwable e) {
    return isUnsupported(e) && message(e).startsWith("ERR unknown command");
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static String message(Throwable e) {
    String m = unwrap(e).getMessage();
    return m == null ? "" : m;
  }

  static String text() {
    return new String(TEXT, StandardCharsets.UTF_8);
  }
}
