package dev.sluice.server.rlqs;

/**
 * What a proxy is told for one bucket: a token bucket ({@code max_tokens}, {@code tokens_per_fill}
 * every {@code fill_interval}) or, when nothing is covered, {@code DENY_ALL}; valid for
 * {@code ttlMicros}.
 */
record Assignment(boolean denyAll, long maxTokens, long tokensPerFill, long fillMicros, long ttlMicros) {

  static Assignment deny(long ttlMicros) {
    return new Assignment(true, 0, 0, 0, ttlMicros);
  }

  /** Units per second it admits once its first bucket is spent; 0 for {@code DENY_ALL}. */
  double rate() {
    return denyAll ? 0 : tokensPerFill * 1e6 / fillMicros;
  }

  /** The same strategy valid for {@code ttl} from now (Envoy keeps its bucket and extends the TTL). */
  Assignment withTtl(long ttl) {
    return new Assignment(denyAll, maxTokens, tokensPerFill, fillMicros, ttl);
  }

  /** Whether the proxy sees the same strategy: re-sent, it keeps its bucket rather than refilling it. */
  boolean sameStrategy(Assignment o) {
    return o != null && denyAll == o.denyAll && maxTokens == o.maxTokens && tokensPerFill == o.tokensPerFill
        && fillMicros == o.fillMicros;
  }
}
