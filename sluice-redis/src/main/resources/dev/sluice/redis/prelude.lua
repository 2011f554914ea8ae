-- Sluice decision script: shared definitions.
--
-- The code is assembled, once, from fixed resource files in this order: prelude.lua, one file
-- per algorithm, decide.lua, and one closing line. No value is ever spliced into the text: every
-- number comes in the arguments, every key in the keys, so one text serves every request. It runs
-- in one of two ways (see "The library and the script" in docs/redis-internals.md):
--   - as a library of Redis Functions (Redis >= 7.0, Valkey >= 7.2), loaded once per server with
--     FUNCTION LOAD and called with FCALL. The top level of the text then runs once, at load:
--     the local functions, constant tables and the caches below are built once and live as long
--     as the library;
--   - as a script (EVALSHA), where Redis runs the whole text on every call: what is defined at the
--     top level is built anew each time, and the caches below last one call.
--
-- Cost. Each algorithm file only registers a factory, and decide.lua runs the factories of the
-- algorithms a request uses (once per library, or once per script call). Tables are what costs
-- most in Lua here (a table with a dozen fields costs about half a Redis command; one that grows
-- past its constructor is rehashed, which costs more than building it), so each table is made
-- once by a constructor that names every field it will hold, and what every call needs (an
-- item's decoded arguments, the report buffer) is kept for the next call when running as a
-- library. A decision that admits runs three Redis commands: TIME, one read of the key, one
-- write (SET with PX sets value and TTL at once); one that denies on the server's clock, two
-- (nothing to write). See "Script cost" in docs/redis-internals.md.
--
-- Numbers. Lua numbers are doubles, exact for integers up to 2^53. Times are microseconds since
-- the Unix epoch (about 1.8e15 today, below 2^51); the Java side rejects explicit times, periods
-- and limits that could push any sum here past 2^53, so every value below is an exact integer.
--
-- State. One Redis string per (rule, key) holds every window of that rule for that key, so a
-- rule's transaction touches one key. Each value starts with the same 12 bytes:
--   fp    uint32  fingerprint of the rule definition; a value with another fingerprint is
--                 state of a different (older or newer) definition and is treated as absent
--   last  int64   the latest time seen for this key: time never goes backwards per key
-- followed by the algorithm's fields (see each algorithm's file). Integers are little-endian.
-- A value whose latest time is before the item's `fresh` time is also treated as absent: that
-- is state from before its rule was removed and added again.

-- Whether what a call decodes or builds (item arguments, struct formats) is kept for later calls:
-- in a library, yes. The script's last line sets it to false before calling decide: a script's
-- top level runs anew on every call, so nothing would outlive the call, and keeping costs.
local keep = true

-- struct.pack, struct.unpack and redis.call, as decide.lua finds them at the start of every call:
-- each use of the global is otherwise two table lookups. (A library's top level runs at load,
-- where neither `redis.call` nor `struct` may be touched.)
local spack, sunpack, rcall = false, false, false

local HEADER = 12
local REASON_NONE, REASON_LIMIT, REASON_COST, REASON_WAIT = 0, 1, 2, 3

-- "Never": the schedule of an empty bucket. Times lie within +-2^52 us, so max(NEVER, t) = t.
local NEVER = -9007199254740992

-- Numbers given to redis.call as decimal integer strings: never in exponent notation.
local function int(x)
  return string.format('%d', x)
end

-- floor(a / b) for integers, exact even where a / b rounds to the next integer in doubles.
local function floordiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

