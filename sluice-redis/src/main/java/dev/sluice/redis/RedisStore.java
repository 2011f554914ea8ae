package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.spi.Batch;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Grants;
import dev.sluice.spi.LeaseBoard;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * State in Redis or Valkey — standalone, Sentinel or Cluster — shared by every application
 * instance that connects to it.
 *
 * <p>Each decision is one script evaluation (EVALSHA) on the server, which reads the server's
 * own clock ({@code TIME}), so instances with skewed clocks share one limit exactly. All windows
 * of a (rule, key) live in one Redis string ({@code sluice:{rule|key}}); every key written has a
 * TTL no shorter than the rule's longest window. On a Cluster, a request whose items live in
 * different hash slots reserves on each slot's shard and refunds the reservations if any item is
 * denied: a concurrent request may briefly see a reservation (a false deny), never an
 * over-admission. See {@code docs/redis.md}.
 *
 * <pre>{@code
 * RedisStore store = RedisStore.connect("redis-sentinel://h1:26379,h2:26379#mymaster");
 * RateLimiter limiter = Sluice.builder().rules(rules).store(store).build();
 * }</pre>
 *
 * <p>A store starts its own Lettuce client and threads, unless given the application's
 * resources ({@link Builder#clientResources}) or client ({@link Builder#client(RedisClient)}).
 */
public final class RedisStore implements Store {
  private static final byte[] DECIDE = {'d'};
  /** Modes {@code d} and {@code r} with the policy hooks, for requests with items of rules that ban or audit (policies.lua). */
  private static final byte[] DECIDE_POLICIES = {'p'};
  private static final byte[] RESERVE_POLICIES = {'q'};
  private static final byte[] COUNT_DENIALS = {'c'};
  private static final byte[] STORE_CLOCK = {};
  /** The one item of a request of one. */
  private static final int[] FIRST = {0};

  private final Endpoint endpoint;
  private final Link link;
  private final Coalescer coalescer;
  private final String prefix;
  private final KeyNames names;
  private final RedisLeaseBoard board;
  private final StateSiblings siblings;
  private final long slackMillis;
  private final Map<Rule, Integer> fingerprints = new ConcurrentHashMap<>();
  /** Most item shapes kept: one per rule and set of windows in use. */
  static final int MAX_SHAPES = 10_000;
  private final Map<ShapeKey, ItemShape> shapes = new ConcurrentHashMap<>();
  /** The latest time this store has decided at, on the server's clock and on explicit times. */
  private final AtomicLong latestStoreTime = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong latestExplicitTime = new AtomicLong(Long.MIN_VALUE);
  /** Per rule name added back after a removal: state last used before then is not its state. */
  private final Map<String, Fresh> freshAfter = new ConcurrentHashMap<>();
  private final RedisPolicyStore policies;
  private final RedisGrants grants = new RedisGrants(this);

  /** {@code own}: the key's windows under its rule's definition when {@code windows} are others, else null. */
  private record ShapeKey(Rule rule, List<Window> windows, List<Window> own) {}

  /** Times (µs) before which a rule's state is stale, on the server's clock and on explicit times. */
  private record Fresh(byte[] store, byte[] explicit) {}

  private static final byte[] NEVER = ItemShape.NO_FRESH_BOUND;

  private RedisStore(Builder b, Endpoint endpoint, Link link) {
    this.endpoint = endpoint;
    this.link = link;
    this.coalescer = new Coalescer(link, b.callsInFlight, b.minBatch, b.commandTimeout.toNanos());
    this.prefix = b.prefix;
    this.names = new KeyNames(b.prefix);
    this.slackMillis = b.ttlSlack.toMillis();
    this.siblings = new StateSiblings(link, names);
    this.policies = new RedisPolicyStore(link, b.prefix, siblings, RedisPolicyStore.LOG_SIZE,
        RedisPolicyStore.MAX_CHANGES, b.policyRecords);
    this.board = new RedisLeaseBoard(link, b.prefix);
  }

  /**
   * Connects with default settings.
   *
   * @throws IllegalArgumentException if {@code uri} is not a supported Redis URI
   * @throws io.lettuce.core.RedisConnectionException if no server can be reached
   */
  public static RedisStore connect(String uri) {
    return builder(uri).build();
  }

  /** @see Builder */
  public static Builder builder(String uri) {
    return new Builder(uri);
  }

  /** The Redis key holding the state of {@code key} under the rule named {@code rule}. */
  public String keyName(String rule, String key) {
    return new String(names.name(rule, key), StandardCharsets.UTF_8);
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    List<ResolvedItem> items = batch.items();
    byte[] time;
    byte[][] keys = new byte[items.size()][];
    ItemShape[] shape = new ItemShape[items.size()];
    try {
      time = time(batch);
      for (int i = 0; i < items.size(); i++) {
        ResolvedItem it = items.get(i);
        keys[i] = names.name(it.rule().name(), it.key());
        shape[i] = shape(it);
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    // An item of a rule that bans or audits brings the transaction's policy hooks: its sibling
    // keys and audit values go with the call (modes p and q).
    boolean policy = PolicyArguments.anyApplies(items);
    if (!link.clustered() || sameSlot(keys)) {
      // One server holds every key, so one script decides them all.
      int[] all = new int[items.size()];
      for (int i = 0; i < all.length; i++) {
        all[i] = i;
      }
      int longs = Replies.longs(items);
      CompletableFuture<Replies.Report> call;
      if (policy) {
        byte[][] policyKeys;
        byte[][] policyArgs;
        try {
          policyKeys = PolicyArguments.keys(items, keys, all, true);
          policyArgs = PolicyArguments.args(args(DECIDE_POLICIES, time, items, shape, all, null), items, all, true);
        } catch (RuntimeException e) {
          return CompletableFuture.failedFuture(e);
        }
        call = link.clustered()
            ? Coalescer.call(link, policyKeys, policyArgs, longs)
            // Batched with others as any request is: the batch (mode B) lays the keys out anew.
            : coalescer.submitWithPolicies(policyKeys, items.size(), policyArgs, time, longs);
      } else {
        byte[][] args = args(DECIDE, time, items, shape, all, null);
        call = link.clustered()
            // A Cluster's calls go to the shard of their slot, one by one.
            ? Coalescer.call(link, keys, args, longs)
            // Standalone and Sentinel: one server, whose calls may go together (see Coalescer).
            : coalescer.submit(keys, args, time, longs);
      }
      return decoded(call, items, time);
    }
    CompletableFuture<List<ItemDecision>> decided;
    if (!policy) {
      decided = new ShardedDecision(link, items, keys, time,
          (mode, t, which, undo) -> args(mode, t, items, shape, which, undo), t -> decidedAt(t, time)).run();
    } else {
      // Reservations check bans; whether an item counts a denial toward its ban depends on every
      // shard's answer, and a refund cannot take back an audit value: both are done after.
      decided = new ShardedDecision(link, items, keys, time,
          (mode, t, which, undo) -> undo == null
              ? PolicyArguments.args(args(RESERVE_POLICIES, t, items, shape, which, null), items, which, false)
              : args(mode, t, items, shape, which, undo),
          t -> decidedAt(t, time), which -> PolicyArguments.keys(items, keys, which, false)).run()
          .thenCompose(d -> ShardedBanCounts.count(link, items, keys, d,
              which -> args(COUNT_DENIALS, time, items, shape, which, null)))
          .thenCompose(d -> PolicyArguments.recordAudits(link, items, keys, d));
    }
    return decided.handle((d, err) -> {
      if (err != null) {
        throw StoreErrors.failure(err);
      }
      return d;
    });
  }

  /**
   * One script call, as {@link #decide} makes for a batch of {@code item} alone on the server's
   * clock, whose reply is read only as far as the item's reason: no window states, no decision.
   */
  @Override
  public CompletionStage<Boolean> tryAcquireAsync(ResolvedItem item) {
    if (PolicyArguments.applies(item)) {
      return decide(new Batch(List.of(item), Request.STORE_CLOCK))
          .thenApply(d -> d.get(0).allowed() || d.get(0).shadow());
    }
    List<ResolvedItem> items = List.of(item);
    byte[][] keys;
    byte[][] args;
    try {
      keys = new byte[][] {names.name(item.rule().name(), item.key())};
      args = args(DECIDE, STORE_CLOCK, items, new ItemShape[] {shape(item)}, FIRST, null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    int longs = Replies.longs(items);
    CompletableFuture<Replies.Report> call = link.clustered()
        ? Coalescer.call(link, keys, args, longs)
        : coalescer.submit(keys, args, STORE_CLOCK, longs);
    return call.handle((report, err) -> {
      if (err != null) {
        throw StoreErrors.failure(err);
      }
      decidedAt(report.time(), STORE_CLOCK);
      try {
        return Replies.fits(report) || item.rule().shadow();
      } catch (RuntimeException e) {
        throw StoreErrors.failure(e);
      }
    });
  }

  /**
   * Refuses a rule with a window (its own or an override's) or a {@code max_wait} beyond what the
   * script's arithmetic represents exactly, or a {@code sliding_log} window above {@value
   * ScriptAlgorithm#LOG_MAX_LIMIT} units (see {@code docs/redis.md}, "Limits,
   * refused when the rule is given to the store").
   */
  @Override
  public void check(Rule rule) {
    ItemShape.check(rule);
  }

  /** Records the time a script decided at; {@code time} is the explicit time sent, or empty. */
  private void decidedAt(long t, byte[] time) {
    (time.length == 0 ? latestStoreTime : latestExplicitTime).accumulateAndGet(t, Math::max);
  }

  private static boolean sameSlot(byte[][] keys) {
    int slot = Link.slot(keys[0]);
    for (int i = 1; i < keys.length; i++) {
      if (Link.slot(keys[i]) != slot) {
        return false;
      }
    }
    return true;
  }

  private static byte[] time(Batch batch) {
    return batch.hasExplicitTime() ? explicitTime(batch.timeMicros()) : STORE_CLOCK;
  }

  /** A script's explicit time argument: {@code t} µs since the epoch, within what the script represents. */
  static byte[] explicitTime(long t) {
    if (t <= -ItemShape.MAX_TIME || t >= ItemShape.MAX_TIME) {
      throw new IllegalArgumentException("explicit time " + t + " µs is outside what the Redis store supports (±2^52 µs from the epoch)");
    }
    return ItemShape.num(t);
  }

  private ItemShape shape(ResolvedItem it) {
    // A key's own windows under the definition (the rule's, or a static override's) are written
    // as they always were; other windows (a live limit) with what converts the key's state.
    Rule rule = it.rule();
    List<Window> own = rule.overrides().isEmpty() ? rule.windows() : rule.windowsFor(it.key());
    ShapeKey k = new ShapeKey(rule, it.windows(), it.windows() == own || it.windows().equals(own) ? null : own);
    ItemShape s = shapes.get(k);
    if (s == null) {
      int fp = fingerprints.computeIfAbsent(it.rule(), ItemShape::fingerprint);
      s = ItemShape.of(it.rule(), it.windows(), k.own(), fp, slackMillis);
      // Live limits may give many keys windows of their own: beyond the bound, shapes are made
      // per call instead of kept.
      if (shapes.size() < MAX_SHAPES) {
        shapes.put(k, s);
      }
    }
    return s;
  }

  /**
   * Script arguments for the items at {@code which}: the mode followed by the explicit time's
   * digits, if any (one argument: each costs the server about a tenth of a decision), then one
   * argument per item; for a refund each item is followed by its undo record.
   */
  private byte[][] args(byte[] mode, byte[] time, List<ResolvedItem> items, ItemShape[] shape, int[] which,
      List<List<?>> undo) {
    byte[][] a = new byte[1 + which.length * (undo == null ? 1 : 2)][];
    if (time.length == 0) {
      a[0] = mode;
    } else {
      a[0] = Arrays.copyOf(mode, mode.length + time.length);
      System.arraycopy(time, 0, a[0], mode.length, time.length);
    }
    int k = 1;
    for (int n = 0; n < which.length; n++) {
      int i = which[n];
      ResolvedItem item = items.get(i);
      Fresh f = freshAfter.isEmpty() ? null : freshAfter.get(item.rule().name());
      a[k++] = shape[i].encode(item.cost(), f == null ? NEVER : time.length == 0 ? f.store : f.explicit);
      if (undo != null) {
        a[k++] = ItemShape.jsonArray(undo.get(n));
      }
    }
    return a;
  }

  /**
   * Live limits, bans and list entries under {@code <prefix>{policies}:…}, shared by every
   * instance on this Redis; see {@code docs/redis-internals.md}, "Policies".
   */
  RedisPolicyStore policies() {
    return policies;
  }

  @Override
  public Optional<PolicyRecords> records() {
    return Optional.of(policies);
  }

  @Override
  public Optional<DenialSketches> sketches() {
    return Optional.of(policies);
  }

  @Override
  public Optional<Grants> grants() {
    return Optional.of(grants);
  }

  /**
   * The key, and the script arguments after {@code mode} and {@code time}, of {@code item} alone
   * (its undo record following it if not null): for {@link RedisGrants}.
   */
  byte[] keyOf(ResolvedItem item) {
    return names.name(item.rule().name(), item.key());
  }

  byte[][] argsOf(byte[] mode, byte[] time, ResolvedItem item, List<?> undo) {
    return args(mode, time, List.of(item), new ItemShape[] {shape(item)}, FIRST, undo == null ? null : List.of(undo));
  }

  /** Records the time a script decided at, as {@link #decide} does. */
  void decided(long t, byte[] time) {
    decidedAt(t, time);
  }

  @Override
  public Optional<Membership> membership() {
    return Optional.of(policies);
  }

  /**
   * The leader record, usage reports and sizes of leased mode under {@code <prefix>{leases}:…};
   * see {@code docs/redis-internals.md}, "Leases".
   */
  @Override
  public Optional<LeaseBoard> leaseBoard() {
    return Optional.of(board);
  }

  /** The decisions of a one-call reply (or its failure, as the limiter tells outages from errors). */
  private CompletionStage<List<ItemDecision>> decoded(CompletionStage<Replies.Report> call, List<ResolvedItem> items,
      byte[] time) {
    return call.handle((report, err) -> {
      if (err != null) {
        throw StoreErrors.failure(err);
      }
      decidedAt(report.time(), time);
      try {
        return Replies.decode(report, items);
      } catch (RuntimeException e) {
        throw StoreErrors.failure(e);
      }
    });
  }

  /**
   * Bans {@code key} under {@code rule} until {@code untilMillis} (ms since the epoch): sets
   * {@code <state key>:ban}, expiring then, and forgets its counted denials. Decisions of a rule
   * with a ban policy answer banned until then. An end not in the future lifts any ban.
   */
  CompletionStage<Void> banKey(Rule rule, String key, long untilMillis) {
    return siblings.ban(rule.name(), key, untilMillis);
  }


  /** Lifts a ban of {@code key} under the rule named {@code rule} and forgets its counted denials; whether there was any. */
  CompletionStage<Boolean> unbanKey(String rule, String key) {
    return siblings.unban(rule, key);
  }


  /** The last distinct audited values that consumed {@code key} under the rule named {@code rule}, newest first. */
  CompletionStage<List<String>> audit(String rule, String key) {
    return siblings.audit(rule, key);
  }


  /** The store's connection, for tests. */
  Link link() {
    return link;
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    try {
      return link.del(names.name(rule, key)).thenApply(n -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Nothing is deleted. Every value records the fingerprint of the rule definition that wrote it,
   * and a value written under another definition is treated as absent (and overwritten on the next
   * decision), so a changed rule starts fresh while unchanged rules keep their state. A rule that
   * comes back after a removal starts fresh too: values whose latest time is not after the latest
   * time this store had decided at are not read for it.
   */
  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    shapes.clear();
    fingerprints.clear();
    freshAfter.keySet().removeIf(name -> after.get(name) == null);
    for (Rule r : after.rules()) {
      // New or changed: values written before now belong to another definition, even one that
      // has the same fingerprint (a rule changed and changed back must not find its old counts).
      Rule prev = before.get(r.name());
      if (prev == null || !prev.equals(r)) {
        freshAfter.put(r.name(), new Fresh(after(latestStoreTime), after(latestExplicitTime)));
      }
    }
  }

  private static byte[] after(AtomicLong latest) {
    long t = latest.get();
    return t == Long.MIN_VALUE ? NEVER : ItemShape.num(t + 1);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return link.ping().handle((pong, e) -> e == null && "PONG".equals(pong));
  }

  /** Topology, hosts, user and prefix; never a password. */
  @Override
  public String describe() {
    return "redis " + endpoint.description() + " prefix=" + prefix;
  }

  @Override
  public String toString() {
    return describe();
  }

  @Override
  public void close() {
    coalescer.close();
    link.close();
  }

  /** Builds a {@link RedisStore}. */
  public static final class Builder {
    private final String uri;
    private String prefix = "sluice:";
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration commandTimeout = Duration.ofSeconds(1);
    private Duration ttlSlack = Duration.ofSeconds(1);
    private int requestQueueSize = 100_000;
    private boolean requestQueueSizeSet;
    private int callsInFlight = 8;
    private int minBatch = 8;
    private ClientResources clientResources;
    private RedisClient client;
    private RedisClusterClient clusterClient;
    private int policyRecords = RedisPolicyStore.MAX_RECORDS;

    private Builder(String uri) {
      this.uri = Objects.requireNonNull(uri, "uri");
    }

    /** Policy records of one kind the store keeps at most; smaller than the default in tests only. */
    Builder policyRecords(int n) {
      this.policyRecords = n;
      return this;
    }

    /**
     * Prepended to every key name; default {@code sluice:}.
     *
     * @throws IllegalArgumentException if it contains {@code {} or {@code }}
     */
    public Builder prefix(String p) {
      Objects.requireNonNull(p, "prefix");
      new KeyNames(p);
      this.prefix = p;
      return this;
    }

    /** @throws IllegalArgumentException unless positive */
    public Builder connectTimeout(Duration d) {
      this.connectTimeout = positive(d, "connectTimeout");
      return this;
    }

    /** How long a command may take before it fails; default 1 s. @throws IllegalArgumentException unless positive */
    public Builder commandTimeout(Duration d) {
      this.commandTimeout = positive(d, "commandTimeout");
      return this;
    }

    /**
     * Added to every TTL beyond the time the state matters; default 1 s. Covers clock steps
     * between a master and its replicas, and explicit times that move slower than real time.
     *
     * @throws IllegalArgumentException if negative
     */
    public Builder ttlSlack(Duration d) {
      Objects.requireNonNull(d, "ttlSlack");
      if (d.isNegative()) {
        throw new IllegalArgumentException("ttlSlack must be >= 0, was " + d);
      }
      this.ttlSlack = d;
      return this;
    }

    /**
     * Commands in flight or waiting for a reconnect beyond which new ones fail at once; default
     * 100,000.
     *
     * @throws IllegalArgumentException unless positive
     */
    public Builder requestQueueSize(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("requestQueueSize must be >= 1, was " + n);
      }
      this.requestQueueSize = n;
      this.requestQueueSizeSet = true;
      return this;
    }

    /**
     * Runs the store's client on the application's Lettuce resources — event-loop and
     * computation threads, timer, event bus — instead of starting threads of its own. The store
     * still has a client and a connection of its own, with its own options, reconnection delay
     * (capped at 1 s) and merged flushes; {@link RedisStore#close} closes those and leaves {@code
     * resources} running: shut them down yourself, after the store.
     */
    public Builder clientResources(ClientResources resources) {
      this.clientResources = Objects.requireNonNull(resources, "clientResources");
      return this;
    }

    /**
     * Opens the store's connection on the application's client, to the URI's server (or the
     * master its Sentinels name, with the URI's credentials), so that the store starts no client
     * and no threads. The client's options and resources apply as they are (reconnection,
     * request queue, TLS), except the command timeout: the store's commands time out after {@link
     * #commandTimeout}, unless the client sets a fixed timeout of its own. {@link RedisStore#close}
     * closes the store's connection and leaves the client open.
     *
     * <p>{@link #build} refuses a {@code redis-cluster://} URI here (use {@link
     * #client(RedisClusterClient)}), and {@link #requestQueueSize} or {@link #clientResources}
     * beside a client: they are the client's to set.
     */
    public Builder client(RedisClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * {@link #client(RedisClient)} for a Cluster: the store's connection goes to the seeds the
     * client was created with, with their credentials; the {@code redis-cluster://} URI names the
     * Cluster in logs. For failovers to end in seconds, the client should refresh its topology on
     * redirects and failed reconnections ({@code ClusterTopologyRefreshOptions}), as the store's
     * own client does (see {@code docs/redis.md}).
     */
    public Builder client(RedisClusterClient client) {
      this.clusterClient = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Decision calls kept in flight on a standalone or Sentinel connection; default 8. A decision
     * that comes while fewer than half of them are in flight is sent at once as its own call, so
     * at low and moderate load nothing waits. Beyond that, decisions wait, and go together as one
     * call (up to 128, each decided on its own, all or nothing, as if sent alone at that moment)
     * once {@link #minBatch} of them wait or a call returns, while fewer than this many are in
     * flight. A decision never waits longer than the command timeout: it then fails unsent. 0: no
     * limit, every decision is sent at once as its own call. Cluster calls are always sent at once.
     *
     * @throws IllegalArgumentException if negative
     */
    public Builder callsInFlight(int n) {
      if (n < 0) {
        throw new IllegalArgumentException("callsInFlight must be >= 0, was " + n);
      }
      this.callsInFlight = n;
      return this;
    }

    /**
     * Decisions that, once half of {@link #callsInFlight} calls are in flight, make a call of
     * their own without waiting for one to return; default 8. 1: a decision that finds fewer than
     * {@code callsInFlight} calls in flight is always sent at once; larger values make larger
     * batches under load, at the cost of a wait of up to one round trip for some decisions.
     *
     * @throws IllegalArgumentException if below 1 or above 128 (the largest batch)
     */
    public Builder minBatch(int n) {
      if (n < 1 || n > Coalescer.MAX_REQUESTS) {
        throw new IllegalArgumentException("minBatch must be between 1 and " + Coalescer.MAX_REQUESTS + ", was " + n);
      }
      this.minBatch = n;
      return this;
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be > 0, was " + d);
      }
      return d;
    }

    /**
     * Connects.
     *
     * @throws IllegalArgumentException if the URI is not a supported Redis URI
     * @throws io.lettuce.core.RedisConnectionException if no server can be reached
     */
    public RedisStore build() {
      Endpoint endpoint = Endpoint.parse(uri);
      Link link = link(endpoint);
      DecisionScript.prepare(link, connectTimeout);
      return new RedisStore(this, endpoint, link);
    }

    private Link link(Endpoint endpoint) {
      if (client == null && clusterClient == null) {
        return Link.open(endpoint, connectTimeout, commandTimeout, requestQueueSize, clientResources);
      }
      if (client != null && clusterClient != null) {
        throw new IllegalArgumentException("the store was given two clients, a standalone one and a Cluster one; "
            + "give it one");
      }
      if (clientResources != null) {
        throw new IllegalArgumentException("the store was given a client and client resources: a client runs on "
            + "its own resources; give one or the other");
      }
      if (requestQueueSizeSet) {
        throw new IllegalArgumentException("requestQueueSize is an option of the store's own client; "
            + "with the application's client, set it on that client");
      }
      boolean cluster = endpoint.topology() == Endpoint.Topology.CLUSTER;
      if (clusterClient != null) {
        if (!cluster) {
          throw new IllegalArgumentException("a Cluster client needs a redis-cluster:// URI naming the Cluster, was "
              + endpoint.description());
        }
        return Link.onClient(clusterClient, commandTimeout);
      }
      if (cluster) {
        throw new IllegalArgumentException(endpoint.description() + " is a Cluster: give the store a Cluster client, "
            + "or no client");
      }
      return Link.onClient(client, endpoint.uris().get(0), commandTimeout);
    }
  }
}
