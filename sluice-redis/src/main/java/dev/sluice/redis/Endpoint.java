package dev.sluice.redis;

import dev.sluice.redis.internal.Redaction;
import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A parsed connection string: which topology, the Lettuce URIs to reach it, and a description
 * safe for logs (no password, ever).
 *
 * <p>Accepted: {@code redis://[user[:password]@]host[:port][/db]}, {@code rediss://…} (TLS),
 * {@code redis-sentinel://[user[:password]@]h1:p1,h2:p2[/db]#master} (also {@code
 * rediss-sentinel://}), {@code redis-cluster://[user[:password]@]h1:p1,h2:p2} (also {@code
 * rediss-cluster://}). For a Cluster any reachable seed is enough.
 */
record Endpoint(Topology topology, List<RedisURI> uris, String description) {

  enum Topology {
    STANDALONE, SENTINEL, CLUSTER
  }

  /** @throws IllegalArgumentException naming the accepted forms when {@code uri} is none of them */
  static Endpoint parse(String uri) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException("Redis URI must not be empty");
    }
    int colon = uri.indexOf("://");
    if (colon < 0) {
      throw new IllegalArgumentException(usage("no scheme in Redis URI '" + Redaction.uri(uri) + "'"));
    }
    String scheme = uri.substring(0, colon).toLowerCase(Locale.ROOT);
    try {
      switch (scheme) {
        case "redis":
        case "rediss": {
          RedisURI u = lettuce(uri, uri);
          return new Endpoint(Topology.STANDALONE, List.of(u), describe(scheme, user(uri), u, List.of(u)));
        }
        case "redis-sentinel":
        case "rediss-sentinel": {
          int hash = uri.indexOf('#');
          if (hash < 0 || hash == uri.length() - 1) {
            throw new IllegalArgumentException(
                "Sentinel URI '" + Redaction.uri(uri) + "' names no master: add #<master name>, e.g. redis-sentinel://h1:26379,h2:26379#mymaster");
          }
          RedisURI u = lettuce(uri, uri);
          if (u.getSentinelMasterId() == null || u.getSentinelMasterId().isEmpty()) {
            throw new IllegalArgumentException(
                "Sentinel URI '" + Redaction.uri(uri) + "' names no master: add #<master name>, e.g. redis-sentinel://h1:26379,h2:26379#mymaster");
          }
          return new Endpoint(Topology.SENTINEL, List.of(u), describe(scheme, user(uri), u, u.getSentinels()));
        }
        case "redis-cluster":
        case "rediss-cluster":
          return cluster(uri, scheme, colon);
        default:
          throw new IllegalArgumentException(usage("unknown scheme '" + scheme + "' in Redis URI '" + Redaction.uri(uri) + "'"));
      }
    } catch (IllegalArgumentException e) {
      throw e; // ours, or the client's made safe by lettuce()
    } catch (RuntimeException e) {
      throw unparsable(uri, e);
    }
  }

  /** The client's URI for {@code text} (which is {@code uri} or made from it). */
  private static RedisURI lettuce(String text, String uri) {
    try {
      return RedisURI.create(text);
    } catch (RuntimeException e) {
      throw unparsable(uri, e);
    }
  }

  /**
   * The client's messages quote the whole URI, password included: they are redacted, and the
   * client's exception, whose message is the same, is not kept as the cause.
   */
  private static IllegalArgumentException unparsable(String uri, RuntimeException e) {
    return new IllegalArgumentException(usage("cannot parse Redis URI '" + Redaction.uri(uri) + "': "
        + Redaction.message(String.valueOf(e.getMessage()), uri)));
  }

  /** Seeds share the user info, path and query: each becomes its own {@code redis(s)://} URI. */
  private static Endpoint cluster(String uri, String scheme, int colon) {
    String rest = uri.substring(colon + 3);
    int end = indexOfAny(rest, "/?#");
    String authority = end < 0 ? rest : rest.substring(0, end);
    String tail = end < 0 ? "" : rest.substring(end);
    int at = authority.lastIndexOf('@');
    String userInfo = at < 0 ? "" : authority.substring(0, at + 1);
    String hosts = authority.substring(at + 1);
    String base = scheme.startsWith("rediss") ? "rediss://" : "redis://";
    List<RedisURI> seeds = new ArrayList<>();
    for (String h : hosts.split(",")) {
      if (h.isBlank()) {
        throw new IllegalArgumentException("empty host in cluster URI '" + Redaction.uri(uri) + "'");
      }
      seeds.add(lettuce(base + userInfo + h.trim() + tail, uri));
    }
    return new Endpoint(Topology.CLUSTER, List.copyOf(seeds), describe(scheme, user(uri), seeds.get(0), seeds));
  }

  private static int indexOfAny(String s, String chars) {
    for (int i = 0; i < s.length(); i++) {
      if (chars.indexOf(s.charAt(i)) >= 0) {
        return i;
      }
    }
    return -1;
  }

  private static String describe(String scheme, String user, RedisURI first, List<RedisURI> hosts) {
    StringBuilder b = new StringBuilder(scheme).append("://");
    if (!user.isEmpty()) {
      b.append(user).append('@');
    }
    for (int i = 0; i < hosts.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(hosts.get(i).getHost()).append(':').append(hosts.get(i).getPort());
    }
    if (first.getDatabase() != 0) {
      b.append('/').append(first.getDatabase());
    }
    if (first.getSentinelMasterId() != null) {
      b.append('#').append(first.getSentinelMasterId());
    }
    return b.toString();
  }

  /** The ACL user named in the URI's user info ({@code user:password@}), or "". */
  private static String user(String uri) {
    int start = uri.indexOf("://") + 3;
    int end = indexOfAny(uri.substring(start), "/?#");
    String authority = end < 0 ? uri.substring(start) : uri.substring(start, start + end);
    int at = authority.lastIndexOf('@');
    if (at < 0) {
      return "";
    }
    int sep = authority.indexOf(':');
    return sep < 0 || sep > at ? "" : authority.substring(0, sep);
  }

  private static String usage(String problem) {
    return problem + "; expected redis://[user:password@]host[:port][/db], rediss://… (TLS), "
        + "redis-sentinel://[user:password@]h1:p1,h2:p2[/db]#master or redis-cluster://[user:password@]h1:p1,h2:p2";
  }
}
