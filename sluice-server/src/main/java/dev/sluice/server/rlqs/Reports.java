package dev.sluice.server.rlqs;

import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The checks a usage report must pass before any of it is used (rlqs.proto's validation rules,
 * and the service's bounds on a bucket's size).
 */
final class Reports {
  /** The most pairs a {@code BucketId} may hold. */
  static final int MAX_PAIRS = 16;
  /** The most bytes (UTF-8, names and values together) a {@code BucketId} may hold. */
  static final int MAX_BUCKET_BYTES = 1024;
  /** The longest text a message quotes from a client. */
  private static final int CLIP = 64;

  private Reports() {}

  /** What is wrong with {@code r}, or null if nothing is. */
  static String problem(RateLimitQuotaUsageReports r) {
    if (r.getBucketQuotaUsagesCount() == 0) {
      return "a usage report needs at least one bucket_quota_usages entry";
    }
    for (int i = 0; i < r.getBucketQuotaUsagesCount(); i++) {
      BucketQuotaUsage u = r.getBucketQuotaUsages(i);
      String at = "bucket_quota_usages[" + i + "]";
      if (!u.hasBucketId()) {
        return at + " has no bucket_id";
      }
      String bucket = bucketProblem(u.getBucketId());
      if (bucket != null) {
        return at + ".bucket_id " + bucket;
      }
      if (!u.hasTimeElapsed() || u.getTimeElapsed().getSeconds() < 0
          || u.getTimeElapsed().getSeconds() == 0 && u.getTimeElapsed().getNanos() <= 0) {
        return at + ".time_elapsed must be above 0, was " + (u.hasTimeElapsed() ? u.getTimeElapsed().getSeconds()
            + "s " + u.getTimeElapsed().getNanos() + "ns" : "not set");
      }
    }
    return null;
  }

  private static String bucketProblem(BucketId id) {
    Map<String, String> m = id.getBucketMap();
    if (m.isEmpty()) {
      return "has an empty bucket map; a bucket is named by at least one pair";
    }
    if (m.size() > MAX_PAIRS) {
      return "has " + m.size() + " pairs; at most " + MAX_PAIRS;
    }
    long bytes = 0;
    for (Map.Entry<String, String> e : m.entrySet()) {
      if (e.getKey().isEmpty() || e.getValue().isEmpty()) {
        return "has an empty name or value" + (e.getKey().isEmpty() ? "" : " (of '" + clip(e.getKey()) + "')");
      }
      bytes += e.getKey().getBytes(StandardCharsets.UTF_8).length + e.getValue().getBytes(StandardCharsets.UTF_8).length;
    }
    if (bytes > MAX_BUCKET_BYTES) {
      return "holds " + bytes + " bytes of names and values; at most " + MAX_BUCKET_BYTES;
    }
    return null;
  }

  static String clip(String s) {
    return s.length() <= CLIP ? s : s.substring(0, CLIP) + "…";
  }
}
