-- The transaction: decide every item of the request on this shard, all or nothing.
--
-- decide(keys, args) is the library's function (FCALL) or, called by the script's last line,
-- the script (EVALSHA); keys and args are KEYS and ARGV.
-- keys[k]: the state of item k.
-- args: the mode, followed by the time if it is explicit, then one argument per item (see
-- read_item in items.lua); in mode 'u' each item is followed by its undo record, a JSON array;
-- in mode 'b' the items' arguments are given once each (see decide_batch).
--   'd' decide: evaluate all, commit every fitting item if every enforced item fits, report.
--   'r' reserve: the same, for one shard of a Cluster request that spans shards; also returns
--       the report as it would be without this commit and an undo record per committed item,
--       so the caller can refund if another shard denies.
--   'u' refund: undo reservations; also leased mode's give-back, the item's cost set to the
--       units given back. A key after the items' (`<first state key>:refund:<random id>`) marks
--       the refund done: one the client sends again after a lost reply does nothing.
--   'l' take (leased mode): one item, args[2] its argument at cost 0 and args[3] the units
--       asked; commits, as 'r' reserves, the most whole units that fit every window now (see take).
--   'b' batch: several requests, each decided as by 'd', one after the other; the client sends
--       one when decisions queue up behind calls in flight.
--   'B' batch with policies: 'b' for a batch with a request of a rule that bans or audits, each
--       request decided as by 'p'.
--   'p', 'q': 'd' and 'r' for a request with an item of a rule that bans or audits: the same
--       transaction with its policy hooks; the modes say that the item's sibling keys follow the
--       state keys and its audit values are the last argument (policies.lua).
--   'a': after a request decided across shards and admitted, record audit values: keys are
--       pairs of a state key and its audit list, args each pair's value and keep (policies.lua).
--   'c': after a request decided across shards, count one denial toward the bans of its items
--       on this shard: keys are their ban keys, args their item arguments (policies.lua).
-- time: microseconds since the epoch ('d1700000000000000'), or nothing for the server's clock
-- (TIME). Explicit time is for replay and tests; the server's clock is what lets instances with
-- skewed clocks agree. Mode and time are one argument, since every argument has a cost.
--
-- Reply ('d' and 'b'): one string (cheaper for the server to reply than an array of numbers).
-- First little-endian int64s: the time decided at, then each request's report. A report is per
-- item {reason, wait} and per window {remaining, retry, reset}; durations in microseconds. An
-- item is allowed when its reason is 0 (none); a window is exceeded when its retry is not 0
-- (-1: never). Or, for a request of one item whose algorithm the client can read from its value
-- (sliding_log of a small rule, token_bucket), one negative number, -1 - reason - 4 * length,
-- standing for the key's value as decided, of that length, which follows the numbers in the
-- order of the requests (see decide_run in requests.lua; Replies reads it).
-- ('r'): {report after, report before, undo record of item 1, ..., of item n}, each report a
-- string as above (the time, then the request's numbers).
-- ('u'): {number of items refunded}: 0 for a refund sent again.
-- ('l'): {units granted, report after, undo record ({} when none), time decided at}.

-- Mode 'b': requests decided one after the other, each all or nothing on its own, exactly as
-- separate calls at the same time would be. args[2] holds each request's item count as one
-- byte, or is empty when every request has one item. The items' arguments come once each, from
-- args[4] on (a batch's requests mostly share a rule): args[3] holds, as one byte per item, the
-- position of its argument among them (1: args[4]), or is empty when every item has the first.
-- Mode 'B': the same for a batch with a request of a rule that bans or audits, every request
-- with the policy hooks (they do nothing for an item without a ban key or an audit value): the
-- state keys of all items come first, then their sibling keys in item order; args[2] always
-- holds the counts, and args[4] the audit values of all items, as mode 'p' lays them out, so the
-- items' arguments start at args[5].
local function decide_batch(call, keys, args, with_policy)
  local counts, index = args[2], args[3]
  local requests = #counts
  local base = with_policy and 4 or 3
  if not with_policy and requests == 0 and #index == 0 then
    -- One item each, all of one argument. Six or more keys that are not one hot key are read
    -- with one MGET: a command costs the server about as much as reading five keys more in one,
    -- and below six keys building MGET's reply eats the gain.
    local it = item(call, args[4])
    local last = #keys
    if last >= 6 and keys[1] ~= keys[2] and it.cost > 0 and it.reads_whole then
      call.run = redis.call('MGET', unpack(keys))
    end
    decide_run(call, keys, 1, last, it)
    return
  end
  local items, policy = #keys, nil
  if with_policy then
    items = 0
    for r = 1, requests do items = items + string.byte(counts, r) end
    policy = new_policy(keys, items, args[4])
    if items == requests and #index == 0 then
      -- One item each, all of one argument, as above; the MGET reads the ban keys too.
      local it = item(call, args[5])
      if #keys >= 6 and keys[1] ~= keys[2] and it.cost > 0 and it.reads_whole then
        call.run = redis.call('MGET', unpack(keys))
        policy.run = call.run
      end
      decide_run(call, keys, 1, items, it, policy)
      return
    end
  end
  -- Each item's argument, in item order.
  local per_item = {}
  if #index == 0 then
    for k = 1, items do per_item[k] = args[base + 1] end
  else
    for k = 1, items do per_item[k] = args[base + string.byte(index, k)] end
  end
  local first = 0
  for r = 1, (requests == 0 and items or requests) do
    local n = requests == 0 and 1 or string.byte(counts, r)
    decide_request(call, keys, first, per_item, first, n, policy)
    first = first + n
  end
end

-- Mode 'l': the units that fit are the least remaining of the item's windows, read from a peek:
-- each leasable algorithm's remaining is exactly the largest cost its evaluation admits (the
-- memory store's KeyState.fit). The peek writes nothing (a converted value is put back); then the
-- item, its argument's cost set to the fit, is reserved as mode 'r' reserves it, on a call of
-- its own. With nothing to grant, one unit is reserved instead: denied, it commits nothing and
-- its report is the denial of one unit.
local function take(call, keys, args)
  local peek = {}
  evaluate_entries(call, keys, 0, args, 1, 1, peek, nil, nil)
  local entry = peek[1]
  report_entry(call, entry)
  put_back(call, entry.state or entry)
  local t = entry.state and entry.state.t or entry.t
  local numbers = call.numbers
  local fit = tonumber(args[3])
  for i = 1, entry.it.n do
    -- Window i's remaining follows the item's reason and wait (see report_entry).
    local remaining = numbers[3 * i + 1]
    if remaining < fit then fit = remaining end
  end
  if fit < 0 then fit = 0 end
  local cost = string.format('%d', fit > 0 and fit or 1)
  local arg = (string.gsub(args[2], '^(%[%d+,)%d+', function(head) return head .. cost end, 1))
  local reply = reserve(new_call(call.now, call.explicit), keys, {args[1], arg}, 1, nil)
  if next(reply[3]) == nil then
    fit = 0
  end
  return {fit, reply[1], reply[3], t}
end

local function decide(keys, args)
  local mode = args[1]
  if mode == 'u' then
    local call = new_call(0, false)
    local items, px = {}, 0
    for pos = 2, #args, 2 do
      local it = item(call, args[pos])
      items[#items + 1] = it
      -- Two longest windows after the refund, no state still counts the reservation it undoes.
      px = math.max(px, -floordiv(-2 * it.longest, 1000) + it.slack)
    end
    local marker = keys[#items + 1]
    if marker and not redis.call('SET', marker, '1', 'NX', 'PX', int(px)) then
      -- The client sent this refund again (a reply lost, the connection re-established): it ran.
      return {0}
    end
    for k = 1, #items do
      items[k].algorithm.refund(call, keys[k], items[k], cjson.decode(args[2 * k + 1]))
    end
    return {#items}
  end

  local now
  local explicit = false
  if mode == 'd' or mode == 'r' or mode == 'b' or mode == 'p' or mode == 'q' or mode == 'c'
      or mode == 'a' or mode == 'B' or mode == 'l' then
    -- Lua converts the seconds and microseconds strings itself, cheaper than tonumber.
    local t = redis.call('TIME')
    now = t[1] * 1000000 + t[2]
  else
    now = tonumber(string.sub(mode, 2))
    mode = string.sub(mode, 1, 1)
    explicit = true
  end
  local call = new_call(now, explicit)
  -- The common modes first: a request of rules without bans or audit compares no more than before.
  if mode == 'd' then
    decide_request(call, keys, 0, args, 1, #args - 1)
  elseif mode == 'b' then
    decide_batch(call, keys, args, false)
  elseif mode == 'r' then
    return reserve(call, keys, args, #args - 1, nil)
  elseif mode == 'p' then
    local n = #args - 2
    decide_request(call, keys, 0, args, 1, n, new_policy(keys, n, args[#args]))
  elseif mode == 'q' then
    local n = #args - 2
    return reserve(call, keys, args, n, new_policy(keys, n, args[#args]))
  elseif mode == 'B' then
    decide_batch(call, keys, args, true)
  elseif mode == 'l' then
    return take(call, keys, args)
  elseif mode == 'c' then
    return count_denials(call, keys, args, item)
  elseif mode == 'a' then
    return record_audits(keys, args)
  else
    return redis.error_reply('ERR unknown mode ' .. mode)
  end
  return reply_of(call)
end
