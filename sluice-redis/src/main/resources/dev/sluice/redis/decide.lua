-- The transaction: decide every item of the request on this shard, all or nothing.
--
-- decide(keys, args) is the library's function (FCALL) or, called by the script's last line,
-- the script (EVALSHA); keys and args are KEYS and ARGV.
-- keys[k]: the state of item k.
-- args: the mode, followed by the time if it is explicit, then one argument per item (see
-- read_item in prelude.lua); in mode 'u' each item is followed by its undo record, a JSON array;
-- in mode 'b' the items' arguments are given once each (see the end of this file).
--   'd' decide: evaluate all, commit every fitting item if every enforced item fits, report.
--   'r' reserve: the same, for one shard of a Cluster request that spans shards; also returns
--       the report as it would be without this commit and an undo record per committed item,
--       so the caller can refund if another shard denies.
--   'u' refund: undo reservations.
--   'b' batch: several requests, each decided as by 'd', one after the other (see the end of
--       this file); the client sends one when decisions queue up behind calls in flight.
-- time: microseconds since the epoch ('d1700000000000000'), or nothing for the server's clock
-- (TIME). Explicit time is for replay and tests; the server's clock is what lets instances with
-- skewed clocks agree. Mode and time are one argument since each argument costs the server
-- about a tenth of a decision.
--
-- Reply ('d' and 'b'): one string. First little-endian int64s: the time decided at, then each
-- request's report. A report is per item {reason, wait} and per window {remaining, retry,
-- reset}; durations in microseconds. An item is allowed when its reason is 0 (none); a window is
-- exceeded when its retry is not 0 (-1: never; every algorithm reports a positive retry for a
-- window it finds exceeded). Or, for a request of one item decided by its algorithm's quick path,
-- the report is one negative number, -1 - reason - 4 * length, and the key's value as decided,
-- of that length, is its report (see "quick path" in prelude.lua): the client works out remaining,
-- retry and reset from it, as the memory store does from its state. Those values follow the
-- numbers, in the order of their requests. One string costs the server a third of what an array
-- of as many integers costs to reply.
-- ('r'): {report after, report before, undo record of item 1, ..., of item n}, each report a
-- string as above (the time, then the request's numbers).
-- ('u'): {number of items}.

-- Only the algorithms a request uses are built (see Cost in prelude.lua).
local function algorithm(code)
  local a = ALGORITHMS[code]
  if type(a) == 'function' then
    a = a()
    ALGORITHMS[code] = a
  end
  return a
end

-- Decoded item arguments by argument. An argument is fixed by its rule but for the cost and the
-- fresh time, so a handful of rules make a handful of entries; ITEM_CACHE bounds it anyway
-- (costs can be anything), by starting afresh when full.
local ITEM_CACHE = 1000
local items_by_arg, cached_items = {}, 0

local function item(arg)
  local it = items_by_arg[arg]
  if it then
    return it
  end
  it = read_item(arg)
  it.a = algorithm(it.alg)
  if it.a.prepare then
    it.a.prepare(it)
  end
  if keep then
    if cached_items >= ITEM_CACHE then
      items_by_arg, cached_items = {}, 0
    end
    items_by_arg[arg] = it
    cached_items = cached_items + 1
  end
  return it
end

-- Per request: the items and their states (see prelude.lua); per call, the report's numbers (a
-- batch's reports one after the other). All reused from call to call (entries beyond what a call
-- wrote are stale and never read); pack_numbers (prelude.lua) turns the numbers into the reply.
local ITEMS, STATES, OUT = {}, {}, {}

-- Writes the report of the request's n items after position b of OUT; returns its last position.
local function report(n, b)
  local out = OUT
  local o = b
  for k = 1, n do
    local it, s = ITEMS[k], STATES[k]
    out[o + 1] = s.reason
    out[o + 2] = s.fits and s.start and (s.start - s.t) or 0
    o = it.a.report(s, it, s.t, out, o + 2)
  end
  return o
end

