-- Sluice decision code: stored values, key access and the reply.
--
-- The code is assembled, once, from fixed resource files in the order of DecisionScript.PARTS:
-- values.lua, items.lua, one file per algorithm (sliding_log with its large-rule path and ring
-- helpers), requests.lua, decide.lua.
-- No value is ever spliced into the text: every number comes in the arguments, every key in the
-- keys, so one text serves every request. It runs as a library of Redis Functions (loaded once,
-- its top level run once at FUNCTION LOAD) or as a script (EVALSHA, its top level run on every
-- call); see "The library and the script" in docs/redis-internals.md. Either way the top level
-- only defines functions and constants: everything a call changes lives in the call's own table
-- (see new_call), so no call can see what another left behind.
--
-- Numbers. Lua numbers are doubles, exact for integers up to 2^53. Times are microseconds since
-- the Unix epoch (about 1.8e15 today, below 2^51); the Java side rejects explicit times, periods
-- and limits that could push any sum here past 2^53, so every value below is an exact integer.
--
-- State. One Redis string per (rule, key) holds every window of that rule for that key, so a
-- rule's transaction touches one key. Each value starts with the same 12 bytes:
--   fp    uint32  fingerprint of the rule definition (for a key given other windows than its
--                 own under the definition, a live limit: of the definition and those
--                 windows); a value with another one is not current state, and is either
--                 converted to the item's windows (carry.lua: same rule definition, other
--                 windows) or treated as absent
--   last  int64   the latest time seen for this key: time never goes backwards per key
-- followed by the algorithm's fields (see each algorithm's file). A fixed-size value (every
-- algorithm but the log) written under other windows than the key's own ends with them, for
-- carry.lua (one of the key's own windows has the rule's fingerprint, and no such end):
--   per window  limit int64, period int64;  then  rfp uint32 (the rule's own fingerprint),
--   n uint16 (the window count)
-- Integers are little-endian. A value whose latest time is before the item's `fresh` time is
-- also treated as absent: that is state from before its rule was removed and added again.

local HEADER = 12
local REASON_NONE, REASON_LIMIT, REASON_COST, REASON_WAIT = 0, 1, 2, 3

-- "Never": the schedule of an empty bucket. Times lie within +-2^52 us, so max(NEVER, t) = t.
local NEVER = -9007199254740992

-- A struct call takes or returns every field on the Lua stack, which holds about 8000 values:
-- longer runs of numbers are packed and unpacked in chunks of this many.
local CHUNK = 200

-- struct formats of a few int64s, alone and after the header, written out: most values and most
-- reports are this short, and a format built per use is a new string to hash each time. (A
-- library's top level, run at FUNCTION LOAD, may not call the string library.)
local INT64S = {
  '<i8', '<i8i8', '<i8i8i8', '<i8i8i8i8', '<i8i8i8i8i8',
  '<i8i8i8i8i8i8', '<i8i8i8i8i8i8i8', '<i8i8i8i8i8i8i8i8',
}
local HEADER_INT64S = {
  '<I4i8i8', '<I4i8i8i8', '<I4i8i8i8i8', '<I4i8i8i8i8i8',
  '<I4i8i8i8i8i8i8', '<I4i8i8i8i8i8i8i8', '<I4i8i8i8i8i8i8i8i8', '<I4i8i8i8i8i8i8i8i8i8',
}

local function int64s(count)
  return INT64S[count] or '<' .. string.rep('i8', count)
end

local function header_int64s(count)
  return HEADER_INT64S[count] or '<I4i8' .. string.rep('i8', count)
end

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

-- What one call (one FCALL or script run) is deciding, made afresh by decide for every call:
--   numbers[1..last_number]  the reply's int64s: the time, then each request's report
--   values[2..last_value]    the key values that stand for reports (values[1]: the numbers)
--   seen_key, seen_value     the key read or written last, and its value as it now stands: a
--                            batch on one hot key reads it once
--   run, at, written         a batch's keys read with one MGET (run, by key position; `at` is
--                            the position being decided), and the values of keys this call
--                            wrote since (true: changed in place, read it again)
--   spare                    the state of the last one-item request, refilled by the next one
--                            of the same algorithm rather than made again
local function new_call(now, explicit)
  return {
    now = now, explicit = explicit, numbers = {now}, last_number = 1, values = {false},
    last_value = 1, seen_key = false, seen_value = false, run = false, at = 0, written = false,
    spare = false,
  }
end

-- The key's value (false: none), read once per call where the call already knows it.
local function read_value(call, key)
  if key == call.seen_key then
    return call.seen_value
  end
  local value
  local run = call.run
  local written = run and call.written and call.written[key]
  if run and not written then
    value = run[call.at]
  elseif written and written ~= true then
    value = written
  else
    value = redis.call('GET', key)
  end
  call.seen_key, call.seen_value = key, value
  return value
end

-- Writes a whole value: with its TTL (PX, in milliseconds) on a commit, else keeping the TTL the
-- last commit set.
local function write_value(call, key, value, px)
  if px then
    redis.call('SET', key, value, 'PX', px)
  else
    redis.call('SET', key, value, 'KEEPTTL')
  end
  call.seen_key, call.seen_value = key, value
  if call.run then
    call.written = call.written or {}
    call.written[key] = value
  end
end

-- Writes bytes into a value in place: the call no longer knows the value and reads it again.
local function write_range(call, key, offset, bytes)
  redis.call('SETRANGE', key, offset, bytes)
  if call.seen_key == key then
    call.seen_key = false
  end
  if call.run then
    call.written = call.written or {}
    call.written[key] = true
  end
end

-- Fixed-size states (every algorithm but the log): the header and then `count` int64 fields.
-- The latest time of such a value when it holds item `it`'s current state, else nil (missing,
-- another size, another rule definition, or from before the rule was added back).
local function current_last(it, raw, count)
  if not raw or #raw ~= HEADER + 8 * count + #it.trailer then
    return nil
  end
  local fp, last = struct.unpack('<I4i8', raw)
  if fp ~= it.fp or last < it.fresh then
    return nil
  end
  return last
