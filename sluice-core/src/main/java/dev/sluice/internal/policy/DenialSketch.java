package dev.sluice.internal.policy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;

/**
 * The most-denied keys of a stream of denials, in bounded space: a Space-Saving summary (Metwally,
 * Agrawal and El Abbadi, 2005) of at most {@code k} entries, mergeable with another of the same
 * capacity.
 *
 * <h2>What it guarantees</h2>
 *
 * Let {@code N} be {@link #total()} (every count added, here or in a sketch merged in) and let the
 * <em>floor</em> be the smallest count held when the sketch is full ({@code k} entries), 0 when it
 * is not. Then, for every key:
 *
 * <ul>
 *   <li>a key held with {@code (count, error)} has a true count in {@code [count - error, count]}:
 *       the count never underestimates, and {@code error ≤ floor};
 *   <li>a key not held has a true count of at most the floor;
 *   <li>the counts held add up to at most {@code N}, so {@code floor ≤ N / k}.
 * </ul>
 *
 * Hence every error is at most {@code N / k}, and every key whose true count exceeds {@code N / k}
 * is held. These hold after any sequence of {@link #add adds} and {@link #merge merges}, with
 * {@code N} the total of the union of the streams merged: merging sketches of the parts of a
 * stream gives the bound {@code N / k} of the whole stream.
 *
 * <h2>The algorithm (also the store's, which merges with a script)</h2>
 *
 * <b>add(x, n)</b>, {@code n ≥ 1}: {@code N += n}. If x is held, its count grows by n. Else if
 * fewer than k entries are held, x enters with {@code (n, 0)}. Else the entry with the smallest
 * count m (any of them, if several) is dropped and x enters with {@code (m + n, m)}.
 *
 * <p><b>merge(A, B)</b>, both of capacity k: let {@code mA} be A's floor and {@code mB} B's (the
 * smallest count if full, else 0). For every key x held by A or B:
 *
 * <pre>
 *   count(x) = (A holds x ? A.count(x) : mA) + (B holds x ? B.count(x) : mB)
 *   error(x) = (A holds x ? A.error(x) : mA) + (B holds x ? B.error(x) : mB)
 * </pre>
 *
 * Sort by count descending, then by key in ascending byte order of UTF-8 (which is code point
 * order); keep the first k; {@code N = A.N + B.N}. This is the Space-Saving merge of Cafaro,
 * Pulimeno and Tempesta (2016): a key absent from a full summary may have had up to its floor
 * there, so it is charged that much, as count and as error. Why the bounds hold: each held count of
 * A is at least {@code mA}, so the k entries kept take from A at most A's counts (an absent key's
 * {@code mA} stands in for a count of A left out), and likewise from B: they add up to at most
 * {@code A.N + B.N}. Every combined count is at least {@code mA + mB}, which bounds every combined
 * error and every key held by neither; a key dropped had at most the k-th count.
 *
 * <h2>Wire form</h2>
 *
 * {@link #encode()} writes text, lines ending in {@code \n}, numbers in decimal without sign or
 * leading zero:
 *
 * <pre>
 *   sketch/1 &lt;k&gt; &lt;N&gt; &lt;entries&gt;
 *   &lt;count&gt; &lt;error&gt; &lt;key length in UTF-8 bytes&gt; &lt;key&gt;     (one line per entry)
 * </pre>
 *
 * Entries come in the merge's order (count descending, then key bytes ascending), so one content
 * has one spelling. Keys are read by length, so they may hold any character, spaces and line ends
 * included. Counts and {@code N} are at most {@value #MAX_TOTAL} (2<sup>53</sup> − 1: exact in
 * the double of a Lua number). Its size is at most {@code 40 + k × (47 + longest key in bytes)}:
 * about 71 KB for k = 128 and keys of 512 bytes. {@link #decode} refuses anything else, naming
 * what was wrong, and anything that breaks the guarantees above that it can see: an error larger
 * than its count or than the floor, an error in a sketch that is not full, counts adding up to more
 * than N (or, when not full, to other than N), a key twice.
 *
 * <h2>Threads</h2>
 *
 * Not thread-safe: one thread at a time, or a lock held by the caller ({@link MinuteSketches}
 * holds one per rule). {@code add} costs a hash lookup and a sift in a binary heap of k entries.
 *
 * <p>Keys are the limiter's keys: non-empty, valid Unicode, at most {@value #MAX_KEY_BYTES} bytes
 * of UTF-8. {@code add} checks only that a key is not empty (the limiter checked the rest before
 * deciding); {@code encode} checks the rest.
 */
