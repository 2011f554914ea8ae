-- The denial sketches of the top offenders (RedisPolicyStore): one per (rule, minute), under
-- the policies' hash tag, merged here with every instance's flush.
--
-- ARGV[1] is the operation: 'denials' (KEYS: the minutes asked for) returns their sketches;
-- 'adddenials sketch ttl' merges the sketch into KEYS[1]'s, which then lives ttl ms.

-- Denial sketches (Space-Saving), in the limiter's wire form (dev.sluice.internal.DenialSketch):
-- a header line 'sketch/1 k total entries', then one line per key, 'count error bytes key', the
-- key read by its length in bytes (so it may hold spaces and line ends). Count is an upper bound
-- of the key's denials and count - error a lower bound. A sketch with k entries is full: a key
-- it lacks was denied at most its smallest count times.
local function read_sketch(text)
  local k, total, n, pos = string.match(text, '^sketch/1 (%d+) (%d+) (%d+)\n()')
  if not k then
    return nil
  end
  local s = {k = tonumber(k), total = tonumber(total), counts = {}, errors = {}, n = 0, min = 0}
  for _ = 1, tonumber(n) do
    local count, err, len, at = string.match(text, '^(%d+) (%d+) (%d+) ()', pos)
    if not count then
      return nil
    end
    len = tonumber(len)
    local key = string.sub(text, at, at + len - 1)
    if #key ~= len or string.sub(text, at + len, at + len) ~= '\n' or s.counts[key] then
      return nil
    end
    pos = at + len + 1
    count = tonumber(count)
    s.counts[key] = count
    s.errors[key] = tonumber(err)
    s.n = s.n + 1
    if s.n == 1 or count < s.min then
      s.min = count
    end
  end
  if pos ~= #text + 1 or s.n > s.k then
    return nil
  end
  if s.n < s.k then
    s.min = 0
  end
  return s
end

-- Byte order of two strings (Lua's < follows the server's collation locale, which may not be
-- bytes): ties of count are broken by it, as the limiter does.
local function bytes_before(x, y)
  for i = 1, math.min(#x, #y) do
    local a, b = string.byte(x, i), string.byte(y, i)
    if a ~= b then
      return a < b
    end
  end
  return #x < #y
end

-- Merges two sketches: a key either lacks counts as that sketch's smallest count (0 unless
-- full), as count and as error; the largest k = max(k1, k2) counts are kept, most first, ties by
-- key bytes. Counts stay upper bounds and count - error lower bounds.
local function merge(a, b)
  local keys = {}
  for key in pairs(a.counts) do keys[#keys + 1] = key end
  for key in pairs(b.counts) do
    if not a.counts[key] then keys[#keys + 1] = key end
  end
  local count, err = {}, {}
  for _, key in ipairs(keys) do
    count[key] = (a.counts[key] or a.min) + (b.counts[key] or b.min)
    err[key] = (a.errors[key] or a.min) + (b.errors[key] or b.min)
  end
  table.sort(keys, function(x, y)
    if count[x] ~= count[y] then return count[x] > count[y] end
    return bytes_before(x, y)
  end)
  local k = math.max(a.k, b.k)
  local kept = math.min(k, #keys)
  local lines = {string.format('sketch/1 %d %d %d\n', k, a.total + b.total, kept)}
  for i = 1, kept do
    local key = keys[i]
    -- The key is appended, not formatted: %s would stop at a zero byte.
    lines[#lines + 1] = string.format('%d %d %d ', count[key], err[key], #key) .. key .. '\n'
  end
  return table.concat(lines)
end

-- adddenials sketch ttl: merges the sketch into the minute's (KEYS[1]), which lives ttl ms.
local function add_denials(sketch, ttl)
  local mine = read_sketch(sketch)
  if not mine then
    return redis.error_reply('SKETCH the denial sketch is not in the expected format')
  end
  local stored = redis.call('GET', KEYS[1])
  if stored then
    local theirs = read_sketch(stored)
    if theirs then
      sketch = merge(theirs, mine)
    end
  end
  redis.call('SET', KEYS[1], sketch, 'PX', ttl)
  return 1
end

local op = ARGV[1]
if op == 'denials' then
  return redis.call('MGET', unpack(KEYS))
elseif op == 'adddenials' then
  return add_denials(ARGV[2], tonumber(ARGV[3]))
end
return redis.error_reply('ERR unknown sketch operation')
