package dev.sluice.redis;

import io.lettuce.core.RedisNoScriptException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The decision script, assembled once from fixed resource files (shared definitions, one file per
 * algorithm, the transaction driver); no value is ever part of its text. Run with EVALSHA; a
 * server that answers NOSCRIPT (restarted, failed over, {@code SCRIPT FLUSH}) did not run it, so
 * the same call is sent once more as EVAL, which runs the script and caches it again. A request
 * is therefore never counted twice.
 */
final class DecisionScript {
  static final List<String> PARTS = List.of(
      "prelude.lua", "sliding_log.lua", "sliding_window.lua", "fixed_window.lua", "token_bucket.lua",
      "leaky_bucket.lua", "decide.lua");

  static final byte[] TEXT = assemble();
  static final String SHA = sha1(TEXT);

  private DecisionScript() {}

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

  private static String sha1(byte[] text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is unavailable", e);
    }
  }

  /** One evaluation: EVALSHA, and EVAL once if the server does not have the script. */
  static CompletableFuture<List<Object>> run(Link link, byte[][] keys, byte[][] args) {
    return link.evalsha(SHA, keys, args).exceptionallyCompose(e -> {
      if (isNoScript(e)) {
        return link.eval(TEXT, keys, args);
      }
      return CompletableFuture.failedFuture(e);
    });
  }

  static boolean isNoScript(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return t instanceof RedisNoScriptException
        || t.getMessage() != null && t.getMessage().startsWith("NOSCRIPT");
  }

  static String text() {
    return new String(TEXT, StandardCharsets.UTF_8);
  }
}
