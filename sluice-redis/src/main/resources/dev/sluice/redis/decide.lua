-- The transaction: decide every item of the request on this shard, all or nothing.
--
-- KEYS[k]: the state of item k.
-- ARGV: mode, time, ttl slack (ms), then the items (see read_item in prelude.lua); in mode 'u'
-- each item is followed by its undo record (count, then values).
--   'd' decide: evaluate all, commit every fitting item if every enforced item fits, report.
--   'r' reserve: the same, for one shard of a Cluster request that spans shards; also returns
--       the report as it would be without this commit and an undo record per committed item,
--       so the caller can refund if another shard denies.
--   'u' refund: undo reservations.
-- time: microseconds since the epoch, or '' for the server's clock (TIME). Explicit time is for
-- replay and tests; the server's clock is what lets instances with skewed clocks agree.
--
-- Reply ('d'): the time decided at, then per item {allowed, reason, wait} and per window
-- {remaining, retry, reset, exceeded}, flattened; durations in microseconds, retry -1 for never.
-- ('r'): {report after, report before, undo record of item 1, ..., of item n}.
-- ('u'): {number of items}.

local mode = ARGV[1]
SLACK_MS = tonumber(ARGV[3])

if mode == 'u' then
  local pos, k = 4, 0
  while pos <= #ARGV do
    k = k + 1
    local it
    it, pos = read_item(ARGV, pos)
    local count = tonumber(ARGV[pos])
    local undo = {}
    for j = 1, count do
      undo[j] = tonumber(ARGV[pos + j])
    end
    pos = pos + count + 1
    ALGORITHMS[it.alg].refund(KEYS[k], it, undo)
  end
  return {k}
end

local now
if ARGV[2] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[2])
end

-- A cost larger than a window's limit can never be admitted.
local function cost_too_large(it, e)
  local any = false
  for i = 1, it.n do
    if it.cost > it.limit[i] then
      e.exceeded[i] = true
      e.retry[i] = -1
      any = true
    end
  end
  if any then
    e.fits = false
    e.reason = REASON_COST
  end
  return any
end

local items, states, evals, times = {}, {}, {}, {}
local enforced_fit = true
local pos, n = 4, 0
while pos <= #ARGV do
  n = n + 1
  local it
  it, pos = read_item(ARGV, pos)
  local alg = ALGORITHMS[it.alg]
  local s = alg.load(KEYS[n], it)
  -- Time never goes backwards for one key (explicit times; a promoted replica's clock).
  local t = now
  if s.present and s.last > t then
    t = s.last
  end
  local e = {fits = true, reason = REASON_NONE, start = t, exceeded = {}, retry = {}}
  for i = 1, it.n do
    e.exceeded[i] = false
    e.retry[i] = 0
  end
  if not cost_too_large(it, e) then
    alg.evaluate(s, it, t, e)
  end
  if not e.fits and not it.shadow then
    enforced_fit = false
  end
  items[n], states[n], evals[n], times[n] = it, s, e, t
end

local function report(out)
  out[1] = now
  for k = 1, n do
    local it, s, e, t = items[k], states[k], evals[k], times[k]
    local alg = ALGORITHMS[it.alg]
    out[#out + 1] = e.fits and 1 or 0
    out[#out + 1] = e.reason
    out[#out + 1] = e.fits and (e.start - t) or 0
    for i = 1, it.n do
      out[#out + 1] = alg.remaining(s, it, t, i)
      out[#out + 1] = e.exceeded[i] and e.retry[i] or 0
      out[#out + 1] = alg.reset(s, it, t, i)
      out[#out + 1] = e.exceeded[i] and 1 or 0
    end
  end
  return out
end

local before
if mode == 'r' then
  before = report({})
end
local undos = {}
for k = 1, n do
  local it, s, e, t = items[k], states[k], evals[k], times[k]
  local undo = nil
  if mode == 'r' then undo = {} end
  -- Shadow items never block the others, and are consumed only when they fit.
  if enforced_fit and e.fits and it.cost > 0 then
    ALGORITHMS[it.alg].commit(s, it, t, e, undo)
  elseif not s.present then
    ALGORITHMS[it.alg].create(s, it, t)
  elseif t > s.last then
    ALGORITHMS[it.alg].touch(s, it, t)
  end
  undos[k] = undo
end

local after = report({})
if mode ~= 'r' then
  return after
end
local reply = {after, before}
for k = 1, n do
  reply[k + 2] = undos[k]
end
return reply
