package dev.sluice.memory;

import dev.sluice.BanPolicy;
import dev.sluice.algorithm.Heap;
import java.util.ArrayList;
import java.util.List;

/**
 * What the memory store keeps about one key of a rule that bans or audits, beside the key's
 * state: the ban in force, the denials counted toward the next one, and the last distinct values
 * of the audited attribute, newest first. Kept apart from the state because a ban outlives the
 * state (a banned key consumes nothing, so its windows empty long before the ban ends).
 *
 * <p>Guarded by its own monitor; never held while a key's state lock or the budget's lock is
 * taken by someone else first (the store takes a state lock, then this, then the budget's).
 * Times are microseconds on the store's clock (or the decisions' explicit times).
 */
final class KeyPolicy {
  /** The object's own fields: six longs, two references, an int and a boolean. */
  static final long FIELDS = Heap.object(6 * 8 + 2 * Heap.REF + 4 + 1);

  /** When the ban ends; {@link Long#MIN_VALUE}: none. */
  long bannedUntil = Long.MIN_VALUE;
  /** Denials counted since {@link #countStart}; 0: none. */
  long denials;
  long countStart;
  /** {@link #countStart} plus the rule's {@code within}: when the counted denials are forgotten. */
  long countEnd;
  /** Newest first; null until a value is recorded. */
  String[] audit;
  int auditSize;
  /** When the audit list is forgotten: when the key's state becomes idle, as of the latest record. */
  long auditUntil = Long.MIN_VALUE;
  /** Bytes counted in the budget for this object, its array and its values (its map entry aside). */
  long bytes;
  /** Removed from the store: a writer that finds it so looks the key up again. */
  boolean dead;

  /** The time the ban in force at {@code now} ends, or {@link Long#MIN_VALUE} if none is. */
  synchronized long bannedAt(long now) {
    return bannedUntil > now ? bannedUntil : Long.MIN_VALUE;
  }

  /**
   * Counts a denial at {@code now}; answers whether it reached {@code ban.after()} and started a
   * ban (then the count starts over). The count is a fixed window opened by the first denial
   * counted in it.
   */
  synchronized boolean countDenial(BanPolicy ban, long now) {
    if (denials == 0 || now >= countEnd) {
      denials = 0;
      countStart = now;
      countEnd = now + ban.within().toNanos() / 1000;
    }
    denials++;
    if (denials >= ban.after()) {
      bannedUntil = Math.max(bannedUntil, now + ban.duration().toNanos() / 1000);
      denials = 0;
      return true;
    }
    return false;
  }

  /**
   * Records {@code value} as the newest of the last {@code keep} distinct values; answers the
   * change in bytes held (the value's string added, one pushed out or moved removed).
   */
  synchronized long record(String value, int keep, long until) {
    auditUntil = Math.max(auditUntil, until);
    long delta = 0;
    if (audit == null || audit.length != keep) {
      String[] a = new String[keep];
      int n = Math.min(auditSize, keep);
      if (audit != null) {
        System.arraycopy(audit, 0, a, 0, n);
        for (int i = n; i < auditSize; i++) {
          delta -= Heap.string(audit[i]);
        }
        delta -= refs(audit.length);
      }
      delta += refs(keep);
      audit = a;
      auditSize = n;
    }
    int at = -1;
    for (int i = 0; i < auditSize; i++) {
      if (audit[i].equals(value)) {
        at = i;
        break;
      }
    }
    if (at < 0) {
      delta += Heap.string(value);
      if (auditSize == keep) {
        delta -= Heap.string(audit[keep - 1]);
        at = keep - 1;
      } else {
        at = auditSize++;
      }
    }
    System.arraycopy(audit, 0, audit, 1, at);
    audit[0] = value;
    bytes += delta;
    return delta;
  }

  /** The bytes {@link #record} would add for {@code value} at most. */
  synchronized long recordBytes(String value, int keep) {
    return Heap.string(value) + (audit == null || audit.length != keep ? refs(keep) : 0);
  }

  synchronized List<String> audit(long now) {
    List<String> out = new ArrayList<>(auditSize);
    if (auditUntil > now) {
      for (int i = 0; i < auditSize; i++) {
        out.add(audit[i]);
      }
    }
    return out;
  }

  /** Lifts the ban and forgets the counted denials. */
  synchronized void unban() {
    bannedUntil = Long.MIN_VALUE;
    denials = 0;
  }

  synchronized void ban(long until) {
    bannedUntil = until;
    denials = 0;
  }

  /** Whether it holds nothing that matters at {@code now} or later. */
  synchronized boolean expired(long now) {
    return bannedUntil <= now && (denials == 0 || countEnd <= now) && (auditSize == 0 || auditUntil <= now);
  }

  /** An array of {@code n} references. */
  static long refs(int n) {
    return Heap.align(Heap.ARRAY_HEADER + (long) Heap.REF * n);
  }
}
