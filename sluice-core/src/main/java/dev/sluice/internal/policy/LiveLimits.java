package dev.sluice.internal.policy;

import dev.sluice.policy.LiveLimit;
import dev.sluice.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Live limits as policy records hold them. */
final class LiveLimits {
  private LiveLimits() {}

  /** A live limit as a record's value: {@code tier:<name>} or {@code 10/PT1M,100/PT1H}. */
  static String encode(LiveLimit l) {
    if (l.tier() != null) {
      return "tier:" + l.tier();
    }
    StringBuilder sb = new StringBuilder();
    for (Window w : l.windows()) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(w.limit()).append('/').append(w.period());
    }
    return sb.toString();
  }

  /** @throws IllegalArgumentException if {@code value} is not an encoded live limit */
  static LiveLimit decode(String value) {
    if (value.startsWith("tier:")) {
      return LiveLimit.tier(value.substring(5));
    }
    List<Window> ws = new ArrayList<>();
    for (String part : value.split(",", -1)) {
      int slash = part.indexOf('/');
      if (slash <= 0) {
        throw new IllegalArgumentException("'" + value + "' is not a live limit");
      }
      try {
        ws.add(new Window(Long.parseLong(part.substring(0, slash)), Duration.parse(part.substring(slash + 1))));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("'" + value + "' is not a live limit: " + e.getMessage());
      }
    }
    return LiveLimit.windows(ws);
  }
}
