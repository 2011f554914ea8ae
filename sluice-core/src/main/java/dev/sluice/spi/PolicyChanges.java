package dev.sluice.spi;

import java.util.List;

/**
 * What changed in a store's policies after a version an instance had seen.
 *
 * @param version the version these changes bring the reader to
 * @param complete false when the store no longer holds every change since the version asked for
 *     (the reader must read everything again, {@link PolicyRecords#page}); the lists are then empty
 * @param changed the records put since then, as they are now
 * @param removed the records removed (or expired) since then: their kind, rule and key (value empty)
 */
public record PolicyChanges(long version, boolean complete, List<PolicyRecord> changed, List<PolicyRecord> removed) {
  public PolicyChanges {
    changed = List.copyOf(changed);
    removed = List.copyOf(removed);
  }
}
