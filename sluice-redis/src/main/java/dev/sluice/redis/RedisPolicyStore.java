package dev.sluice.redis;

import dev.sluice.policy.PolicyFullException;
import dev.sluice.StoreException;
import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import io.lettuce.core.ScriptOutputType;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Policy records in Redis, every key under the hash tag {@code {policies}} (one Cluster shard):
 * per kind a hash of the records and a lex-ordered zset for pages, a version counter, and a
 * change log holding the last {@value #LOG_SIZE} records changed. Each call is one run of {@code
 * records.lua}, which changes a record and logs it together, on the server's clock. See {@code
 * docs/redis-internals.md}, "Policies".
 *
 * <p>Expiry: a record whose expiry has passed on the server's clock is absent for every call;
 * each call also removes up to 100 such records, each a change like any other, so {@link
 * #changesSince} reports it removed. A reader knows a record's expiry from the record itself and
 * should drop it at that time without waiting for the removal.
 */
final class RedisPolicyStore implements PolicyRecords, DenialSketches, Membership {
  /** Records of one kind the store keeps at most. */
  static final int MAX_RECORDS = 100_000;
  /** Records whose last change the log holds. */
  static final int LOG_SIZE = 10_000;
  /** Changes one {@link #changesSince} call returns at most. */
  static final int MAX_CHANGES = 1_000;
  /** A record's key (for lists: the entry), in UTF-8 bytes. */
  static final int MAX_KEY_BYTES = 4096;
  /** A denial sketch as sent, in characters, and its keys. */
  static final int MAX_SKETCH_CHARS = 1 << 20;
  static final int MAX_SKETCH_KEYS = 10_000;
  /** Minutes of denial sketches kept, and read at most by one call. */
  static final int DENIAL_MINUTES = 61;
  /** The end of the year 9999: far below 2^53, which the script's numbers hold exactly. */
  static final long MAX_EXPIRY_MILLIS = 253_402_300_799_999L;
  /** The value of the record a limiter writes for a ban the decisions started (PolicyCache.recordBan). */
  private static final String AUTOMATIC = "automatic";

  private static final Pattern RULE = Pattern.compile("[A-Za-z0-9_.:/-]{1,128}");
  private static final Pattern SKETCH_HEADER = Pattern.compile("sketch/1 (\\d{1,9}) (\\d{1,18}) (\\d{1,9})");
  private static final ResourceScript SCRIPT = new ResourceScript("records.lua");
  private static final ResourceScript SKETCHES = new ResourceScript("sketches.lua");
  private static final ResourceScript INSTANCES = new ResourceScript("instances.lua");
  /** The longest instance id: a heartbeat is one member of a sorted set. */
  static final int MAX_INSTANCE_BYTES = 256;

  private final Link link;
  private final StateSiblings siblings;
  private final String tag;
  private final byte[][] recordKeys;
  private final byte[] keep;
  private final int changesPerCall;
  private final String maxRecords;

  RedisPolicyStore(Link link, String prefix, StateSiblings siblings) {
    this(link, prefix, siblings, LOG_SIZE, MAX_CHANGES, MAX_RECORDS);
  }

  /** With a smaller log, reply or bound, for tests. */
  RedisPolicyStore(Link link, String prefix, StateSiblings siblings, int logSize, int changesPerCall,
      int maxRecords) {
    this.link = link;
    this.siblings = siblings;
    this.tag = prefix + "{policies}:";
    List<String> names = new ArrayList<>(List.of("version", "floor", "log", "expiry"));
    for (PolicyKind k : PolicyKind.values()) {
      names.add(kind(k));
      names.add(kind(k) + ":order");
    }
    this.recordKeys = names.stream().map(n -> bytes(tag + n)).toArray(byte[][]::new);
    this.keep = bytes(Integer.toString(logSize));
    this.changesPerCall = changesPerCall;
    this.maxRecords = Integer.toString(maxRecords);
  }

  /** Every Redis key of the records, their version and log (not the denial sketches'). */
  List<String> recordKeyNames() {
    return Arrays.stream(recordKeys).map(b -> new String(b, StandardCharsets.UTF_8)).toList();
  }

  /** The Redis key of a rule's denial sketch for one minute. */
  String denialKey(String rule, long minute) {
    return tag + "denials:" + rule + ":" + minute;
  }

  @Override
  public CompletionStage<Long> put(PolicyRecord record) {
    try {
      Objects.requireNonNull(record, "record");
      String field = field(record.rule(), record.key());
      checkText(record.value(), "policy value");
      if (record.expiresAtMillis() < 0 || record.expiresAtMillis() > MAX_EXPIRY_MILLIS) {
        throw new IllegalArgumentException("policy expiry must be between 0 (never) and " + MAX_EXPIRY_MILLIS
            + " (the end of the year 9999) epoch milliseconds, was " + record.expiresAtMillis());
      }
      // The ban in decisions first: once the record is visible, decisions ban too. Not for the
      // record of an automatic ban: the decisions started that ban themselves, and the record,
      // written after a limiter learned it, may arrive once it has ended and a newer ban or a new
      // count of denials has begun, which rewriting the ban key would take away.
      CompletionStage<Void> first = record.kind() == PolicyKind.BAN && !AUTOMATIC.equals(record.value())
          ? siblings.ban(record.rule(), record.key(), record.expiresAtMillis())
          : CompletableFuture.completedFuture(null);
      return first.thenCompose(v -> this.<Long>records(ScriptOutputType.INTEGER, "put", kind(record.kind()), field,
          record.value(), Long.toString(record.expiresAtMillis()), maxRecords))
          .handle(RedisPolicyStore::result);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Boolean> remove(PolicyKind kind, String rule, String key) {
    try {
      Objects.requireNonNull(kind, "kind");
      String field = field(rule, key);
      CompletionStage<Void> first = kind == PolicyKind.BAN
          // Lifted whether or not a record exists (an automatic ban may have none yet).
          ? siblings.unban(rule, key).thenApply(x -> (Void) null)
          : CompletableFuture.completedFuture(null);
      return first.thenCompose(v -> this.<List<Object>>records(ScriptOutputType.MULTI, "remove", kind(kind), field))
          .handle(RedisPolicyStore::result)
          .thenApply(reply -> ((Long) reply.get(0)) == 1L);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Optional<PolicyRecord>> get(PolicyKind kind, String rule, String key) {
    try {
      Objects.requireNonNull(kind, "kind");
      String field = field(rule, key);
      return this.<List<Object>>records(ScriptOutputType.MULTI, "get", kind(kind), field)
          .handle(RedisPolicyStore::result)
          .thenApply(read(reply -> reply.isEmpty()
              ? Optional.empty()
              : Optional.of(new PolicyRecord(kind, rule, key, text(reply.get(1)), (Long) reply.get(0)))));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * One ZRANGEBYLEX from after the cursor (exclusive) or the rule's first field ({@code "<rule> "})
   * to before {@code "<rule>!"}: {@code '!'} follows the space, and rule names hold neither.
   */
  @Override
  public CompletionStage<List<PolicyRecord>> page(PolicyKind kind, String rule, String after, int count) {
    try {
      Objects.requireNonNull(kind, "kind");
      if (count < 1 || count > MAX_PAGE) {
        throw new IllegalArgumentException("page count must be between 1 and " + MAX_PAGE + ", was " + count);
      }
      String min;
      String max;
      if (rule == null) {
        min = after == null ? "-" : "(" + after;
        max = "+";
      } else {
        checkRule(rule);
        String first = rule + " ";
        boolean afterInside = after != null
            && Arrays.compareUnsigned(bytes(after), bytes(first)) >= 0;
        min = afterInside ? "(" + after : "[" + first;
        max = "(" + rule + "!";
      }
      if (after != null) {
        checkText(after, "page cursor");
      }
      return this.<List<Object>>records(ScriptOutputType.MULTI, "page", kind(kind), min, max, Integer.toString(count))
          .handle(RedisPolicyStore::result)
          .thenApply(read(reply -> {
            List<PolicyRecord> out = new ArrayList<>(reply.size() / 3);
            for (int i = 0; i < reply.size(); i += 3) {
              out.add(record(kind, text(reply.get(i)), text(reply.get(i + 2)), (Long) reply.get(i + 1)));
            }
            return out;
          }));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Long> version() {
    return this.<Long>records(ScriptOutputType.INTEGER, "version").handle(RedisPolicyStore::result);
  }

  @Override
  public CompletionStage<PolicyChanges> changesSince(long version) {
    if (version < 0) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("version must be >= 0, was " + version));
    }
    return this.<List<Object>>records(ScriptOutputType.MULTI, "changes", Long.toString(version),
        Integer.toString(changesPerCall))
        .handle(RedisPolicyStore::result)
        .thenApply(read(reply -> {
          long to = (Long) reply.get(0);
          if ((Long) reply.get(1) == 0L) {
            return new PolicyChanges(to, false, List.of(), List.of());
          }
          List<PolicyRecord> changed = new ArrayList<>();
          List<PolicyRecord> removed = new ArrayList<>();
          for (int i = 2; i < reply.size(); i += 4) {
            PolicyKind kind = PolicyKind.valueOf(text(reply.get(i)).toUpperCase(Locale.ROOT));
            long expiry = (Long) reply.get(i + 2);
            if (expiry < 0) {
              removed.add(record(kind, text(reply.get(i + 1)), "", 0));
            } else {
              changed.add(record(kind, text(reply.get(i + 1)), text(reply.get(i + 3)), expiry));
            }
          }
          return new PolicyChanges(to, true, changed, removed);
        }));
  }

  @Override
  public CompletionStage<List<String>> audit(String rule, String key) {
    try {
      field(rule, key);
      return siblings.audit(rule, key).handle(RedisPolicyStore::result);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Merges the sketch into the minute's in the script (Space-Saving merge, see {@code
   * sketches.lua}); the minute's sketch lives {@value #DENIAL_MINUTES} minutes after its last merge.
   */
  @Override
  public CompletionStage<Void> addDenials(String rule, long minute, String sketch) {
    try {
      checkRule(rule);
      if (minute < 0) {
        throw new IllegalArgumentException("minute must be >= 0, was " + minute);
      }
      checkSketch(sketch);
      byte[][] keys = {bytes(denialKey(rule, minute))};
      byte[][] args = {bytes("adddenials"), bytes(sketch),
          bytes(Long.toString(Duration.ofMinutes(DENIAL_MINUTES).toMillis()))};
      return SKETCHES.<Long>run(link, ScriptOutputType.INTEGER, keys, args)
          .handle(RedisPolicyStore::result)
          .thenApply(n -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<List<String>> denials(String rule, long from, long to) {
    try {
      checkRule(rule);
      if (from < 0) {
        throw new IllegalArgumentException("minute must be >= 0, was " + from);
      }
      if (to < from) {
        return CompletableFuture.completedFuture(List.of());
      }
      if (to - from >= DENIAL_MINUTES) {
        throw new IllegalArgumentException("denials are kept " + DENIAL_MINUTES + " minutes: ask for at most "
            + DENIAL_MINUTES + " minutes at a time, was " + (to - from + 1));
      }
      byte[][] keys = new byte[(int) (to - from + 1)][];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = bytes(denialKey(rule, from + i));
      }
      return SKETCHES.<List<Object>>run(link, ScriptOutputType.MULTI, keys, new byte[][] {bytes("denials")})
          .handle(RedisPolicyStore::result)
          .thenApply(read(reply -> {
            List<String> out = new ArrayList<>();
            for (Object o : reply) {
              if (o != null) {
                out.add(text(o));
              }
            }
            return out;
          }));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Records the heartbeat in a sorted set under the policies' hash tag and counts the instances
   * heard within {@code ttlMillis}, on the server's clock ({@code instances.lua}).
   */
  @Override
  public CompletionStage<Integer> heartbeat(String instance, long ttlMillis) {
    try {
      checkInstance(instance);
      if (ttlMillis < 1) {
        throw new IllegalArgumentException("ttl must be >= 1 ms, was " + ttlMillis);
      }
      byte[][] args = {bytes("beat"), bytes(instance), bytes(Long.toString(ttlMillis))};
      return INSTANCES.<Long>run(link, ScriptOutputType.INTEGER, new byte[][] {bytes(tag + "instances")}, args)
          .handle(RedisPolicyStore::result)
          .thenApply(Long::intValue);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> leave(String instance) {
    try {
      checkInstance(instance);
      byte[][] args = {bytes("leave"), bytes(instance)};
      return INSTANCES.<Long>run(link, ScriptOutputType.INTEGER, new byte[][] {bytes(tag + "instances")}, args)
          .handle(RedisPolicyStore::result)
          .thenApply(n -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Reads the set, writing nothing ({@code instances.lua}, {@code list}). */
  @Override
  public CompletionStage<Members> members(long ttlMillis, int max) {
    try {
      if (ttlMillis < 1 || max < 1) {
        throw new IllegalArgumentException("ttl and max must be >= 1, were " + ttlMillis + " and " + max);
      }
      byte[][] args = {bytes("list"), bytes(Long.toString(ttlMillis)), bytes(Integer.toString(max))};
      return INSTANCES.<List<Object>>run(link, ScriptOutputType.MULTI, new byte[][] {bytes(tag + "instances")}, args)
          .handle(RedisPolicyStore::result)
          .thenApply(read(reply -> {
            List<Member> first = new ArrayList<>(reply.size() / 2);
            for (int i = 2; i + 1 < reply.size(); i += 2) {
              first.add(new Member(text(reply.get(i)), (Long) reply.get(i + 1)));
            }
            return new Members((Long) reply.get(0), ((Long) reply.get(1)).intValue(), first);
          }));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static void checkInstance(String instance) {
    int n = bytes(instance).length;
    if (n == 0 || n > MAX_INSTANCE_BYTES) {
      throw new IllegalArgumentException("an instance id is 1 to " + MAX_INSTANCE_BYTES + " bytes, was " + n);
    }
  }

  /** One call of the script on the record keys: the operation, the log size, then {@code args}. */
  private <T> CompletableFuture<T> records(ScriptOutputType type, String op, String... args) {
    byte[][] a = new byte[args.length + 2][];
    a[0] = bytes(op);
    a[1] = keep;
    for (int i = 0; i < args.length; i++) {
      a[i + 2] = bytes(args[i]);
    }
    return SCRIPT.run(link, type, recordKeys, a);
  }

  private static PolicyRecord record(PolicyKind kind, String field, String value, long expiry) {
    int space = field.indexOf(' ');
    if (space < 0) {
      throw new MalformedReplyException("policy field without a space: " + field);
    }
    return new PolicyRecord(kind, field.substring(0, space), field.substring(space + 1), value, expiry);
  }

  private static String kind(PolicyKind kind) {
    return kind.name().toLowerCase(Locale.ROOT);
  }

  /** The hash field and log name of (rule, key): {@code "<rule> <key>"}, as {@link PolicyRecord#cursor()}. */
  private static String field(String rule, String key) {
    checkRule(rule);
    Objects.requireNonNull(key, "key");
    if (key.isEmpty()) {
      throw new IllegalArgumentException("policy key must not be empty");
    }
    checkText(key, "policy key");
    int n = bytes(key).length;
    if (n > MAX_KEY_BYTES) {
      throw new IllegalArgumentException("policy key is " + n + " bytes long, more than " + MAX_KEY_BYTES);
    }
    return rule + " " + key;
  }

  private static void checkRule(String rule) {
    Objects.requireNonNull(rule, "rule");
    if (!RULE.matcher(rule).matches()) {
      throw new IllegalArgumentException(
          "rule name must be 1-128 characters of letters, digits and _ . : / -, was '" + rule + "'");
    }
  }

  /** Refuses text that is not valid Unicode (a lone surrogate would be stored as '?'). */
  private static void checkText(String s, String what) {
    try {
      StandardCharsets.UTF_8.newEncoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .encode(CharBuffer.wrap(s));
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(what + " is not valid Unicode (it holds a lone surrogate)");
    }
  }

  /**
   * The sketch's outline, so that a bad one fails here with a clear message: its size, its header
   * {@code "sketch/1 k total entries"} and no more entries than k (the script checks each line).
   */
  private static void checkSketch(String sketch) {
    Objects.requireNonNull(sketch, "sketch");
    if (sketch.length() > MAX_SKETCH_CHARS) {
      throw new IllegalArgumentException("denial sketch is longer than " + MAX_SKETCH_CHARS + " characters");
    }
    int end = sketch.indexOf('\n');
    String header = end < 0 ? sketch : sketch.substring(0, end);
    var m = SKETCH_HEADER.matcher(header);
    if (!m.matches()) {
      throw new IllegalArgumentException("denial sketch must start with a line 'sketch/1 k total entries', was '"
          + header.substring(0, Math.min(header.length(), 40)) + "'");
    }
    long k = Long.parseLong(m.group(1));
    if (k < 1 || k > MAX_SKETCH_KEYS) {
      throw new IllegalArgumentException("denial sketch size k must be between 1 and " + MAX_SKETCH_KEYS + ", was " + k);
    }
    long entries = Long.parseLong(m.group(3));
    if (entries > k) {
      throw new IllegalArgumentException("denial sketch has " + entries + " keys, more than its size k = " + k);
    }
    checkText(sketch, "denial sketch");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(Object reply) {
    if (!(reply instanceof byte[] b)) {
      throw new MalformedReplyException("expected a string in a policy reply, got " + reply);
    }
    return StandardCharsets.UTF_8.decode(ByteBuffer.wrap(b)).toString();
  }

  /** Reading a reply: one of an unexpected shape fails as a {@link StoreException}. */
  private static <T, R> Function<T, R> read(Function<T, R> reader) {
    return reply -> {
      try {
        return reader.apply(reply);
      } catch (MalformedReplyException | ClassCastException | IndexOutOfBoundsException e) {
        throw new CompletionException(new StoreException(
            "the Redis store's reply to a policy command could not be read: " + e.getMessage(), e));
      }
    };
  }

  /** For a stage's {@code handle}: the value, or the failure as the limiter should see it. */
  private static <T> T result(T value, Throwable error) {
    if (error == null) {
      return value;
    }
    throw StoreErrors.scriptFailure(error, "policy command",
        Map.of("POLICYFULL", PolicyFullException::new, "SKETCH", IllegalArgumentException::new));
  }
}
