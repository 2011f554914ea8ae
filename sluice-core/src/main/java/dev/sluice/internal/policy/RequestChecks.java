package dev.sluice.internal.policy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.util.List;

/**
 * The limiter's checks of what a request names, which the policies API applies to its own
 * arguments: a key a request would be refused is refused a policy too.
 */
public interface RequestChecks {
  /** The rules in force. */
  RuleSet rules();

  /**
   * The rule named {@code rule}, after the checks of {@code acquire} on it and on {@code key}.
   *
   * @throws dev.sluice.UnknownRuleException or dev.sluice.InvalidKeyException naming what was wrong
   */
  Rule validateKey(String rule, String key);

  /**
   * Refuses windows the store could not decide for {@code rule}, as if they were the rule's own.
   *
   * @throws dev.sluice.UnsupportedRuleException or IllegalArgumentException naming what is out of range
   */
  void checkWindows(Rule rule, List<Window> windows);
}
