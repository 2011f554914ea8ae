package dev.sluice;

import dev.sluice.internal.policy.IpAddresses;
import java.util.Objects;

/**
 * A request attribute declared with a type, which decides how its value becomes part of a key.
 * Attributes an operation names without a declaration are plain strings, used as given.
 *
 * <p>An {@link Type#IP ip} attribute must be an IPv4 or IPv6 address literal; its key text is the
 * address in canonical form ({@code 10.0.0.1}, {@code 2001:db8::1}), or, with a prefix grouping,
 * the network the address is in ({@code 10.0.0.0/24}, {@code 2001:db8::/64}), so that one host
 * cannot rotate through the addresses of its subnet. An IPv4-mapped IPv6 address
 * ({@code ::ffff:10.0.0.1}) is the IPv4 address it maps.
 */
public final class Attribute {
  /** What an attribute's values are. */
  public enum Type {
    /** Any text, used as given. */
    STRING("string"),
    /** An IPv4 or IPv6 address literal, canonicalised and optionally grouped by prefix. */
    IP("ip");

    private final String configName;

    Type(String configName) {
      this.configName = configName;
    }

    public String configName() {
      return configName;
    }
  }

  /** {@link #ipv4Prefix()} or {@link #ipv6Prefix()} when addresses are not grouped. */
  public static final int NO_GROUPING = -1;

  /** The longest attribute name. */
  static final int MAX_NAME_LENGTH = 64;

  private final String name;
  private final Type type;
  private final int ipv4Prefix;
  private final int ipv6Prefix;

  private Attribute(String name, Type type, int ipv4Prefix, int ipv6Prefix) {
    this.name = checkName(name);
    this.type = type;
    if (ipv4Prefix != NO_GROUPING && (ipv4Prefix < 0 || ipv4Prefix > 32)) {
      throw new IllegalArgumentException("attribute '" + name + "': the IPv4 prefix must be from 0 to 32, was "
          + ipv4Prefix);
    }
    if (ipv6Prefix != NO_GROUPING && (ipv6Prefix < 0 || ipv6Prefix > 128)) {
      throw new IllegalArgumentException("attribute '" + name + "': the IPv6 prefix must be from 0 to 128, was "
          + ipv6Prefix);
    }
    this.ipv4Prefix = ipv4Prefix;
    this.ipv6Prefix = ipv6Prefix;
  }

  /** A string attribute: its values are used as given. */
  public static Attribute string(String name) {
    return new Attribute(name, Type.STRING, NO_GROUPING, NO_GROUPING);
  }

  /** An IP attribute without grouping: the key text is the canonical address. */
  public static Attribute ip(String name) {
    return new Attribute(name, Type.IP, NO_GROUPING, NO_GROUPING);
  }

  /**
   * An IP attribute whose key text is the network of the address: the first {@code ipv4Prefix}
   * bits of an IPv4 address, the first {@code ipv6Prefix} of an IPv6 one.
   *
   * @param ipv4Prefix 0 to 32, or {@link #NO_GROUPING}
   * @param ipv6Prefix 0 to 128, or {@link #NO_GROUPING}
   * @throws IllegalArgumentException if a prefix is out of range, or the name is not 1-64
   *     letters, digits and {@code _ . -}
   */
  public static Attribute ip(String name, int ipv4Prefix, int ipv6Prefix) {
    return new Attribute(name, Type.IP, ipv4Prefix, ipv6Prefix);
  }

  static String checkName(String name) {
    Objects.requireNonNull(name, "name");
    if (!isName(name)) {
      throw new IllegalArgumentException("attribute name must be 1-64 characters of letters, digits and _ . -, was '"
          + clip(name) + "'");
    }
    return name;
  }

  /**
   * Whether {@code s} is 1-64 letters, digits and {@code _ . -}: checked on every attribute of
   * every request by operation, so by hand rather than by a regular expression.
   */
  static boolean isName(String s) {
    int n = s.length();
    if (n == 0 || n > MAX_NAME_LENGTH) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-')) {
        return false;
      }
    }
    return true;
  }

  static String clip(String s) {
    return s.length() <= 64 ? s : s.substring(0, 64) + "...";
  }

  public String name() {
    return name;
  }

  public Type type() {
    return type;
  }

  /** The IPv4 grouping prefix, or {@link #NO_GROUPING}. */
  public int ipv4Prefix() {
    return ipv4Prefix;
  }

  /** The IPv6 grouping prefix, or {@link #NO_GROUPING}. */
  public int ipv6Prefix() {
    return ipv6Prefix;
  }

  /**
   * The text {@code value} stands for in a key.
   *
   * @throws InvalidAttributeException if the value is not of this attribute's type
   */
  public String keyText(String value) {
    if (type == Type.STRING) {
      return value;
    }
    // A dotted quad, the common case, is read and written without the 16-byte form.
    long quad = IpAddresses.ipv4(value, 0);
    if (quad >= 0) {
      return ipv4Prefix == NO_GROUPING
          ? IpAddresses.formatIpv4((int) quad, -1)
          : IpAddresses.formatIpv4(IpAddresses.maskIpv4((int) quad, ipv4Prefix), ipv4Prefix);
    }
    byte[] a = IpAddresses.parse(value);
    if (a == null) {
      throw notAnAddress(value);
    }
    boolean v4 = IpAddresses.isIpv4(a);
    int prefix = v4 ? ipv4Prefix : ipv6Prefix;
    if (prefix == NO_GROUPING) {
      return IpAddresses.format(a);
    }
    IpAddresses.mask(a, v4 ? 12 : 0, prefix);
    return IpAddresses.format(a) + "/" + prefix;
  }

  private InvalidAttributeException notAnAddress(String value) {
    return new InvalidAttributeException(name, "must be an IPv4 or IPv6 address (such as 192.0.2.1 or 2001:db8::1), "
        + "was '" + clip(value) + "'");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Attribute a && a.name.equals(name) && a.type == type && a.ipv4Prefix == ipv4Prefix
        && a.ipv6Prefix == ipv6Prefix;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, type, ipv4Prefix, ipv6Prefix);
  }

  @Override
  public String toString() {
    return "Attribute{" + name + " " + type.configName()
        + (ipv4Prefix != NO_GROUPING ? " /" + ipv4Prefix : "") + (ipv6Prefix != NO_GROUPING ? " /" + ipv6Prefix + "(v6)" : "")
        + "}";
  }
}
