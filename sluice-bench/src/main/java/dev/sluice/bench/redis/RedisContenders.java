package dev.sluice.bench.redis;

import dev.sluice.Algorithm;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/** The Redis contenders by name, in report order. */
public final class RedisContenders {
  private static final Map<String, BiFunction<String, Workload, RedisContender>> BY_NAME = new LinkedHashMap<>();

  static {
    BY_NAME.put("sluice", (uri, w) -> new SluiceContender(uri, w, Algorithm.SLIDING_LOG));
    BY_NAME.put("sluice_token_bucket", (uri, w) -> new SluiceContender(uri, w, Algorithm.TOKEN_BUCKET));
    BY_NAME.put("sluice_try", (uri, w) -> new SluiceContender(uri, w, Algorithm.SLIDING_LOG,
        Integer.getInteger("sluice.callsInFlight", -1), true));
    BY_NAME.put("sluice_token_bucket_try",
        (uri, w) -> new SluiceContender(uri, w, Algorithm.TOKEN_BUCKET,
            Integer.getInteger("sluice.callsInFlight", -1), true));
    BY_NAME.put("sluice_unbatched", (uri, w) -> new SluiceContender(uri, w, Algorithm.SLIDING_LOG, false));
    BY_NAME.put("sluice_token_bucket_unbatched", (uri, w) -> new SluiceContender(uri, w, Algorithm.TOKEN_BUCKET, false));
    // The same, on the sluice-redis build in -Dsluice.otherRedisClasses (see OtherBuild): two
    // versions of the decision script measured alternately in one run.
    BY_NAME.put("sluice_other", (uri, w) -> new SluiceContender(uri, w, Algorithm.SLIDING_LOG,
        Integer.getInteger("sluice.callsInFlight", -1), false, OtherBuild.fromProperty()));
    BY_NAME.put("sluice_token_bucket_other", (uri, w) -> new SluiceContender(uri, w, Algorithm.TOKEN_BUCKET,
        Integer.getInteger("sluice.callsInFlight", -1), false, OtherBuild.fromProperty()));
    // A rule with a ban and an audit, and the same rule without, both through an operation.
    BY_NAME.put("sluice_policies", (uri, w) -> new PolicyContender(uri, w, true));
    BY_NAME.put("sluice_operation", (uri, w) -> new PolicyContender(uri, w, false));
    BY_NAME.put("bucket4j", Bucket4jContender::new);
    BY_NAME.put("redisson", RedissonContender::new);
    BY_NAME.put("zset", SortedSetLogContender::new);
  }

  private RedisContenders() {}

  public static List<String> names() {
    return List.copyOf(BY_NAME.keySet());
  }

  /** redis-benchmark invocations of the scripts of those of {@code contenders} that have one. */
  static List<RedisRun.Ceiling> ceilings(List<String> contenders, String uri, int port) {
    List<RedisRun.Ceiling> out = new java.util.ArrayList<>();
    for (String name : contenders) {
      if (!name.startsWith("sluice") || name.equals("sluice_policies") || name.equals("sluice_operation")) {
        continue;
      }
      out.add(new RedisRun.Ceiling() {
        @Override
        public String contender() {
          return name;
        }

        @Override
        public List<String> arguments(Workload w) {
          String key = "user:0000000";
          try (SluiceContender c = (SluiceContender) create(name, uri, w)) {
            List<String> args = c.evalsha(port, key);
            if (!w.hot()) {
              // redis-benchmark puts a random number in [0, -r) in place of __rand_int__
              args.replaceAll(a -> a.replace(key, "user:__rand_int__"));
            }
            return args;
          }
        }
      });
    }
    return out;
  }

  /** @throws IllegalArgumentException naming the known contenders if {@code name} is not one */
  static RedisContender create(String name, String uri, Workload w) {
    int at = name.indexOf('@');
    if (at > 0) {
      // sluice@4, sluice_token_bucket@2: a batched Sluice contender with that many calls in flight
      String base = name.substring(0, at);
      int depth;
      try {
        depth = Integer.parseInt(name.substring(at + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("contender '" + name + "': the calls in flight after '@' must be a number");
      }
      if (depth < 1 || !(base.equals("sluice") || base.equals("sluice_token_bucket"))) {
        throw new IllegalArgumentException("contender '" + name + "': only sluice and sluice_token_bucket take @<calls in flight >= 1>");
      }
      return new SluiceContender(uri, w, base.equals("sluice") ? Algorithm.SLIDING_LOG : Algorithm.TOKEN_BUCKET, depth);
    }
    BiFunction<String, Workload, RedisContender> f = BY_NAME.get(name);
    if (f == null) {
      throw new IllegalArgumentException("unknown contender '" + name + "'; known: " + String.join(",", names()));
    }
    return f.apply(uri, w);
  }
}