-- One item of the request as the Java side encoded it, a JSON array: algorithm, cost, fresh
-- time (false when no state is too old), shadow (true/false), rule fingerprint, window count,
-- one algorithm-specific number, the TTL slack in milliseconds (see ttl_px), then per window
-- limit, period and the numbers the algorithm
-- derives from them: none for sliding_log (1) and fixed_window (3), the emission interval for
-- token_bucket (4) and leaky_bucket (5) in aux1, bucket width and bucket count for
-- sliding_window (2) in aux1 and aux2. One JSON argument decodes in C at about half the cost of
-- a separate argument converted by tonumber per number.
--
-- The result depends on nothing but the argument, and only gains what is derived from it once
-- made: decide.lua keeps it for later calls with the same argument (see item there). `a` is its
-- algorithm's functions (set there), `over` the windows whose limit the cost exceeds (false:
-- none), `fields` and `offsets` the sliding window's layout and `hdr` and `hfmt` the sliding
-- log's (set by their prepare), and `px` the usual TTL (set by ttl_px).
local function read_item(arg)
  local v = cjson.decode(arg)
  local alg, n = v[1], v[6]
  local aux = 0
  if alg == 2 then
    aux = 2
  elseif alg >= 4 then
    aux = 1
  end
  local limit, period = {}, {}
  local aux1, aux2
  if aux > 0 then aux1 = {} end
  if aux > 1 then aux2 = {} end
  local longest, maxlimit = 0, 0
  local cost = v[2]
  local over = false
  local p = 9
  for i = 1, n do
    local l, w = v[p], v[p + 1]
    limit[i], period[i] = l, w
    if w > longest then longest = w end
    if l > maxlimit then maxlimit = l end
    if aux1 then aux1[i] = v[p + 2] end
    if aux2 then aux2[i] = v[p + 3] end
    -- A cost larger than a window's limit can never be admitted.
    if cost > l then
      if not over then over = {} end
      over[#over + 1] = i
    end
    p = p + 2 + aux
  end
  return {
    alg = alg, cost = cost, fresh = v[3] or NEVER, shadow = v[4], fp = v[5], n = n,
    extra = v[7], slack = v[8], limit = limit, period = period, aux1 = aux1, aux2 = aux2,
    longest = longest, maxlimit = maxlimit, over = over, a = false, fields = false, offsets = false,
    px = false, hdr = false, hfmt = false,
  }
end

-- A state (what an algorithm's load returns) also carries the item's evaluation, which
-- decide.lua fills in: t the time it is decided at, fits, reason, ex[i] the retry of each
-- exceeded window (ex is false while none is), and (leaky_bucket) start. Every load names these
-- in its constructor. A state may carry `spare`, a table of false values that exceed uses as ex
-- instead of making one (a load that reuses its states from call to call provides it).

-- Records that window i cannot take the cost, and when it could (retry > 0 us, or -1: never).
local function exceed(s, i, retry, reason)
  local ex = s.ex
  if not ex then
    ex = s.spare or {}
    s.ex = ex
  end
  ex[i] = retry
  s.fits = false
  s.reason = reason
end

-- Fixed-size states (every algorithm but the log): the header and then `count` int64 fields,
-- read and written with one struct call for up to CHUNK fields. A struct call takes or returns
-- every field on the Lua stack, which holds about 8000 values, so larger states (sliding windows
-- of high precision) go in chunks.
local CHUNK = 200

-- struct formats of `count` int64s, and of a header and `count` int64s, by count (up to CHUNK):
-- building a format costs about as much as the struct call that reads it.
local INT64S, HEADER_INT64S = {}, {}

local function int64s(count)
  local f = INT64S[count]
  if not f then
    f = '<' .. string.rep('i8', count)
    if keep then INT64S[count] = f end
  end
  return f
end

local function header_int64s(count)
  local f = HEADER_INT64S[count]
  if not f then
    f = '<I4i8' .. string.rep('i8', count)
    if keep then HEADER_INT64S[count] = f end
  end
  return f
end

-- The value an algorithm's quick path (its way to decide one item before the general path builds
-- anything, see decide.lua) read for a key and left to the general path in the same request,
-- which takes it instead of reading the key again. Cleared at the start of every request, and
-- by a quick path that writes the key.
local READ_KEY, READ_VALUE = false, false

local function read_value(key)
  if key == READ_KEY then
    READ_KEY = false
    return READ_VALUE
  end
  return rcall('GET', key)
end

-- The fields and latest time, or nil when there is no current state (missing, another size,
-- another rule definition, or from before the rule was added back). The fields are f[1..count];
-- f[count + 1] may hold struct's next position, unused.
local function load_fields(key, it, count)
  local raw = read_value(key)
  if not raw or #raw ~= HEADER + 8 * count then
    return nil
  end
  local fp, last = sunpack('<I4i8', raw)
  if fp ~= it.fp or last < it.fresh then
    return nil
  end
  if count <= CHUNK then
    return {sunpack(int64s(count), raw, HEADER + 1)}, last
  end
  local f = {}
  for i = 1, count do
    f[i] = sunpack('<i8', raw, HEADER + 8 * i - 7)
  end
  return f, last
end

local function pack_fields(fp, last, f, count)
  if count <= CHUNK then
    return spack(header_int64s(count), fp, last, unpack(f, 1, count))
  end
  local parts = {spack('<I4i8', fp, last)}
  for i = 1, count do
    parts[i + 1] = spack('<i8', f[i])
  end
  return table.concat(parts)
end

-- Writes a fixed-size state. On a commit `px` (see ttl_px) is given and sets the key's TTL in the same
-- command; otherwise (only the latest time moved) the bytes are overwritten in place, which
-- keeps the TTL the last commit set.
local function store_fields(key, fp, last, f, count, px)
  local v = pack_fields(fp, last, f, count)
  if px then
    rcall('SET', key, v, 'PX', px)
  else
    rcall('SETRANGE', key, 0, v)
  end
end

-- Moves the latest time of a value forward in place (a decision that consumed nothing).
local function store_last(key, last)
  rcall('SETRANGE', key, 4, spack('<i8', last))
end

-- What an algorithm's quick path (see decide.lua) does, written out in each for speed (a Lua
-- call costs more than any of these steps). quick(keys, from, to, it, now, explicit, out, b)
-- decides keys[from..to], all items of `it`, one after the other: one request, or a batch's
-- requests that share their argument, in one call. For each key it
--   - reads the key with one GET ('' when absent), or takes SEEN_VALUE when the request before
--     it in this call was decided by a quick path on the same key (or takes it from the run that
--     read_run read with one MGET), and leaves what it read in READ_KEY and READ_VALUE, for
--     the general path should it leave the key undecided;
--   - decides at the later of now and the value's latest time, from a fresh state (as load
--     makes it) when the value is not the rule's current state (absent, another fingerprint, or
--     older than the item's fresh time), or stops, leaving the key undecided, when the decision
--     is not a simple one (a peek, for one);
--   - reports by the key's value itself, as decided (the value read, for a denial; the value
--     written, for an admission): writes one number, -1 - reason - 4 * (the value's length),
--     at the next position of the report buffer, and puts the value in REPLY after the values of
--     the requests before it (see "Reply" in decide.lua); the client works out the report's
--     numbers from the value;
--   - on a denial, records the time on explicit times (as the general path does for a decision
--     that consumes nothing); on an admission, writes the new value with its TTL (one SET with
--     PX) and clears READ_KEY; either way sets SEEN_KEY and SEEN_VALUE to the key and its value
--     as it now stands (or clears SEEN_KEY when the value was changed in place).
-- It returns the position of the key it left undecided (to + 1 when it decided them all), having
-- written nothing for that key, and the report's last position.

-- A quick path's run of keys[from..to] of item `it`, read at once: one MGET for six keys or more
-- that are not one hot key (a Redis call costs the server as much as reading five keys more in
-- one; below six keys, building MGET's reply table eats the gain), on the server's clock (explicit
-- times write each denial's time, which a value read in advance would miss) and for a cost that
-- consumes (a peek is left to the general path). The values, by position from `from`; false when
-- the quick path reads key by key. A quick path keeps apart the values it writes, since a batch
-- may decide a key again after admitting on it.
local function read_run(keys, from, to, it, explicit)
  if to - from >= 5 and keys[from] ~= keys[from + 1] and it.cost > 0 and not explicit then
    return rcall('MGET', unpack(keys, from, to))
  end
  return false
end

-- The key the last quick path of this call decided, and its value as that left it: the next
-- request on the same key (a batch on a hot key) takes it instead of reading the key again.
-- Cleared at the start of every call, and by anything else that writes (the general path, a
-- denial that records its explicit time).
local SEEN_KEY, SEEN_VALUE = false, false

-- The reply of the call being decided (decide.lua): at [1] its reports, then the values of the
-- requests reported by their state, up to [REPLIED]; concatenated at the end of the call.
local REPLY, REPLIED = {}, 0

-- A report's string: out[1..o] as little-endian int64s, up to CHUNK numbers per struct call (a
-- batch's reports are packed together, once).
local function pack_numbers(out, o)
  if o <= CHUNK then
    return spack(int64s(o), unpack(out, 1, o))
  end
  local parts = {}
  for from = 1, o, CHUNK do
    local to = math.min(o, from + CHUNK - 1)
    parts[#parts + 1] = spack(int64s(to - from + 1), unpack(out, from, to))
  end
  return table.concat(parts)
end

-- The TTL a commit sets, in milliseconds, as PX's argument: no shorter than the longest window,
-- and no shorter than the time the state still matters (`need` microseconds from now), plus a
-- slack that covers clock steps between a master and its replicas and explicit (test or replay)
-- times that move slower than real time. Most commits need no more than the longest window: that
-- TTL is made once per item argument.
local function ttl_px(it, need)
  if need <= it.longest then
    local px = it.px
    if not px then
      px = int(-floordiv(-it.longest, 1000) + it.slack)
      it.px = px
    end
    return px
  end
  return int(-floordiv(-need, 1000) + it.slack)
end

-- Factories by algorithm code; each returns the algorithm's functions (load, evaluate, commit,
-- create, touch, report, refund; optionally prepare and quick) in one table. decide.lua replaces
-- a factory by what it returned once it has run.
local ALGORITHMS = {false, false, false, false, false}
