-- Bans and audit: the hooks of the one transaction (requests.lua) for a request with an item of a
-- rule that bans or audits (modes 'p' and 'q', and 'B' for a batch holding one, see decide.lua),
-- and the counts and records after a request decided across shards (modes 'c' and 'a'). Requests
-- without such items carry no policy: the transaction tests it for nil and does nothing more.
--
-- Besides its state key, such an item has sibling keys in the state key's hash tag (so a Cluster
-- keeps them on its shard), declared in KEYS after every state key (of the batch, in 'B'), in
-- item order: for a rule that bans, `<state key>:ban`; for an item with an audit value,
-- `<state key>:audit`. One argument holds the audit values: per item a little-endian int32
-- length (-1: none) followed by the value's bytes.
--
-- `<state key>:ban` is three little-endian int64s: banned until (µs on the call's clock; a
-- time not after now is no ban), denials counted, and when they are forgotten (µs). Counting is a
-- fixed window that the first denial counted in it opens. Its TTL covers whichever lasts longer.
-- `<state key>:audit` is a list, newest first, of the last `keep` distinct values that consumed
-- the key, with the state key's TTL.

local REASON_BANNED = 4
local BAN_FORMAT = '<i8i8i8'

-- The policy of a request, or of a batch's requests, whose n items have their state keys in
-- keys[1..n]: its sibling keys follow them, its audit values are `values`. Read item by item
-- (next_policy_item) as the transaction decodes the items. `ban_values` holds each ban key's
-- value as read or last written in this call (false: none), so that a ban is read once per call
-- and a count sees the counts before it; `run`, when set, holds the values of keys[1..], read
-- with one MGET.
local function new_policy(keys, n, values)
  return {keys = keys, sibling = n, values = values, pos = 1, bans = {}, audits = {}, ban_values = {}, run = false}
end

-- The next item's sibling keys and audit value, as the wire lays them out: its ban key (or nil)
-- and that key's position in keys, its audit key (or nil) and its value's position and length
-- in the values (read only when recorded).
local function next_policy_item(policy, it)
  local values, pos = policy.values, policy.pos
  local length = struct.unpack('<i4', values, pos)
  pos = pos + 4
  local ban, at, audit, at_value
  if it.ban then
    at = policy.sibling + 1
    policy.sibling = at
    ban = policy.keys[at]
  end
  if length >= 0 then
    policy.sibling = policy.sibling + 1
    audit = policy.keys[policy.sibling]
    at_value = pos
    pos = pos + length
  end
  policy.pos = pos
  return ban, at, audit, at_value, length
end

-- Item k's part of the policy (bans[k], audits[k]); its ban key and that key's position, or nil.
local function policy_item(policy, k, it)
  local ban, at, audit, at_value, length = next_policy_item(policy, it)
  policy.bans[k] = ban
  if audit then
    policy.audits[k] = {audit, string.sub(policy.values, at_value, at_value + length - 1)}
  end
  return ban, at
end

-- The ban key's fields: until, denials, end of the count; zeros when absent or unreadable. Read
-- once per call (or taken from the call's MGET, at position `at` of its keys).
local function read_ban(policy, key, at)
  local raw = policy.ban_values[key]
  if raw == nil then
    local run = policy.run
    if run and at then
      raw = run[at]
    else
      raw = redis.call('GET', key)
    end
    policy.ban_values[key] = raw
  end
  if not raw or #raw ~= 24 then
    return 0, 0, 0
  end
  local banned_until, denials, ends = struct.unpack(BAN_FORMAT, raw)
  return banned_until, denials, ends
end

-- One denial at now counts toward a ban; the one that reaches `after` starts one (and the count
-- starts over). The one write a denial cannot do without: the count must be exact.
local function count_denial(policy, key, it, now)
  local ban = it.ban
  local banned_until, denials, ends = read_ban(policy, key, nil)
  local fresh = denials == 0 or now >= ends
  if fresh then
    denials, ends = 0, now + ban.within
  end
  denials = denials + 1
  local started = denials >= ban.after
  if started then
    banned_until = math.max(banned_until, now + ban.duration)
    denials = 0
  end
  local raw = struct.pack(BAN_FORMAT, banned_until, denials, ends)
  if fresh or started then
    local last = banned_until
    if denials > 0 and ends > last then
      last = ends
    end
    redis.call('SET', key, raw, 'PX', int(-floordiv(-(last - now), 1000) + it.slack))
  else
    -- Only the count moved: the end of the ban and of the count, so the TTL, are as written.
    -- Writing the count alone costs the server a little less than the whole value with its TTL.
    redis.call('SETRANGE', key, 8, string.sub(raw, 9, 16))
  end
  policy.ban_values[key] = raw
end

-- The value moves to the front of the list of the last `keep` distinct values; the list lasts as
-- long as the state key. A value already at the front leaves the list as it is (most admissions
-- of a key are by the value before them): only its TTL follows the state key's.
local function record_audit(key, state_key, value, keep)
  if redis.call('LINDEX', key, 0) ~= value then
    redis.call('LREM', key, 1, value)
    redis.call('LPUSH', key, value)
    redis.call('LTRIM', key, 0, keep - 1)
  end
  local px = redis.call('PTTL', state_key)
  if px > 0 then
    redis.call('PEXPIRE', key, px)
  end
end

-- After item `it` of a request of one item (decide_run) was decided for `reason` at now: its
-- denial counted toward the ban `ban`, or its consuming admission's audit value (at position
-- `at_value` of the values, `length` bytes) recorded in `audit`, the list of state key `key`.
local function settle_run_policy(policy, it, key, reason, ban, audit, at_value, length, now)
  if reason ~= REASON_NONE then
    if ban then
      count_denial(policy, ban, it, now)
    end
  elseif audit and it.keep and it.cost > 0 then
    record_audit(audit, key, string.sub(policy.values, at_value, at_value + length - 1), it.keep)
  end
