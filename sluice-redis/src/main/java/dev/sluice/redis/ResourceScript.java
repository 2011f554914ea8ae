package dev.sluice.redis;

import io.lettuce.core.ScriptOutputType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;

/**
 * A script other than the decisions', from one resource file: {@code EVALSHA}, and on {@code
 * NOSCRIPT} (which guarantees it did not run) {@code EVAL} with its text, which runs it once and
 * caches it on that server.
 */
final class ResourceScript {
  private final byte[] text;
  private final String sha;

  ResourceScript(String resource) {
    try (InputStream in = ResourceScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing script resource dev/sluice/redis/" + resource);
      }
      this.text = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script resource " + resource, e);
    }
    try {
      this.sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is unavailable", e);
    }
  }

  /** Runs the script; a failure to send it at all (closed link) fails the stage. */
  <T> CompletableFuture<T> run(Link link, ScriptOutputType type, byte[][] keys, byte[][] args) {
    try {
      return link.<T>evalsha(sha, type, keys, args).exceptionallyCompose(e -> DecisionScript.isNoScript(e)
          ? link.<T>eval(text, type, keys, args)
          : CompletableFuture.failedFuture(e));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
