-- Requests: the kept item arguments, and deciding one request (of one item or several, each item
-- decided as entries.lua does) or a Cluster reservation. decide.lua drives them by mode.

local ALGORITHMS = {sliding_log, sliding_window, fixed_window, token_bucket, leaky_bucket}

-- Decoded item arguments by argument, kept from call to call: the one table the library keeps
-- between calls. Decoding one costs about as much as deciding a few requests (figures in
-- docs/redis-internals.md, "What a call keeps"), and a batch carries only a handful. An item is
-- a pure function of its argument's text (fixed by its rule but for the cost and the fresh
-- time), so a kept one decides exactly as a new one would; ITEM_CACHE bounds the table (costs can
-- be anything) by starting afresh when it is full. A script's top level runs on every call, so
-- there it lasts one call.
local ITEM_CACHE = 1000
local kept_items = {by_argument = {}, count = 0}

local function item(call, arg)
  local it = kept_items.by_argument[arg]
  if it then
    return it
  end
  it = read_item(arg)
  local algorithm = ALGORITHMS[it.code]
  if algorithm.prepare then
    algorithm.prepare(it)
  end
  if algorithm.variant then
    algorithm = algorithm.variant(it)
  end
  it.algorithm = algorithm
  -- A peek or a cost above a limit is reported as numbers.
  it.by_value = it.cost > 0 and not it.over and algorithm.reported_by_value ~= nil
    and algorithm.reported_by_value(it)
  it.reads_whole = algorithm.reads_whole(it)
  if kept_items.count >= ITEM_CACHE then
    kept_items.by_argument, kept_items.count = {}, 0
  end
  kept_items.by_argument[arg] = it
  kept_items.count = kept_items.count + 1
  return it
end

