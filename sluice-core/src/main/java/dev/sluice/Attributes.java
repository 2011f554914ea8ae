package dev.sluice;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The attributes of an {@link OperationRequest}: an immutable map in the order given, of at most
 * {@link OperationRequest#MAX_ATTRIBUTES} names with non-null values. Two arrays and a scan, as a
 * request carries a handful of short names: a request by operation is built and read on every
 * call, where a hash map and its defensive copy cost as much as resolving the operation.
 */
final class Attributes extends AbstractMap<String, String> {
  static final Attributes EMPTY = new Attributes(new String[0], new String[0]);

  private final String[] names;
  private final String[] values;

  /** Takes the arrays as they are: the caller hands over arrays nobody else holds. */
  Attributes(String[] names, String[] values) {
    this.names = names;
    this.values = values;
  }

  String name(int i) {
    return names[i];
  }

  String value(int i) {
    return values[i];
  }

  @Override
  public String get(Object name) {
    for (int i = 0; i < names.length; i++) {
      if (names[i].equals(name)) {
        return values[i];
      }
    }
    return null;
  }

  @Override
  public boolean containsKey(Object name) {
    return get(name) != null; // values are never null
  }

  @Override
  public int size() {
    return names.length;
  }

  @Override
  public Set<Entry<String, String>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Entry<String, String>> iterator() {
        return new Iterator<>() {
          private int next;

          @Override
          public boolean hasNext() {
            return next < names.length;
          }

          @Override
          public Entry<String, String> next() {
            if (next >= names.length) {
              throw new NoSuchElementException();
            }
            int i = next++;
            return new SimpleImmutableEntry<>(names[i], values[i]);
          }
        };
      }

      @Override
      public int size() {
        return names.length;
      }
    };
  }
}
