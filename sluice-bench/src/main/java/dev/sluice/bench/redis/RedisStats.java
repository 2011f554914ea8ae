package dev.sluice.bench.redis;

import io.lettuce.core.api.sync.RedisCommands;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** What the server says about itself at one instant: commands run, CPU used, memory used. */
record RedisStats(Map<String, Long> calls, double cpuSeconds, long usedMemory) {

  /** Commands the load tool itself sends (and client housekeeping), left out of per-decision counts. */
  private static final Set<String> HARNESS = Set.of("info", "config", "memory", "scan", "ping", "client", "hello",
      "select", "script", "dbsize", "flushall", "flushdb", "command", "cluster", "readonly", "auth");

  private static final Set<String> SCRIPTS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");

  static RedisStats take(RedisCommands<String, String> admin) {
    Map<String, Long> calls = new HashMap<>();
    for (String line : admin.info("commandstats").split("\r?\n")) {
      // cmdstat_get:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0
      if (line.startsWith("cmdstat_")) {
        int colon = line.indexOf(':');
        String name = line.substring("cmdstat_".length(), colon);
        String rest = line.substring(colon + 1);
        int c = rest.indexOf("calls=");
        int end = rest.indexOf(',', c);
        calls.put(name, Long.parseLong(rest.substring(c + 6, end)));
      }
    }
    Map<String, String> cpu = fields(admin.info("cpu"));
    double cpuSeconds = Double.parseDouble(cpu.get("used_cpu_sys")) + Double.parseDouble(cpu.get("used_cpu_user"));
    long used = Long.parseLong(fields(admin.info("memory")).get("used_memory"));
    return new RedisStats(calls, cpuSeconds, used);
  }

  static Map<String, String> fields(String info) {
    Map<String, String> m = new HashMap<>();
    for (String line : info.split("\r?\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        m.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return m;
  }

  /** Commands of the workload since {@code before}, script-internal calls included. */
  long commandsSince(RedisStats before) {
    long n = 0;
    for (Map.Entry<String, Long> e : calls.entrySet()) {
      String name = e.getKey().toLowerCase(java.util.Locale.ROOT);
      if (!HARNESS.contains(name) && !name.startsWith("client|") && !name.startsWith("config|")
          && !name.startsWith("script|") && !name.startsWith("memory|") && !name.startsWith("command|")
          && !name.startsWith("cluster|")) {
        n += e.getValue() - before.calls.getOrDefault(e.getKey(), 0L);
      }
    }
    return n;
  }

  /** Script evaluations (EVAL, EVALSHA, FCALL…) since {@code before}: round trips that run a script. */
  long scriptsSince(RedisStats before) {
    long n = 0;
    for (Map.Entry<String, Long> e : calls.entrySet()) {
      if (SCRIPTS.contains(e.getKey().toLowerCase(java.util.Locale.ROOT))) {
        n += e.getValue() - before.calls.getOrDefault(e.getKey(), 0L);
      }
    }
    return n;
  }
}
