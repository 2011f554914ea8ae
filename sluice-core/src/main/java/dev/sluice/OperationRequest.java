package dev.sluice;

import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

/**
 * A request by operation: the limiter decides the items the operation's definition makes of
 * these attributes, as one transaction ({@link RuleSet#resolve}). Built with
 * {@link Request#operation}:
 *
 * <pre>{@code
 * limiter.acquire(Request.operation("auth.createToken")
 *     .attribute("user", userId)      // null leaves it out: an anonymous caller
 *     .attribute("ip", remoteAddress)
 *     .build());
 * }</pre>
 *
 * @param attributes attribute names to values, at most {@link #MAX_ATTRIBUTES}
 * @param cost a multiplier of every item's cost (1: the costs the operation defines; 0: a peek)
 * @param timeMicros as {@link Request#timeMicros()}
 */
public record OperationRequest(String operation, Map<String, String> attributes, long cost, long timeMicros) {
  /** The most attributes a request may carry. */
  public static final int MAX_ATTRIBUTES = 32;
  /** The longest attribute value, in chars. */
  public static final int MAX_VALUE_LENGTH = 512;

  /**
   * @throws InvalidAttributeException if there are more than {@link #MAX_ATTRIBUTES} attributes,
   *     a name is not 1-64 letters, digits and {@code _ . -}, or a value is empty or longer than
   *     {@link #MAX_VALUE_LENGTH}
   * @throws InvalidCostException if {@code cost} is negative
   */
  public OperationRequest {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(attributes, "attributes");
    if (attributes.size() > MAX_ATTRIBUTES) {
      throw new InvalidAttributeException(null, "a request may carry at most " + MAX_ATTRIBUTES + " attributes, had "
          + attributes.size());
    }
    if (attributes instanceof Attributes given) {
      // Built by our builder: already a private immutable copy; only checked.
      for (int i = 0; i < given.size(); i++) {
        check(given.name(i), given.value(i));
      }
    } else {
      String[] names = new String[attributes.size()];
      String[] values = new String[names.length];
      int i = 0;
      for (Map.Entry<String, String> e : attributes.entrySet()) {
        if (i == names.length) {
          throw new IllegalArgumentException("the attributes changed while they were read");
        }
        names[i] = Objects.requireNonNull(e.getKey(), "attribute name");
        values[i] = Objects.requireNonNull(e.getValue(), "attribute value");
        check(names[i], values[i]);
        i++;
      }
      if (i != names.length) {
        throw new IllegalArgumentException("the attributes changed while they were read");
      }
      attributes = new Attributes(names, values);
    }
    if (cost < 0) {
      throw new InvalidCostException(operation, cost, "cost must be >= 0, was " + cost + " (operation '"
          + Attribute.clip(operation) + "')");
    }
  }

  private static void check(String name, String value) {
    if (!Attribute.isName(name)) {
      throw new InvalidAttributeException(name, "is not a valid name: 1-64 letters, digits and _ . -");
    }
    if (value.isEmpty()) {
      throw new InvalidAttributeException(name, "must not be empty (leave an attribute out when it has no value)");
    }
    if (value.length() > MAX_VALUE_LENGTH) {
      throw new InvalidAttributeException(name, "is " + value.length() + " characters long; the maximum is "
          + MAX_VALUE_LENGTH);
    }
  }

  /** A request for {@code operation} with {@code attributes}, at cost 1, on the store's clock. */
  public static OperationRequest of(String operation, Map<String, String> attributes) {
    return new OperationRequest(operation, attributes, 1, Request.STORE_CLOCK);
  }

  public static Builder builder(String operation) {
    return new Builder(operation);
  }

  /** This request at an explicit time, microseconds since the Unix epoch. */
  public OperationRequest atMicros(long epochMicros) {
    if (epochMicros == Request.STORE_CLOCK) {
      throw new IllegalArgumentException("time out of range");
    }
    return new OperationRequest(operation, attributes, cost, epochMicros);
  }

  /** This request at an explicit time, milliseconds since the Unix epoch. */
  public OperationRequest atMillis(long epochMillis) {
    return atMicros(Math.multiplyExact(epochMillis, 1000L));
  }

  public OperationRequest at(Instant t) {
    return atMicros(Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000));
  }

  public boolean hasExplicitTime() {
    return timeMicros != Request.STORE_CLOCK;
  }

  /** Builds an {@link OperationRequest}. Not thread-safe. */
  public static final class Builder {
    private final String operation;
    // Names and values in the order first set: a request carries a handful, so a scan finds one.
    private String[] names = new String[4];
    private String[] values = new String[4];
    private int count;
    private long cost = 1;
    private long timeMicros = Request.STORE_CLOCK;

    private Builder(String operation) {
      this.operation = Objects.requireNonNull(operation, "operation");
    }

    /** Sets attribute {@code name}; a null {@code value} leaves it out (removes it if set). */
    public Builder attribute(String name, String value) {
      Objects.requireNonNull(name, "name");
      int at = 0;
      while (at < count && !names[at].equals(name)) {
        at++;
      }
      if (value == null) {
        if (at < count) {
          System.arraycopy(names, at + 1, names, at, count - at - 1);
          System.arraycopy(values, at + 1, values, at, count - at - 1);
          count--;
        }
        return this;
      }
      if (at == count) {
        if (count == names.length) {
          names = Arrays.copyOf(names, count * 2);
          values = Arrays.copyOf(values, count * 2);
        }
        names[count] = name;
        count++;
      }
      values[at] = value;
      return this;
    }

    /** Multiplies every item's cost; 1 by default. */
    public Builder cost(long cost) {
      this.cost = cost;
      return this;
    }

    /** Decides the request at an explicit time, milliseconds since the Unix epoch. */
    public Builder atMillis(long epochMillis) {
      this.timeMicros = Math.multiplyExact(epochMillis, 1000L);
      return this;
    }

    /**
     * @throws InvalidAttributeException as {@link OperationRequest#OperationRequest}
     * @throws InvalidCostException if the cost is negative
     */
    public OperationRequest build() {
      Attributes attributes = count == 0 ? Attributes.EMPTY
          : new Attributes(Arrays.copyOf(names, count), Arrays.copyOf(values, count));
      return new OperationRequest(operation, attributes, cost, timeMicros);
    }
  }
}
