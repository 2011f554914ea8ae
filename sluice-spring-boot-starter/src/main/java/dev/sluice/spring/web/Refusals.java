package dev.sluice.spring.web;

import dev.sluice.InvalidAttributeException;
import dev.sluice.InvalidCostException;
import dev.sluice.InvalidKeyException;
import dev.sluice.MissingAttributeException;
import dev.sluice.UnknownOperationException;
import dev.sluice.UnknownRuleException;
import dev.sluice.UnsupportedRuleException;

/**
 * The requests that the limiter refuses for what they carry — an attribute missing (a header
 * the route reads was not sent) or malformed (not an IP address), a value too long for a key —
 * are the client's mistakes: 400, never a 500. Anything else is the application's, and is thrown.
 */
final class Refusals {
  private Refusals() {}

  /** The 400's detail for {@code e}, or null if {@code e} is not the client's mistake. */
  static String detail(IllegalArgumentException e) {
    if (e instanceof UnknownOperationException || e instanceof UnknownRuleException
        || e instanceof UnsupportedRuleException) {
      return null;
    }
    if (e instanceof MissingAttributeException || e instanceof InvalidAttributeException
        || e instanceof InvalidKeyException || e instanceof InvalidCostException) {
      return "the request cannot be rate limited: " + e.getMessage();
    }
    // OperationRequest's own checks: too many attributes, a value over its bound.
    return "the request cannot be rate limited: " + e.getMessage();
  }
}
