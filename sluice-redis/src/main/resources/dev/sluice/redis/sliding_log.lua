-- sliding_log: exact rolling windows from one log of admitted units, shared by all windows of the
-- key, newest last, holding at most the largest limit (cap) of the key's windows. Mirrors
-- dev.sluice.algorithm.SlidingLog; the value's layout is in sliding_log_ring.lua.
--
-- A window (L, P) has room for cost c exactly when its (L - c + 1)-th most recent unit is at or
-- before now - P: one slot read per window. That rule, and the retry it gives, is log_rule in
-- sliding_log_ring.lua, which this file and sliding_log_large.lua both apply, each reading slots
-- its own way.
--
-- The ring grows with use (doubling up to 32 slots, then by a quarter at a time, up to cap), not
-- preallocated to the limit, and only while the units it would push out are still inside some
-- window; growing rewrites the value once, so it is allocated at its exact size.
--
-- This file decides a small rule, whose value is read whole: `decide` works on the value read and
-- returns the value to write, with nothing in between but locals and the rule's one call, since
-- every table field and Lua call shows in the server's time per decision. A large rule's value
-- is read slot by slot (sliding_log_large.lua, which also takes every refund).

local sliding_log
do
  -- The header without seq (at SEQ_AT), which only an admission needs.
  local HEAD_FORMAT, SEQ_AT = '<I4i8i8I4I4', 29

  -- The header of a value that holds this rule's current state: fp, last, base, head, size and
  -- the ring's length; nil when the value is absent, not a log, another definition's or from
  -- before the rule came back.
  local function current(it, raw)
    local total = raw and #raw - #it.log_trailer or 0
    if total < LOG_HEADER or (total - LOG_HEADER) % it.extra ~= 0 then
      return nil
    end
    local fp, last, base, head, size = struct.unpack(HEAD_FORMAT, raw)
    if fp ~= it.fp or last < it.fresh then
      return nil
    end
    return last, base, head, size, (total - LOG_HEADER) / it.extra
  end

  -- The new value of an admission that grows, rebases, wraps or starts the ring: its units laid
  -- out again, oldest in slot 0. Undo record: {time, seq after, units dropped before (seq -
  -- size), units this commit pushed out of a full ring, then those units' times, oldest first}.
  local function relaid(it, raw, t, undo)
    local W, cost, cap = it.extra, it.cost, it.maxlimit
    local fmt = SLOT_FORMAT[W]
    local last, base, head, size, len = current(it, raw)
    local units, seq = {}, 0
    if last then
      seq = struct.unpack('<i8', raw, SEQ_AT)
      for j = 1, size do
        units[j] = base + struct.unpack(fmt, raw, LOG_HEADER + 1 + (head - size + j - 1) % len * W)
      end
    else
      base, size, len = t, 0, 0
    end
    -- Units pushed out of a full ring that have all left every window are overwritten; else the
    -- ring grows.
    local needed = math.min(size + cost, cap)
    if needed > len then
      local over = size + cost - len
      if not (over <= size and units[over] + it.longest <= t) then
        len = log_grown(len, needed, cap)
      end
    end
    if t - base > MAX_OFFSET[W] then
      base = t - it.longest
    end
    local dropped = math.max(0, size + cost - len)
    if undo then
      undo[1], undo[2], undo[3], undo[4] = t, seq + cost, seq - size, dropped
      for k = 1, dropped do undo[4 + k] = units[k] end
    end
    local slots = {}
    for j = dropped + 1, size do slots[#slots + 1] = struct.pack(fmt, math.max(0, units[j] - base)) end
    local unit = struct.pack(fmt, t - base)
    for _ = 1, cost do slots[#slots + 1] = unit end
    local held = #slots
    return struct.pack(LOG_FORMAT, it.fp, t, base, held % len, held, seq + cost) .. table.concat(slots)
      .. string.rep('\0', (len - held) * W) .. it.log_trailer
  end

  -- The decision of item `it` on `raw`, the key's value (false: none), at `now`: reason, the
  -- time decided at, whether the value is current state, and on an admission the value to write
  -- and its TTL. Used alike by a request of one item and by each item of a larger one. Made once
  -- per item (see prepare), so that what the item fixes is in upvalues, not read from its table
  -- on every decision.
  local function decider(it)
    local cost, W, fp, fresh, over = it.cost, it.extra, it.fp, it.fresh, it.over
    local fmt, max_offset, cap = SLOT_FORMAT[W], MAX_OFFSET[W], it.maxlimit
    local px = ttl_px(it, it.longest)
    local full, unpack, trailer = it.log_full, struct.unpack, #it.log_trailer
    return function(raw, now, undo)
      -- current(), inline: a call costs more than the read. (The common admission below keeps
      -- a trailer, as it keeps every byte after the new units.)
      local total = raw and #raw - trailer or 0
      local last, base, head, size, len, value_fp
      if total >= LOG_HEADER then
        value_fp, last, base, head, size = struct.unpack(HEAD_FORMAT, raw)
        len = (total - LOG_HEADER) / W
        if value_fp ~= fp or last < fresh or len % 1 ~= 0 then last = nil end
      end
      local t = now
      if last and last > t then t = last end
      if over then
        return REASON_COST, t, last ~= nil
      end
      if not last then
        if cost == 0 then
          return REASON_NONE, t, false
        end
        return REASON_NONE, t, false, relaid(it, raw, t, undo), px
      end
      -- The rule (log_rule) on slots unpacked from the value read: slots hold t - base.
      local since = t - base
      if full(unpack, raw, head, size, len, since, 1) then
        return REASON_LIMIT, t, true
      end
      if cost == 0 then
        return REASON_NONE, t, true
      end
      if undo or len == 0 or head + cost > len or since > max_offset or (size + cost > len and len < cap) then
        return REASON_NONE, t, true, relaid(it, raw, t, undo), px
      end
      -- The common admission: the ring keeps its length (it has room, or is at cap and
      -- overwrites its oldest units, which the decision found outside every window that counts
      -- them) and the new units do not wrap around its end. The new value is the new header, the
      -- slots before the head, the new units and the slots after them, made as one string.
      local at = LOG_HEADER + head * W
      local units = string.rep(struct.pack(fmt, since), cost)
      local header = struct.pack(LOG_FORMAT, fp, t, base, (head + cost) % len, math.min(size + cost, len),
        struct.unpack('<i8', raw, SEQ_AT) + cost)
      return REASON_NONE, t, true,
        header .. string.sub(raw, LOG_HEADER + 1, at) .. units .. string.sub(raw, at + cost * W + 1), px
    end
  end

  local function prepare(it)
    log_layout(it)
    if it.log_header == LOG_HEADER then
      it.decide = decider(it)
    end
  end

  -- The value of a key with no state that records a decision's time t (explicit times).
  local function created(it, t)
    return struct.pack(LOG_FORMAT, it.fp, t, t, 0, 0, 0) .. it.log_trailer
  end

  -- Per window, from the value as decided at t: remaining, the limit less the units inside the
  -- window (binary search over the newest min(size, L)); retry, how long until the window has
  -- room for the cost (log_rule; -1: never, for a cost above the limit); reset, when the newest
  -- unit leaves it. The numbers ScriptAlgorithm.SLIDING_LOG.report works out from the same value.
  local function report(it, value, t, reason, numbers, at)
    local last, base, head, size, len = current(it, value)
    if not last then size = 0 end
    local W, cost, n, period = it.extra, it.cost, it.n, it.period
    local fmt, unpack = SLOT_FORMAT[W], struct.unpack
    local since = last and t - base
    local waits = false
    if reason == REASON_LIMIT and last then
      waits = {}
      local i, wait = it.log_full(unpack, value, head, size, len, since, 1)
      while i do
        waits[i] = wait
        i, wait = it.log_full(unpack, value, head, size, len, since, i + 1)
      end
    end
    for i = 1, n do
      local limit = it.limit[i]
      local inside, retry, reset = 0, waits and waits[i] or 0, 0
      if size > 0 then
        inside = log_inside(unpack, value, fmt, LOG_HEADER, W, head, len, math.min(limit, size), since - period[i])
        reset = math.max(0, unpack(fmt, value, LOG_HEADER + 1 + (head - 1) % len * W) + period[i] - since)
      end
      if reason == REASON_COST then
        retry = cost > limit and -1 or 0
      end
      numbers[at + 1], numbers[at + 2], numbers[at + 3] = limit - inside, retry, reset
      at = at + 3
    end
    return at
  end

  sliding_log = {
    kind = 1, prepare = prepare, created = created, report = report,
    refund = sliding_log_large.refund,
    -- The client reads a one-item request's report from the value (ScriptAlgorithm.SLIDING_LOG.report).
    reported_by_value = function() return true end,
    reads_whole = function() return true end,
    -- A large rule is decided slot by slot.
    variant = function(it) return it.log_header == LOG_HEADER and sliding_log or sliding_log_large end,
  }
end
