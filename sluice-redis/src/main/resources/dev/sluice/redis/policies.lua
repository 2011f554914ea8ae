-- Bans and audit: requests with an item of a rule that bans or audits (modes 'p' and 'q', see
-- decide.lua). Requests without such items never come here.
--
-- Besides its state key, such an item has sibling keys in the state key's hash tag (so a Cluster
-- keeps them on its shard), declared in KEYS after every state key, in item order: for a rule
-- that bans, `<state key>:ban`; for an item with an audit value, `<state key>:audit`.
-- The last argument holds the audit values: per item a little-endian int32 length (-1: none)
-- followed by the value's bytes.
--
-- `<state key>:ban` is three little-endian int64s: banned until (µs on the call's clock; a
-- time not after now is no ban), denials counted, and when they are forgotten (µs). Counting is a
-- fixed window that the first denial counted in it opens. Its TTL covers whichever lasts longer.
-- `<state key>:audit` is a list, newest first, of the last `keep` distinct values that consumed
-- the key, with the state key's TTL.

local REASON_BANNED = 4
local BAN_FORMAT = '<i8i8i8'

-- The ban key's fields: until, denials, end of the count; zeros when absent or unreadable.
local function read_ban(key)
  local raw = redis.call('GET', key)
  if not raw or #raw ~= 24 then
    return 0, 0, 0
  end
  local banned_until, denials, ends = struct.unpack(BAN_FORMAT, raw)
  return banned_until, denials, ends
end

-- One denial at now counts toward a ban; the one that reaches `after` starts one (and the count
-- starts over).
local function count_denial(key, it, now)
  local ban = it.ban
  local banned_until, denials, ends = read_ban(key)
  if denials == 0 or now >= ends then
    denials, ends = 0, now + ban.within
  end
  denials = denials + 1
  if denials >= ban.after then
    banned_until = math.max(banned_until, now + ban.duration)
    denials = 0
  end
  local last = banned_until
  if denials > 0 and ends > last then
    last = ends
  end
  redis.call('SET', key, struct.pack(BAN_FORMAT, banned_until, denials, ends), 'PX',
    int(-floordiv(-(last - now), 1000) + it.slack))
end

-- The value moves to the front of the list of the last `keep` distinct values; the list lasts as
-- long as the state key.
local function record_audit(key, state_key, value, keep)
  redis.call('LREM', key, 1, value)
  redis.call('LPUSH', key, value)
  redis.call('LTRIM', key, 0, keep - 1)
  local px = redis.call('PTTL', state_key)
  if px > 0 then
    redis.call('PEXPIRE', key, px)
  end
end

local function report_policy_entry(call, entry)
  if not entry.banned then
    report_entry(call, entry)
    return
  end
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

-- One request of n = #args - 2 items (args[2..n+1]), all or nothing, as decide_request decides
-- (mode 'p') or reserve reserves (mode 'q'), and what reserve replies. A banned item is not read
-- nor evaluated: it is reported banned with the time left, and if its rule is enforced (not
-- shadow) it denies the request.
--
-- Counting, as BanCounts in the library: a request denied for the use it asks (an enforced item
-- over its windows, cost or wait) counts one denial for every item of a rule that bans, items
-- with room included; a shadow item over its own windows counts on its own; a request that an
-- enforced ban in force denies counts nothing, and a banned item never counts. A reservation
-- (mode 'q') counts nothing: only the client sees every shard's answer, and counts after it
-- (mode 'c').
local function decide_policies(call, keys, args, reserving)
  local n = #args - 2
  local values, pos, sibling = args[#args], 1, n
  local now = call.now
  local entries, undos, bans, audits = {}, {}, {}, {}
  local enforced_fit = true
  for k = 1, n do
    local it = item(call, args[1 + k])
    local length = struct.unpack('<i4', values, pos)
    pos = pos + 4
    if it.ban then
      sibling = sibling + 1
      bans[k] = keys[sibling]
    end
    if length >= 0 then
      sibling = sibling + 1
      audits[k] = {keys[sibling], string.sub(values, pos, pos + length - 1)}
      pos = pos + length
    end
    local entry
    local banned_until = bans[k] and read_ban(bans[k]) or 0
    if banned_until > now then
      entry = {it = it, key = keys[k], banned = banned_until - now, fits = false, state = false}
    else
      undos[k] = {}
      entry = evaluate_entry(call, keys[k], it, reserving and undos[k] or nil)
    end
    entries[k] = entry
    if not entry.fits and not it.shadow then
      enforced_fit = false
    end
  end
  -- Whether every ban item counts (denied for use, no enforced ban), or only those denied for use.
  local count_all, count_any = false, not reserving
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
  local reply
  if reserving then
    for k = 1, n do report_policy_entry(call, entries[k]) end
    reply = {false, pack_numbers(call.numbers, call.last_number)}
  end
  for k = 1, n do
    local entry = entries[k]
    local it = entry.it
    if entry.banned then
      if reply then reply[k + 2] = {} end
    else
      local commit = enforced_fit and entry.fits and it.cost > 0
      local undo = nil
      if reply then
        undo = (commit and not entry.state) and undos[k] or {}
        reply[k + 2] = undo
      end
      settle_entry(call, entry, commit, undo)
      if count_any and bans[k] and (count_all or denied_for_use(entry)) then
        count_denial(bans[k], it, now)
      end
      if commit and audits[k] and it.keep then
        record_audit(audits[k][1], keys[k], audits[k][2], it.keep)
      end
    end
  end
  if reply then
    call.last_number = 1
  end
  for k = 1, n do report_policy_entry(call, entries[k]) end
  for k = 1, n do
    if not entries[k].banned then put_back(call, entries[k].state or entries[k]) end
  end
  if reply then
    reply[1] = pack_numbers(call.numbers, call.last_number)
    return reply
  end
  return reply_of(call)
end

-- Mode 'c': after a request decided across shards, one denial counted at now for each item k
-- (args[1 + k]) toward the ban whose key is keys[k] (the client chose them as BanCounts does).
local function count_denials(call, keys, args)
  for k = 1, #keys do
    -- A ban started since the request was decided (by another request's count) was in force
    -- before this count: the request would have been banned, and counts nothing.
    if read_ban(keys[k]) <= call.now then
      count_denial(keys[k], item(call, args[1 + k]), call.now)
    end
  end
  return {#keys}
end
