package dev.sluice;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One or more items decided together: all are consumed, or none. By default a request is decided
 * on its store's clock; {@link #atMicros(long)} pins an explicit time (replay and tests).
 */
public record Request(List<Item> items, long timeMicros) {

  /** {@link #timeMicros()} value meaning "the store's own clock". */
  public static final long STORE_CLOCK = Long.MIN_VALUE;

  /** @throws IllegalArgumentException if there are no items */
  public Request {
    items = List.copyOf(Objects.requireNonNull(items, "items"));
    if (items.isEmpty()) {
      throw new IllegalArgumentException("a request needs at least one item");
    }
  }

  public static Request of(String rule, String key) {
    return new Request(List.of(Item.of(rule, key)), STORE_CLOCK);
  }

  public static Request of(String rule, String key, long cost) {
    return new Request(List.of(Item.of(rule, key, cost)), STORE_CLOCK);
  }

  public static Request of(Item... items) {
    return new Request(List.of(items), STORE_CLOCK);
  }

  public static Request of(List<Item> items) {
    return new Request(items, STORE_CLOCK);
  }

  /**
   * A request by operation, whose items the operation's definition makes of the attributes given:
   * {@code Request.operation("auth.createToken").attribute("user", "42").build()}.
   */
  public static OperationRequest.Builder operation(String name) {
    return OperationRequest.builder(name);
  }

  /** This request at an explicit time, microseconds since the Unix epoch. */
  public Request atMicros(long epochMicros) {
    if (epochMicros == STORE_CLOCK) {
      throw new IllegalArgumentException("time out of range");
    }
    return new Request(items, epochMicros);
  }

  /** This request at an explicit time, milliseconds since the Unix epoch. */
  public Request atMillis(long epochMillis) {
    return atMicros(Math.multiplyExact(epochMillis, 1000L));
  }

  public Request at(Instant t) {
    return atMicros(Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000));
  }

  public boolean hasExplicitTime() {
    return timeMicros != STORE_CLOCK;
  }
}