public final class DenialSketch {
  public static final int DEFAULT_CAPACITY = 128;
  public static final int MAX_CAPACITY = 10_000;
  /** The largest total (and count): 2^53 - 1, so that a Lua script's doubles hold it exactly. */
  public static final long MAX_TOTAL = (1L << 53) - 1;
  /** The limiter's largest key bound. */
  public static final int MAX_KEY_BYTES = 65_536;

  static final String MAGIC = "sketch/1";

  /**
   * A key held, with its count (never below the true count) and the most by which the count may
   * exceed the true count.
   */
  public record Entry(String key, long count, long error) {
    /** The least the true count can be. */
    public long guaranteed() {
      return count - error;
    }
  }

  /** The order of {@link #top}, of the merge's cut and of the wire form. */
  static final Comparator<Entry> ORDER = (a, b) -> {
    int c = Long.compare(b.count, a.count);
    return c != 0 ? c : compareKeys(a.key, b.key);
  };

  private static final class Node {
    String key;
    long count;
    long error;
    int pos;

    Node(String key, long count, long error) {
      this.key = key;
      this.count = count;
      this.error = error;
    }
  }

  private final int capacity;
  private final HashMap<String, Node> index;
  /** A binary min-heap on count: the entry to drop is at 0. */
  private final Node[] heap;
  private int size;
  private long total;

  public DenialSketch() {
    this(DEFAULT_CAPACITY);
  }

  /** @throws IllegalArgumentException if capacity is not between 1 and {@value #MAX_CAPACITY} */
  public DenialSketch(int capacity) {
    this.capacity = checkCapacity(capacity);
    // Sized so that k entries never rehash.
    this.index = new HashMap<>(capacity * 4 / 3 + 1);
    this.heap = new Node[capacity];
  }

  public static int checkCapacity(int capacity) {
    if (capacity < 1 || capacity > MAX_CAPACITY) {
      throw new IllegalArgumentException(
          "a sketch's capacity must be between 1 and " + MAX_CAPACITY + ", was " + capacity);
    }
    return capacity;
  }

  /**
   * Counts {@code n} more denials of {@code key}.
   *
   * @throws IllegalArgumentException if the key is empty or n is not positive
   * @throws IllegalStateException if the total would pass {@value #MAX_TOTAL}
   */
  public void add(String key, long n) {
    if (key.isEmpty()) {
      throw new IllegalArgumentException("a sketch's key must not be empty");
    }
    if (n <= 0) {
      throw new IllegalArgumentException("a count added to a sketch must be positive, was " + n);
    }
    if (n > MAX_TOTAL - total) {
      throw new IllegalStateException("a sketch's total cannot pass " + MAX_TOTAL);
    }
    total += n;
    Node node = index.get(key);
    if (node != null) {
      node.count += n;
      siftDown(node.pos);
    } else if (size < capacity) {
      node = new Node(key, n, 0);
      heap[size] = node;
      node.pos = size++;
      index.put(key, node);
      siftUp(node.pos);
    } else {
      // The smallest entry makes way; the newcomer may have had up to its count unseen.
      node = heap[0];
      index.remove(node.key);
      long floor = node.count;
      node.key = key;
      node.count = floor + n;
      node.error = floor;
      index.put(key, node);
      siftDown(0);
    }
  }

