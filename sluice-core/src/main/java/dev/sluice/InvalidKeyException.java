package dev.sluice;

/**
 * A request item's key is not one the limiter keeps: it is empty, longer than the limiter's
 * maximum in UTF-8 bytes ({@link Sluice.Builder#maxKeyBytes}, 512 by default), or not valid
 * Unicode (a lone surrogate, which has no UTF-8 form, so that two distinct keys would become one
 * in a store that keeps bytes). The limiter checks every item before anything is decided, so
 * nothing was consumed.
 *
 * <p>The message is {@code key <problem> (rule '<rule>')}; a front end that names the key its own
 * way (a field of a JSON body) puts {@link #problem()} after its own name for it.
 */
public final class InvalidKeyException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String rule;
  private final int item;
  private final long keyBytes;
  private final String problem;

  /**
   * @param item the position of the item in its request
   * @param keyBytes the key's length in UTF-8 bytes, -1 if it has none
   * @param problem what is wrong, as the rest of a sentence about the key: {@code must not be
   *     empty}, {@code is 513 bytes of UTF-8; the maximum is 512}
   */
  public InvalidKeyException(String rule, int item, long keyBytes, String problem) {
    super("key " + problem + " (rule '" + rule + "')");
    this.rule = rule;
    this.item = item;
    this.keyBytes = keyBytes;
    this.problem = problem;
  }

  /** The rule of the item whose key was refused. */
  public String rule() {
    return rule;
  }

  /** The position of the item in its request: 0 for the first (or only) one. */
  public int item() {
    return item;
  }

  /** The key's length in UTF-8 bytes; -1 for a key that is not valid Unicode and so has no UTF-8 form. */
  public long keyBytes() {
    return keyBytes;
  }

  /** What is wrong with the key, as the rest of a sentence that names it: {@code must not be empty}. */
  public String problem() {
    return problem;
  }
}