end

-- The fields and latest time of a fixed-size state, or nil when there is no current state. The
-- fields are f[1..count]; f[count + 1] may hold struct's next position, unused.
local function load_fields(call, key, it, count)
  local raw = read_value(call, key)
  local last = current_last(it, raw, count)
  if not last then
    return nil
  end
  if count <= CHUNK then
    return {struct.unpack(int64s(count), raw, HEADER + 1)}, last
  end
  local f = {}
  for i = 1, count do
    f[i] = struct.unpack('<i8', raw, HEADER + 8 * i - 7)
  end
  return f, last
end

local function pack_fields(it, last, f, count)
  if count <= CHUNK then
    return struct.pack(header_int64s(count), it.fp, last, unpack(f, 1, count)) .. it.trailer
  end
  local parts = {struct.pack('<I4i8', it.fp, last)}
  for i = 1, count do
    parts[i + 1] = struct.pack('<i8', f[i])
  end
  parts[count + 2] = it.trailer
  return table.concat(parts)
end

-- Writes a fixed-size state and returns it. On a commit `px` (see ttl_px) is given and sets the
-- key's TTL in the same command; otherwise (only the latest time moved, or a refund) the TTL
-- the last commit set stays.
local function store_fields(call, key, it, last, f, count, px)
  local value = pack_fields(it, last, f, count)
  write_value(call, key, value, px)
  return value
end

-- Moves the latest time of a value forward in place (a decision that consumed nothing).
local function store_last(call, key, last)
  write_range(call, key, 4, struct.pack('<i8', last))
end

-- The reply's int64s numbers[1..count], up to CHUNK per struct call.
local function pack_numbers(numbers, count)
  if count <= CHUNK then
    return struct.pack(int64s(count), unpack(numbers, 1, count))
  end
  local parts = {}
  for from = 1, count, CHUNK do
    local to = math.min(count, from + CHUNK - 1)
    parts[#parts + 1] = struct.pack(int64s(to - from + 1), unpack(numbers, from, to))
  end
  return table.concat(parts)
end

-- The reply of a decision call: the numbers, then the values that stand for reports.
local function reply_of(call)
  local numbers = pack_numbers(call.numbers, call.last_number)
  if call.last_value == 1 then
    return numbers
  end
  call.values[1] = numbers
  return table.concat(call.values, '', 1, call.last_value)
end