  /**
   * Merges {@code other} into this sketch (see the class comment); {@code other} is unchanged.
   *
   * @throws IllegalArgumentException if the capacities differ
   * @throws IllegalStateException if the total would pass {@value #MAX_TOTAL}
   */
  public void merge(DenialSketch other) {
    if (other.capacity != capacity) {
      throw new IllegalArgumentException(
          "cannot merge a sketch of capacity " + other.capacity + " into one of capacity " + capacity);
    }
    if (other.total > MAX_TOTAL - total) {
      throw new IllegalStateException("a sketch's total cannot pass " + MAX_TOTAL);
    }
    DenialSketch b = other == this ? copy() : other;
    long ma = floor();
    long mb = b.floor();
    List<Entry> combined = new ArrayList<>(size + b.size);
    for (int i = 0; i < size; i++) {
      Node x = heap[i];
      Node y = b.index.get(x.key);
      combined.add(y == null
          ? new Entry(x.key, x.count + mb, x.error + mb)
          : new Entry(x.key, x.count + y.count, x.error + y.error));
    }
    for (int i = 0; i < b.size; i++) {
      Node y = b.heap[i];
      if (!index.containsKey(y.key)) {
        combined.add(new Entry(y.key, ma + y.count, ma + y.error));
      }
    }
    combined.sort(ORDER);
    long newTotal = total + b.total;
    clear();
    total = newTotal;
    int keep = Math.min(capacity, combined.size());
    // Sorted descending, the list reversed is already a min-heap.
    for (int i = 0; i < keep; i++) {
      Entry e = combined.get(keep - 1 - i);
      Node node = new Node(e.key, e.count, e.error);
      node.pos = i;
      heap[i] = node;
      index.put(e.key, node);
    }
    size = keep;
  }

  /** A sketch equal to this one, sharing nothing with it. */
  public DenialSketch copy() {
    DenialSketch c = new DenialSketch(capacity);
    for (int i = 0; i < size; i++) {
      Node x = heap[i];
      Node node = new Node(x.key, x.count, x.error);
      node.pos = i;
      c.heap[i] = node;
      c.index.put(x.key, node);
    }
    c.size = size;
    c.total = total;
    return c;
  }

