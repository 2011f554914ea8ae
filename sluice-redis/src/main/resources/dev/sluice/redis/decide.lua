-- The transaction: decide every item of the request on this shard, all or nothing.
--
-- KEYS[k]: the state of item k.
-- ARGV: mode, time, ttl slack (ms), then one argument per item (see read_item in prelude.lua);
-- in mode 'u' each item is followed by its undo record, a JSON array.
--   'd' decide: evaluate all, commit every fitting item if every enforced item fits, report.
--   'r' reserve: the same, for one shard of a Cluster request that spans shards; also returns
--       the report as it would be without this commit and an undo record per committed item,
--       so the caller can refund if another shard denies.
--   'u' refund: undo reservations.
-- time: microseconds since the epoch, or '' for the server's clock (TIME). Explicit time is for
-- replay and tests; the server's clock is what lets instances with skewed clocks agree.
--
-- Reply ('d'): the time decided at, then per item {reason, wait} and per window {remaining,
-- retry, reset}, flattened; durations in microseconds. An item is allowed when its reason is 0
-- (none); a window is exceeded when its retry is not 0 (-1: never; every algorithm reports a
-- positive retry for a window it finds exceeded).
-- ('r'): {report after, report before, undo record of item 1, ..., of item n}.
-- ('u'): {number of items}.

local mode = ARGV[1]
local nargs = #ARGV

-- Only the algorithms a request uses are built (see Cost in prelude.lua).
local function algorithm(code)
  local a = ALGORITHMS[code]
  if type(a) == 'function' then
    a = a()
    ALGORITHMS[code] = a
  end
  return a
end

if mode == 'u' then
  local k = 0
  for pos = 4, nargs, 2 do
    k = k + 1
    local it = read_item(ARGV[pos])
    algorithm(it.alg).refund(KEYS[k], it, cjson.decode(ARGV[pos + 1]))
  end
  return {k}
end

local now
if ARGV[2] == '' then
  -- Lua converts the seconds and microseconds strings itself, at half the cost of tonumber.
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
else
  now = tonumber(ARGV[2])
end

-- Per item: its arguments, it.a its algorithm and it.s its state, which also holds the
-- evaluation (see prelude.lua).
local items = {}
local enforced_fit = true
local n = nargs - 3
for k = 1, n do
  local it = read_item(ARGV[k + 3])
  local alg = algorithm(it.alg)
  local s = alg.load(KEYS[k], it)
  it.a, it.s = alg, s
  -- Time never goes backwards for one key (explicit times; a promoted replica's clock).
  local t = now
  if s.present and s.last > t then
    t = s.last
  end
  s.t = t
  -- A cost larger than a window's limit can never be admitted.
  for i = 1, it.n do
    if it.cost > it.limit[i] then
      exceed(s, i, -1, REASON_COST)
    end
  end
  if s.fits then
    alg.evaluate(s, it, t)
  end
  if not s.fits and not it.shadow then
    enforced_fit = false
  end
  items[k] = it
end

local function report()
  local out = {now}
  local o = 1
  for k = 1, n do
    local it = items[k]
    local s = it.s
    out[o + 1] = s.reason
    out[o + 2] = s.fits and s.start and (s.start - s.t) or 0
    o = it.a.report(s, it, s.t, out, o + 2)
  end
  return out
end

-- Reserve mode: {report after, report before, undo record of each item}.
local reply
if mode == 'r' then
  reply = {false, report()}
end
for k = 1, n do
  local it = items[k]
  local s = it.s
  local undo = nil
  if reply then
    undo = {}
    reply[k + 2] = undo
  end
  -- Shadow items never block the others, and are consumed only when they fit.
  if enforced_fit and s.fits and it.cost > 0 then
    it.a.commit(s, it, s.t, undo)
  elseif not s.present then
    it.a.create(s, it, s.t)
  elseif s.t > s.last then
    it.a.touch(s, it, s.t)
  end
end

if not reply then
  return report()
end
reply[1] = report()
return reply
