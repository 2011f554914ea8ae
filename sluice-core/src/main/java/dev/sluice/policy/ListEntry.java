package dev.sluice.policy;

import java.util.Objects;

/** A run-time entry of a rule's allow or deny list (see {@link ListKind}). */
public record ListEntry(String rule, String entry) {
  public ListEntry {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(entry, "entry");
  }
}