  /**
   * The {@code count} largest entries, by count descending (ties by key, in code point order).
   *
   * @throws IllegalArgumentException if count is negative
   */
  public List<Entry> top(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("the number of entries asked for must not be negative, was " + count);
    }
    List<Entry> all = entries();
    return List.copyOf(all.subList(0, Math.min(count, all.size())));
  }

  /** Every count added, here and in the sketches merged in. */
  public long total() {
    return total;
  }

  /**
   * The most any key not held can have been counted: the smallest count held when the sketch is
   * full, else 0 (every key is then held, exactly). Every error is at most this, and this is at most
   * {@code total() / capacity()}.
   */
  public long floor() {
    return size == capacity ? heap[0].count : 0;
  }

  public int capacity() {
    return capacity;
  }

  /** The number of keys held. */
  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return total == 0;
  }

  private void clear() {
    index.clear();
    java.util.Arrays.fill(heap, 0, size, null);
    size = 0;
    total = 0;
  }

  private List<Entry> entries() {
    List<Entry> all = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      Node x = heap[i];
      all.add(new Entry(x.key, x.count, x.error));
    }
    all.sort(ORDER);
    return all;
  }

  private void siftUp(int i) {
    Node node = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      Node p = heap[parent];
      if (p.count <= node.count) {
        break;
      }
      heap[i] = p;
      p.pos = i;
      i = parent;
    }
    heap[i] = node;
    node.pos = i;
  }

  private void siftDown(int i) {
    Node node = heap[i];
    int half = size >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      Node c = heap[child];
      int right = child + 1;
      if (right < size && heap[right].count < c.count) {
        child = right;
        c = heap[right];
      }
      if (node.count <= c.count) {
        break;
      }
      heap[i] = c;
      c.pos = i;
      i = child;
    }
    heap[i] = node;
    node.pos = i;
  }

  // ---- wire form

  /**
   * The sketch as text (see the class comment).
   *
   * @throws IllegalStateException if a key has no UTF-8 form (a lone surrogate) or is longer than
   *     {@value #MAX_KEY_BYTES} bytes of it
   */
  public String encode() {
    List<Entry> all = entries();
    StringBuilder out = new StringBuilder(40 + all.size() * 64);
    out.append(MAGIC).append(' ').append(capacity).append(' ').append(total).append(' ').append(all.size())
        .append('\n');
    for (Entry e : all) {
      int bytes = utf8Length(e.key);
      if (bytes < 0) {
        throw new IllegalStateException("a sketch's key is not valid Unicode (a lone surrogate)");
      }
      if (bytes > MAX_KEY_BYTES) {
        throw new IllegalStateException(
            "a sketch's key is " + bytes + " bytes of UTF-8; the maximum is " + MAX_KEY_BYTES);
      }
      out.append(e.count).append(' ').append(e.error).append(' ').append(bytes).append(' ').append(e.key)
          .append('\n');
    }
    return out.toString();
  }

  /**
   * Reads what {@link #encode()} wrote.
   *
   * @throws IllegalArgumentException naming what was wrong, if the text is not a sketch's wire form
   *     or describes a sketch that cannot be (see the class comment)
   */
  public static DenialSketch decode(String text) {
    Objects.requireNonNull(text, "text");
    return new Reader(text).sketch();
  }

  /** The length of s in UTF-8, or -1 if it holds a lone surrogate. */
  static int utf8Length(String s) {
    int bytes = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return -1;
        }
        bytes += 4;
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return -1;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }

  /**
   * Orders keys as their UTF-8 bytes compare, unsigned (code point order), which a script
   * comparing byte strings reproduces; {@link String#compareTo} differs for characters above
   * U+E000 against those beyond U+FFFF.
   */
  static int compareKeys(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        if (x >= 0xD800 && y >= 0xD800) {
          // Surrogates (beyond U+FFFF) go above U+E000..U+FFFF.
          x = (char) (x >= 0xE000 ? x - 0x800 : x + 0x2000);
          y = (char) (y >= 0xE000 ? y - 0x800 : y + 0x2000);
        }
        return x - y;
      }
    }
    return a.length() - b.length();
  }

  /** A strict reader of the wire form: every departure is an error naming where it is. */
  private static final class Reader {
    private final String s;
    private int pos;

    Reader(String s) {
      this.s = s;
    }

    DenialSketch sketch() {
      if (!s.startsWith(MAGIC + " ")) {
        throw bad("it does not start with '" + MAGIC + " '");
      }
      pos = MAGIC.length() + 1;
      long k = number("the capacity", ' ', MAX_CAPACITY);
      if (k < 1) {
        throw bad("the capacity must be between 1 and " + MAX_CAPACITY + ", was 0");
      }
      long total = number("the total", ' ', MAX_TOTAL);
      long entries = number("the number of entries", '\n', k);
      long longest = (long) (40 + k * (47 + (long) MAX_KEY_BYTES));
      if (s.length() > longest) {
        throw bad("it is " + s.length() + " characters long, more than a sketch of capacity " + k + " can be");
      }
      DenialSketch sketch = new DenialSketch((int) k);
      List<Entry> read = new ArrayList<>((int) entries);
      long sum = 0;
      for (int i = 1; i <= entries; i++) {
        String where = "entry " + i + " of " + entries;
        long count = number(where + ": the count", ' ', MAX_TOTAL);
        if (count < 1) {
          throw bad(where + ": the count must be at least 1");
        }
        long error = number(where + ": the error", ' ', MAX_TOTAL);
        if (error > count) {
          throw bad(where + ": the error " + error + " exceeds the count " + count);
        }
        long bytes = number(where + ": the key's length", ' ', MAX_KEY_BYTES);
        if (bytes < 1) {
          throw bad(where + ": the key is empty");
        }
        String key = key(where, (int) bytes);
        expect('\n', where + ": no line end after the key");
        Entry e = new Entry(key, count, error);
        if (!read.isEmpty() && ORDER.compare(read.get(read.size() - 1), e) >= 0) {
          throw bad(where + ": out of order (entries go by count descending, then by key)");
        }
        if (sketch.index.containsKey(key)) {
          throw bad(where + ": the key appears twice");
        }
        sum += count; // no overflow: each count is below 2^53, at most 10,000 of them
        if (sum > total) {
          throw bad("the counts add up to more than the total " + total);
        }
        read.add(e);
        sketch.index.put(key, null);
      }
      if (pos != s.length()) {
        throw bad("there is text after the last entry");
      }
      if (entries < k) {
        if (sum != total) {
          throw bad("the counts add up to " + sum + ", not the total " + total + ", in a sketch that is not full");
        }
        for (int i = 0; i < read.size(); i++) {
          if (read.get(i).error != 0) {
            throw bad("entry " + (i + 1) + " of " + entries + ": an error in a sketch that is not full");
          }
        }
      } else {
        long floor = read.get(read.size() - 1).count;
        for (int i = 0; i < read.size(); i++) {
          if (read.get(i).error > floor) {
            throw bad("entry " + (i + 1) + " of " + entries + ": the error " + read.get(i).error
                + " exceeds the smallest count " + floor);
          }
        }
      }
      sketch.index.clear();
      sketch.total = total;
      for (int i = 0; i < read.size(); i++) {
        Entry e = read.get(read.size() - 1 - i);
        Node node = new Node(e.key, e.count, e.error);
        node.pos = i;
        sketch.heap[i] = node;
        sketch.index.put(e.key, node);
      }
      sketch.size = read.size();
      return sketch;
    }

    /** A decimal of at most max, without sign or leading zero, followed by {@code end}. */
    private long number(String what, char end, long max) {
      int start = pos;
      long value = 0;
      while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
        value = value * 10 + (s.charAt(pos) - '0');
        pos++;
        if (value > max) {
          throw bad(what + " is more than " + max);
        }
      }
      if (pos == start) {
        throw bad(pos >= s.length() ? "it ends before " + what : what + " is not a number");
      }
      if (s.charAt(start) == '0' && pos - start > 1) {
        throw bad(what + " has a leading zero");
      }
      expect(end, pos >= s.length() ? "it ends after " + what : what + " is not followed by "
          + (end == ' ' ? "a space" : "a line end"));
      return value;
    }

    /** A key of exactly {@code bytes} bytes of UTF-8, whole characters only. */
    private String key(String where, int bytes) {
      int start = pos;
      int seen = 0;
      while (seen < bytes) {
        if (pos >= s.length()) {
          throw bad(where + ": it ends inside the key");
        }
        char c = s.charAt(pos);
        if (Character.isHighSurrogate(c)) {
          if (pos + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(pos + 1))) {
            throw bad(where + ": the key is not valid Unicode");
          }
          seen += 4;
          pos += 2;
        } else if (Character.isLowSurrogate(c)) {
          throw bad(where + ": the key is not valid Unicode");
        } else {
          seen += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
          pos++;
        }
      }
      if (seen != bytes) {
        throw bad(where + ": the key's length falls inside a character");
      }
      return s.substring(start, pos);
    }

    private void expect(char c, String otherwise) {
      if (pos >= s.length() || s.charAt(pos) != c) {
        throw bad(otherwise);
      }
      pos++;
    }

    private static IllegalArgumentException bad(String problem) {
      return new IllegalArgumentException("not a sketch: " + problem);
    }
  }
}