-- One request on the general path: its n items are keys[ko + k] and args[ao + k] for k = 1..n.
-- Mode 'd': writes its report after position b of OUT and returns the report's last position;
-- mode 'r': returns the reserve reply.
local function general(keys, ko, args, ao, n, now, explicit, mode, b)
  -- It may write any of its keys: what a quick path saw before is no longer to be trusted.
  SEEN_KEY = false
  local enforced_fit = true
  for k = 1, n do
    local it = item(args[ao + k])
    -- (k lets an algorithm reuse the state of the item at this position from the last call.)
    local s = it.a.load(keys[ko + k], it, keep and k)
    -- Time never goes backwards for one key (explicit times; a promoted replica's clock).
    local t = now
    if s.present and s.last > t then
      t = s.last
    end
    s.t = t
    local over = it.over
    if over then
      for j = 1, #over do
        exceed(s, over[j], -1, REASON_COST)
      end
    end
    if s.fits then
      it.a.evaluate(s, it, t)
    end
    if not s.fits and not it.shadow then
      enforced_fit = false
    end
    ITEMS[k], STATES[k] = it, s
  end

  -- Reserve mode: {report after, report before, undo record of each item}.
  local reply
  if mode == 'r' then
    reply = {false, pack_numbers(OUT, report(n, 1))}
  end
  for k = 1, n do
    local it, s = ITEMS[k], STATES[k]
    local undo = nil
    if reply then
      undo = {}
      reply[k + 2] = undo
    end
    -- Shadow items never block the others, and are consumed only when they fit.
    if enforced_fit and s.fits and it.cost > 0 then
      it.a.commit(s, it, s.t, undo)
    elseif explicit then
      -- On explicit times (replay, tests) every decision records its time, as the memory store
      -- does, so that an earlier time given later counts as this one. On the server's clock a
      -- decision that consumes nothing writes nothing: a later decision at an earlier time (a
      -- replica promoted with a late clock) is still no earlier than the last commit, which is
      -- all the state needs, and skipping the write saves a tenth of a denial.
      if not s.present then
        it.a.create(s, it, s.t)
      elseif s.t > s.last then
        it.a.touch(s, it, s.t)
      end
    end
  end

  if not reply then
    return report(n, b)
  end
  reply[1] = pack_numbers(OUT, report(n, 1))
  return reply
end

-- One request, as general; one item is first offered to its algorithm's quick path.
local function request(keys, ko, args, ao, n, now, explicit, mode, b)
  -- Nothing read for an earlier request is ever taken for this one (a batch may decide the same
  -- key twice, the second time after the first one's write).
  READ_KEY = false
  -- One item whose algorithm can decide it in one pass (see "quick path" in prelude.lua): left
  -- undecided (quick returns its own position) when it was not that simple, and nothing written.
  if mode == 'd' and n == 1 then
    local it = item(args[ao + 1])
    local quick = it.a.quick
    if quick then
      local next, o = quick(keys, ko + 1, ko + 1, it, now, explicit, OUT, b)
      if next > ko + 1 then
        return o
      end
    end
  end

  return general(keys, ko, args, ao, n, now, explicit, mode, b)
end

-- A batch's item arguments: the one they share (ONE[1]), or each item's (PER_ITEM[k]).
local ONE, PER_ITEM = {false}, {}

local function decide(keys, args)
  spack, sunpack, rcall = struct.pack, struct.unpack, redis.call
  -- Nothing read by an earlier call is ever taken for this one.
  READ_KEY, SEEN_KEY = false, false
  local mode = args[1]
  local nargs = #args

  if mode == 'u' then
    local k = 0
    for pos = 2, nargs, 2 do
      k = k + 1
      local it = item(args[pos])
      it.a.refund(keys[k], it, cjson.decode(args[pos + 1]))
    end
    return {k}
  end

  local now
  local explicit = false
  if mode == 'd' or mode == 'r' or mode == 'b' then
    -- Lua converts the seconds and microseconds strings itself, at half the cost of tonumber.
    local t = rcall('TIME')
    now = t[1] * 1000000 + t[2]
  else
    now = tonumber(string.sub(mode, 2))
    mode = string.sub(mode, 1, 1)
    explicit = true
  end

  OUT[1] = now
  if mode == 'r' then
    return request(keys, 0, args, 1, nargs - 1, now, explicit, mode, 1)
  end
  REPLIED = 1
  local o
  if mode ~= 'b' then
    o = request(keys, 0, args, 1, nargs - 1, now, explicit, mode, 1)
  else
    -- A batch: requests decided one after the other, each all or nothing on its own, exactly as
    -- separate calls at the same time would be. args[2] holds each request's item count as one
    -- byte, or is empty when every request has one item. The items' arguments come once each,
    -- from args[4] on (a batch's requests mostly share a rule, and an argument costs the server
    -- a tenth of a batched decision): args[3] holds, as one byte per item, the position of its
    -- argument among them (1: args[4]), or is empty when every item has the first.
    local counts, index = args[2], args[3]
    local m = #counts
    o = 1
    if m == 0 and #index == 0 then
      -- One item each, all with one argument: the item looked up once, and its quick path
      -- called once for all the keys it decides in a row (a Lua call costs a twentieth of a
      -- denial); the general path decides the keys it leaves.
      local arg = args[4]
      local it = items_by_arg[arg] or item(arg)
      local quick = it.a.quick
      ONE[1] = arg
      local r, last = 1, #keys
      while r <= last do
        if quick then
          r, o = quick(keys, r, last, it, now, explicit, OUT, o)
        end
        if r <= last then
          o = general(keys, r - 1, ONE, 0, 1, now, explicit, 'd', o)
          READ_KEY = false
          r = r + 1
        end
      end
    else
      -- Each item's argument, in item order, for request.
      local per_item = PER_ITEM
      local n = #keys
      if #index == 0 then
        local arg = args[4]
        for k = 1, n do per_item[k] = arg end
      else
        for k = 1, n do per_item[k] = args[3 + string.byte(index, k)] end
      end
      local ko = 0
      for r = 1, (m == 0 and n or m) do
        local c = m == 0 and 1 or string.byte(counts, r)
        o = request(keys, ko, per_item, ko, c, now, explicit, 'd', o)
        ko = ko + c
      end
    end
  end
  -- The reports, packed once, and the values the quick paths put after them.
  local numbers = pack_numbers(OUT, o)
  if REPLIED == 1 then
    return numbers
  end
  REPLY[1] = numbers
  return table.concat(REPLY, '', 1, REPLIED)
end