-- Requests of one item each, keys[from..to], all of item `it`, decided one after the other
-- (one request, or a batch's requests that share their argument). Where the client can read the
-- report from the key's value, the value is the report: the server then does no counting for
-- it. The loop keeps what it uses in locals, and reads and writes the keys itself (as
-- read_value and write_value do, see values.lua): a table field or a Lua call per decision
-- shows in the server's time per decision.
--
-- With `policy` (policies.lua; nil for requests without), each request is decided as
-- decide_request would decide it with its hooks, which for a request of one item come down to
-- this: an item whose ban is in force is neither read nor evaluated but reported banned; else a
-- denial (any reason but none: the item's own use) counts toward its ban, a consuming admission
-- records its audit value (settle_run_policy).
local function decide_run(call, keys, from, to, it, policy)
  local algorithm = it.algorithm
  local decide = it.decide
  if not decide then
    for r = from, to do
      local ban, at, audit, vpos, vlen
      local left = false
      if policy then
        ban, at, audit, vpos, vlen = next_policy_item(policy, it)
        left = ban and ban_left(policy, ban, at, call.now)
      end
      if left then
        report_banned(call, {it = it, banned = left})
      else
        call.at = r
        local state = evaluate_state(call, keys[r], it, call.spare)
        call.spare = state
        settle_state(call, state, it, state.fits and it.cost > 0, nil)
        if policy then
          settle_run_policy(policy, it, keys[r], state.reason, ban, audit, vpos, vlen, call.now)
        end
        report_state(call, state, it)
        put_back(call, state)
      end
    end
    return
  end
  local now, explicit, by_value = call.now, call.explicit, it.by_value
  local numbers, values, last_number, last_value = call.numbers, call.values, call.last_number, call.last_value
  local seen_key, seen_value, run, written = call.seen_key, call.seen_value, call.run, call.written
  for r = from, to do
    local ban, at, audit, vpos, vlen
    local left = false
    if policy then
      ban, at, audit, vpos, vlen = next_policy_item(policy, it)
      left = ban and ban_left(policy, ban, at, now)
    end
    if left then
      numbers[last_number + 1], numbers[last_number + 2] = REASON_BANNED, left
      last_number = last_number + 2
      for i = 1, 3 * it.n do
        numbers[last_number + i] = 0
      end
      last_number = last_number + 3 * it.n
    else
      local key = keys[r]
      local raw
      if key == seen_key then
        raw = seen_value
      else
        local known = written and written[key]
        if known and known ~= true then
          raw = known
        elseif run and not known then
          raw = run[r]
        else
          raw = redis.call('GET', key)
        end
      end
      seen_key, seen_value = key, raw
      local reason, t, present, value, px = decide(raw, now, nil)
      local saved
      if raw and not present then
        -- State of other windows of the rule, converted and written (carry.lua); call.written is
        -- this loop's `written` until the loop ends.
        call.written = written
        local carried
        carried, saved = carry_value(call, key, it, raw)
        if carried then
          raw, seen_key, seen_value, written = carried, key, carried, call.written
          reason, t, present, value, px = decide(raw, now, nil)
        end
      end
      local changed = value
      if value then
        redis.call('SET', key, value, 'PX', px)
      elseif saved then
        -- Nothing admitted under the new windows: back to what the key held (reported converted).
        call.written = written
        changed = carry_undo(call, key, saved)
        written = call.written
      elseif explicit and not present then
        changed = algorithm.created(it, t)
        redis.call('SET', key, changed, 'PX', ttl_px(it, 0))
      elseif explicit and t > struct.unpack('<i8', raw, 5) then
        -- The time recorded in place (see record_time): the value is read again if needed.
        redis.call('SETRANGE', key, 4, struct.pack('<i8', t))
        seen_key = false
        changed = true
      end
      if changed then
        if changed ~= true then seen_value = changed end
        if run then
          written = written or {}
          written[key] = changed
        end
      end
      if policy then
        settle_run_policy(policy, it, key, reason, ban, audit, vpos, vlen, now)
      end
      last_number = last_number + 1
      if by_value and (value or present) then
        value = value or raw
        last_value = last_value + 1
        numbers[last_number] = -1 - reason - 4 * #value
        values[last_value] = value
      else
        numbers[last_number], numbers[last_number + 1] = reason, 0
        last_number = algorithm.report(it, value or raw, t, reason, numbers, last_number + 1)
      end
    end
  end
  call.last_number, call.last_value = last_number, last_value
  call.seen_key, call.seen_value, call.written = seen_key, seen_value, written
end

-- Evaluates the n items keys[first + k], args[arg_first + k]; whether every enforced item fits
-- (shadow items never block the others, and are consumed only when they fit). With a policy
-- (policies.lua), an item whose ban is in force is not evaluated: it is reported banned, and if
-- its rule is enforced it denies the request.
local function evaluate_entries(call, keys, first, args, arg_first, n, entries, undos, policy)
  local enforced_fit = true
  for k = 1, n do
    local key, it = keys[first + k], item(call, args[arg_first + k])
    local entry
    local banned = false
    if policy then
      local ban, at = policy_item(policy, k, it)
      banned = ban and ban_left(policy, ban, at, call.now)
    end
    if banned then
      entry = banned_entry(it, key, banned)
    else
      entry = evaluate_entry(call, key, it, undos and undos[k])
    end
    entries[k] = entry
    if not entry.fits and not it.shadow then
      enforced_fit = false
    end
  end
  return enforced_fit
end

-- A request of n items, keys[first + k] and args[arg_first + k] for k = 1..n, all or nothing;
-- `policy` (nil but for a request with an item of a rule that bans or audits) adds the ban checks
-- before and the denial counts and audit records after (policies.lua).
local function decide_request(call, keys, first, args, arg_first, n, policy)
  if n == 1 then
    decide_run(call, keys, first + 1, first + 1, item(call, args[arg_first + 1]), policy)
    return
  end
  if policy then
    policy.bans, policy.audits = {}, {}
  end
  local entries = {}
  local enforced_fit = evaluate_entries(call, keys, first, args, arg_first, n, entries, nil, policy)
  for k = 1, n do
    local entry = entries[k]
    if not entry.banned then
      settle_entry(call, entry, enforced_fit and entry.fits and entry.it.cost > 0, nil)
    end
  end
  if policy then
    settle_policy(call, keys, first, entries, n, policy, enforced_fit)
  end
  for k = 1, n do
    report_entry(call, entries[k])
  end
  for k = 1, n do
    if not entries[k].banned then put_back(call, entries[k].state or entries[k]) end
  end
end

-- Modes 'r' and 'q': the n items args[2..n+1] reserved, with `policy`'s ban checks for 'q' (a
-- reservation counts no denial and records no audit value: see settle_policy). Replies {report
-- after, report before, undo record of each committed item ({} for others)}.
local function reserve(call, keys, args, n, policy)
  local entries, undos = {}, {}
  for k = 1, n do undos[k] = {} end
  local enforced_fit = evaluate_entries(call, keys, 0, args, 1, n, entries, undos, policy)
  for k = 1, n do report_entry(call, entries[k]) end
  local reply = {false, pack_numbers(call.numbers, call.last_number)}
  for k = 1, n do
    local entry = entries[k]
    if entry.banned then
      reply[k + 2] = {}
    else
      local commit = enforced_fit and entry.fits and entry.it.cost > 0
      -- A decide-way item wrote its undo record while deciding: it counts only if committed. A
      -- state-way item's commit writes its own.
      local undo = {}
      if commit and not entry.state then
        undo = undos[k]
      end
      reply[k + 2] = undo
      settle_entry(call, entry, commit, undo)
    end
  end
  call.last_number = 1
  for k = 1, n do report_entry(call, entries[k]) end
  for k = 1, n do
    if not entries[k].banned then put_back(call, entries[k].state or entries[k]) end
  end
  reply[1] = pack_numbers(call.numbers, call.last_number)
  return reply
end