end

-- How long the ban of key (at position `at` of the call's keys) lasts from now, or false: not
-- banned.
local function ban_left(policy, key, at, now)
  local banned_until = read_ban(policy, key, at)
  return banned_until > now and banned_until - now
end

-- A banned item is not read nor evaluated: its entry says how long the ban lasts.
local function banned_entry(it, key, left)
  return {it = it, key = key, banned = left, fits = false, state = false}
end

-- A banned item's report: reason banned, the ban's time left as its wait, zeros for its windows.
local function report_banned(call, entry)
  local numbers, at = call.numbers, call.last_number
  numbers[at + 1], numbers[at + 2] = REASON_BANNED, entry.banned
  at = at + 2
  for i = 1, 3 * entry.it.n do
    numbers[at + i] = 0
  end
  call.last_number = at + 3 * entry.it.n
end

-- Whether an evaluated entry is a denial for the use asked (its windows, its cost, its wait).
local function denied_for_use(entry)
  if entry.fits or entry.banned then
    return false
  end
  local reason = entry.state and entry.state.reason or entry.reason
  return reason ~= REASON_NONE
end

-- After the request's items are settled: denials counted toward bans and audit values recorded.
--
-- Counting, as BanCounts in the library: a request denied for the use it asks (an enforced item
-- over its windows, cost or wait) counts one denial for every item of a rule that bans, items
-- with room included; a shadow item over its own windows counts on its own; a request that an
-- enforced ban in force denies counts nothing, and a banned item never counts. A reservation
-- (reserve in requests.lua) does neither: only the client sees every shard's answer, and counts
-- after it (mode 'c'); and a refund cannot take a value back out of a list, so the client
-- records the audit values once the request is admitted (mode 'a').
local function settle_policy(call, keys, first, entries, n, policy, enforced_fit)
  local bans, audits, now = policy.bans, policy.audits, call.now
  local count_all, count_any = false, true
  for k = 1, n do
    local entry = entries[k]
    if not entry.it.shadow then
      if entry.banned then
        count_any = false
      elseif denied_for_use(entry) then
        count_all = true
      end
    end
  end
  for k = 1, n do
    local entry = entries[k]
    local it = entry.it
    if not entry.banned then
      if count_any and bans[k] and (count_all or denied_for_use(entry)) then
        count_denial(policy, bans[k], it, now)
      end
      if audits[k] and it.keep and enforced_fit and entry.fits and it.cost > 0 then
        record_audit(audits[k][1], keys[first + k], audits[k][2], it.keep)
      end
    end
  end
end

-- Mode 'c': after a request decided across shards, one denial counted at now for each item k
-- (its argument args[1 + k], decoded by `item`) toward the ban whose key is keys[k] (the client
-- chose them as BanCounts does).
local function count_denials(call, keys, args, item)
  local policy = new_policy(keys, #keys, '')
  for k = 1, #keys do
    -- A ban started since the request was decided (by another request's count) was in force
    -- before this count: the request would have been banned, and counts nothing.
    if read_ban(policy, keys[k], nil) <= call.now then
      count_denial(policy, keys[k], item(call, args[1 + k]), call.now)
    end
  end
  return {#keys}
end

-- Mode 'a': after a request decided across shards and admitted, each audit value args[2k]
-- recorded in the list keys[2k] of the state key keys[2k - 1], keeping args[2k + 1] values.
local function record_audits(keys, args)
  for k = 1, #keys / 2 do
    record_audit(keys[2 * k], keys[2 * k - 1], args[2 * k], tonumber(args[2 * k + 1]))
  end
  return {#keys / 2}
end
