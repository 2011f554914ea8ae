-- Sluice decision script: shared definitions.
--
-- The script is assembled, once, from fixed resource files in this order: prelude.lua, one
-- file per algorithm, decide.lua. No value is ever spliced into the text: every number comes
-- in ARGV, every key in KEYS, so one SHA serves every request.
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

local HEADER = 12
local REASON_NONE, REASON_LIMIT, REASON_COST, REASON_WAIT = 0, 1, 2, 3

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

local function ceildiv(a, b)
  return -floordiv(-a, b)
end

-- The fingerprint and latest time of a value, or nil if the value is missing or too short.
local function read_header(raw)
  if not raw or #raw < HEADER then
    return nil
  end
  return struct.unpack('<I4i8', raw)
end

local function pack_header(fp, last)
  return struct.pack('<I4i8', fp, last)
end

-- "Never": the schedule of an empty bucket. Times lie within +-2^52 us, so max(NEVER, t) = t.
local NEVER = -9007199254740992

-- One item of the request as the Java side encoded it: algorithm, cost, fresh time, shadow flag,
-- rule fingerprint, window count, one algorithm-specific number, then (limit, period, aux1,
-- aux2) per window. Returns the item and the position of the next one.
local function read_item(argv, pos)
  local it = {
    alg = tonumber(argv[pos]),
    cost = tonumber(argv[pos + 1]),
    fresh = tonumber(argv[pos + 2]),
    shadow = argv[pos + 3] == '1',
    fp = tonumber(argv[pos + 4]),
    n = tonumber(argv[pos + 5]),
    extra = tonumber(argv[pos + 6]),
    limit = {}, period = {}, aux1 = {}, aux2 = {},
    longest = 0, maxlimit = 0,
  }
  pos = pos + 7
  for i = 1, it.n do
    it.limit[i] = tonumber(argv[pos])
    it.period[i] = tonumber(argv[pos + 1])
    it.aux1[i] = tonumber(argv[pos + 2])
    it.aux2[i] = tonumber(argv[pos + 3])
    if it.period[i] > it.longest then it.longest = it.period[i] end
    if it.limit[i] > it.maxlimit then it.maxlimit = it.limit[i] end
    pos = pos + 4
  end
  return it, pos
end

-- Whether a value with this header is the item's state (see State above).
local function current_state(it, fp, last)
  return fp == it.fp and last >= it.fresh
end

-- Fixed-size states (every algorithm but the log): the header and then `count` int64 fields.
-- Returns the fields and latest time, or nil when there is no current state.
local function load_fields(key, it, count)
  local raw = redis.call('GET', key)
  if not raw or #raw ~= HEADER + 8 * count then
    return nil
  end
  local vfp, last = read_header(raw)
  if not current_state(it, vfp, last) then
    return nil
  end
  local f = {}
  local pos = HEADER + 1
  for i = 1, count do
    f[i], pos = struct.unpack('<i8', raw, pos)
  end
  return f, last
end

local function pack_fields(fp, last, f)
  local parts = {pack_header(fp, last)}
  for i = 1, #f do
    parts[i + 1] = struct.pack('<i8', f[i])
  end
  return table.concat(parts)
end

-- Writes a fixed-size state. On a commit `ttl_ms` is given and sets the key's TTL in the same
-- command; otherwise (only the latest time moved) the bytes are overwritten in place, which
-- keeps the TTL the last commit set.
local function store_fields(key, fp, last, f, ttl_ms)
  local v = pack_fields(fp, last, f)
  if ttl_ms then
    redis.call('SET', key, v, 'PX', int(ttl_ms))
  else
    redis.call('SETRANGE', key, 0, v)
  end
end

-- The TTL a commit sets, in milliseconds: no shorter than the longest window, and no shorter than
-- the time the state still matters (`need` microseconds from now), plus a slack that covers
-- clock steps between a master and its replicas and explicit (test or replay) times that move
-- slower than real time. SLACK_MS is set by decide.lua from ARGV.
local SLACK_MS = 0
local function ttl_ms(it, need)
  local span = it.longest
  if need > span then span = need end
  return ceildiv(span, 1000) + SLACK_MS
end

local ALGORITHMS = {}
