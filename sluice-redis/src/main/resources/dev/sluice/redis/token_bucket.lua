-- token_bucket: GCRA, one theoretical arrival time (TAT) per window. Mirrors
-- dev.sluice.algorithm.TokenBucket.
--
-- aux1 = T, the emission interval ceil(P / L) in microseconds (at least 1). An empty bucket holds
-- L units; cost c fits when max(TAT, t) + c*T - t <= L*T.
--
-- Value: header, then TAT as int64 per window, then the windows (see values.lua). An absent
-- value is a full bucket (TAT = -inf).
-- `decide` works on the value read and returns the value to write, with nothing in between but
-- locals, since every table field and Lua call shows in the server's time per decision.

local token_bucket
do
  -- Window i's TAT in a current value (NEVER where there is none).
  local function tat_of(raw, present, i)
    return present and struct.unpack('<i8', raw, HEADER + 8 * i - 7) or NEVER
  end

  -- The decision of item `it` on `raw`, the key's value (false: none), at `now`: reason, the
  -- time decided at, whether the value is current state, and on an admission the value to write
  -- and its TTL. Used alike by a request of one item and by each item of a larger one. Undo record
  -- (a reservation): each window's TAT after the commit. Made once per item (see prepare), so
  -- that what the item fixes is in upvalues, not read from its table on every decision.
  local function decider(it)
    local n, cost, fp, fresh, over, interval, trailer = it.n, it.cost, it.fp, it.fresh, it.over, it.aux1, it.trailer
    local size = HEADER + 8 * n + #trailer
    -- The header and the first two windows' TATs come with one read; further windows are read
    -- one by one.
    local format = n >= 2 and '<I4i8i8i8' or '<I4i8i8'
    -- room[i]: how far window i's TAT may be ahead of the decision's time for the cost to fit,
    -- (L - c) * T: max(TAT, t) + c*T - t <= L*T exactly when TAT <= t + room[i], for a cost
    -- within the limit.
    local room = {}
    for i = 1, n do room[i] = (it.limit[i] - cost) * interval[i] end
    -- The first two windows' in upvalues, as most rules have one or two (a window that is not
    -- there never denies).
    local room1, room2 = room[1], math.huge
    if n > 1 then room2 = room[2] end
    return function(raw, now, undo)
      local value_fp, last, tat1, tat2
      if raw and #raw == size then
        value_fp, last, tat1, tat2 = struct.unpack(format, raw)
      end
      local present = value_fp == fp and last >= fresh
      if not present then
        tat1, tat2 = NEVER, NEVER
      end
      local t = now
      if present and last > t then t = last end
      if over then
        return REASON_COST, t, present
      end
      if tat1 > t + room1 or tat2 > t + room2 then
        return REASON_LIMIT, t, present
      end
      for i = 3, n do
        if tat_of(raw, present, i) > t + room[i] then
          return REASON_LIMIT, t, present
        end
      end
      if cost == 0 then
        return REASON_NONE, t, present
      end
      -- The new TATs: the first two in locals, packed with the header in one call; a table only
      -- for more windows.
      local need, new1, new2, tats = 0, nil, nil, n > 2 and {}
      for i = 1, n do
        local tat = i == 1 and tat1 or i == 2 and tat2 or tat_of(raw, present, i)
        if tat < t then tat = t end
        tat = tat + cost * interval[i]
        if i == 1 then new1 = tat elseif i == 2 then new2 = tat end
        if tats then tats[i] = tat end
        if tat - t > need then need = tat - t end
        if undo then undo[i] = tat end
      end
      local value
      if tats then
        value = pack_fields(it, t, tats, n)
      elseif n == 2 then
        value = struct.pack('<I4i8i8i8', fp, t, new1, new2) .. trailer
      else
        value = struct.pack('<I4i8i8', fp, t, new1) .. trailer
      end
      return REASON_NONE, t, present, value, ttl_px(it, need)
    end
  end

  local function prepare(it)
    it.decide = decider(it)
  end

  -- The value of a key with no state that records a decision's time t (explicit times).
  local function created(it, t)
    local tats = {}
    for i = 1, it.n do tats[i] = NEVER end
    return pack_fields(it, t, tats, it.n)
  end

  -- Per window, from the value as decided at t: remaining, the limit less the whole emission
  -- intervals the TAT is ahead of t; retry, how far the cost overflows (-1: never, for a cost
  -- above the limit); reset, when the TAT is reached. The numbers ScriptAlgorithm.TOKEN_BUCKET's
  -- report works out from the same value.
  local function report(it, value, t, reason, numbers, at)
    -- No current state is a full bucket.
    local present = current_last(it, value, it.n) ~= nil
    local interval, limit, cost = it.aux1, it.limit, it.cost
    for i = 1, it.n do
      local tat = tat_of(value, present, i)
      local backlog = math.max(0, tat - t)
      local retry = 0
      if reason == REASON_COST then
        retry = cost > limit[i] and -1 or 0
      elseif reason == REASON_LIMIT then
        retry = math.max(0, math.max(tat, t) + (cost - limit[i]) * interval[i] - t)
      end
      -- A carried backlog may exceed a full bucket.
      numbers[at + 1] = math.max(0, limit[i] - floordiv(backlog + interval[i] - 1, interval[i]))
      numbers[at + 2], numbers[at + 3] = retry, backlog
      at = at + 3
    end
    return at
  end

  -- Undo record: the TAT of each window right after the reservation. If nothing else was
  -- admitted since, taking c*T back restores the state exactly (a TAT at or before the latest
  -- time seen acts as that time). If other admissions came in between (they raised the TAT by
  -- delta), the TAT becomes max(TAT - c*T, last + delta): never below what those admissions
  -- alone would have left, so a refund never lets more through than the limit allows; nor later
  -- than it stands.
  local function refund(call, key, it, undo)
    local tat, last = load_fields(call, key, it, it.n)
    if not tat then
      return
    end
    for i = 1, it.n do
      local delta = tat[i] - undo[i]
      local back
      if delta >= 0 then
        back = math.max(tat[i] - it.cost * it.aux1[i], last + delta)
      else
        -- Other reservations were refunded since: this one's units are still in the TAT.
        back = math.max(tat[i] - it.cost * it.aux1[i], last)
      end
      -- Admissions after the reservation had drained raised the TAT by more than their units
      -- (delta spans the idle time too): a refund never moves the TAT later.
      tat[i] = math.min(tat[i], back)
    end
    store_fields(call, key, it, last, tat, it.n, nil)
  end

  token_bucket = {
    kind = 4, prepare = prepare, created = created, report = report, refund = refund,
    -- The client reads a one-item request's report from the value (ScriptAlgorithm.TOKEN_BUCKET.report).
    reported_by_value = function() return true end,
    reads_whole = function() return true end,
  }
end
