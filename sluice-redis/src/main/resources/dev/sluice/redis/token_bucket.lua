-- token_bucket: GCRA, one theoretical arrival time (TAT) per window.
--
-- aux1 = T, the emission interval ceil(P / L) in microseconds (at least 1). An empty bucket holds
-- L units; cost c fits when max(TAT, now) + c*T - now <= L*T.
--
-- Value: header, then TAT as int64 per window. An absent value is a full bucket (TAT = -inf).
-- Mirrors dev.sluice.memory.TokenBucketState.

ALGORITHMS[4] = function()
  -- States by the item's position in the request (k), reused from call to call as the sliding
  -- log's are (k is nil for a refund).
  local POOL = {}

  local function load(key, it, k)
    local tat, last = load_fields(key, it, it.n)
    local present = true
    if not tat then
      tat = {}
      for i = 1, it.n do tat[i] = NEVER end
      present, last = false, 0
    end
    local s = k and POOL[k]
    if s then
      s.key, s.present, s.last, s.tat = key, present, last, tat
      s.t, s.fits, s.reason, s.ex = 0, true, REASON_NONE, false
      local spare = s.spare
      for i = 1, it.n do spare[i] = false end
      return s
    end
    s = {
      key = key, present = present, last = last, tat = tat, t = 0, fits = true,
      reason = REASON_NONE, ex = false, spare = {},
    }
    if k then POOL[k] = s end
    return s
  end

  -- How far cost c at `now` overflows a window (interval T, limit L) whose TAT is tat; positive:
  -- it does not fit, and this is its retry.
  local function excess(tat, T, L, c, now)
    if tat < now then tat = now end
    return tat + c * T - now - L * T
  end

  -- A window's remaining (the whole emission intervals its TAT is ahead of now, taken from the
  -- limit) and reset (when the TAT is reached).
  local function remaining(tat, T, L, now)
    local backlog = tat - now
    if backlog < 0 then backlog = 0 end
    return L - floordiv(backlog + T - 1, T), backlog
  end

  local function evaluate(s, it, now)
    local tat, interval, limit, cost = s.tat, it.aux1, it.limit, it.cost
    for i = 1, it.n do
      local e = excess(tat[i], interval[i], limit[i], cost, now)
      if e > 0 then
        exceed(s, i, e, REASON_LIMIT)
      end
    end
  end

  local function commit(s, it, now, undo)
    local tat, interval, cost = s.tat, it.aux1, it.cost
    local need = 0
    for i = 1, it.n do
      local from = tat[i]
      if from < now then from = now end
      tat[i] = from + cost * interval[i]
      if tat[i] - now > need then need = tat[i] - now end
      if undo then undo[i] = tat[i] end
    end
    s.last = now
    s.present = true
    store_fields(s.key, it.fp, now, tat, it.n, ttl_px(it, need))
  end

  -- A decision on a key with no state still records its time, as the memory store does.
  local function create(s, it, now)
    s.last = now
    s.present = true
    store_fields(s.key, it.fp, now, s.tat, it.n, ttl_px(it, 0))
  end

  local function touch(s, it, now)
    s.last = now
    store_last(s.key, now)
  end

  -- Per window: remaining, retry, reset.
  local function report(s, it, now, out, o)
    local tat, interval, limit, ex = s.tat, it.aux1, it.limit, s.ex
    for i = 1, it.n do
      out[o + 1], out[o + 3] = remaining(tat[i], interval[i], limit[i], now)
      out[o + 2] = ex and ex[i] or 0
      o = o + 3
    end
    return o
  end

  -- One item decided before the general path builds anything, as sliding_log.lua's quick (for
  -- keys[from..to], all of this item): one GET (or one MGET for the run), one struct call,
  -- locals; a key with no current value is a full bucket, as load makes it; a denial writes
  -- nothing, an admission one SET, and the report is the value itself (see "quick path" in
  -- prelude.lua), from which the client works out each window's numbers. A key is left
  -- undecided, having written nothing and with its value left for load, when the general path
  -- must decide it (a peek that fits, a cost above a limit). Returns the position of the first key
  -- left undecided (to + 1 when none) and the report's last position. It decides as evaluate and
  -- commit above, and the differential tests compare its decisions and the reports the client
  -- makes of them with the memory store on every trace.
  local TAT = {}

  -- The TATs of a full bucket, at v[3..], as quick reads a value's.
  local FULL = {}
  for i = 1, CHUNK + 2 do FULL[i] = NEVER end

  local function quick(keys, from, to, it, now, explicit, out, b)
    local n = it.n
    -- (one struct call reads the value: up to CHUNK windows)
    if it.over or n > CHUNK then
      return from, b
    end
    local size, format, ifp, fresh = HEADER + 8 * n, header_int64s(n), it.fp, it.fresh
    local interval, limit, cost = it.aux1, it.limit, it.cost
    -- Window i denies exactly when cost overflows it (excess > 0): when its TAT is beyond
    -- t + (L - c) * T, all integers. Written out for the first two windows, their slack in locals
    -- (a window that is not there never denies: slack beyond any time), as sliding_log's quick
    -- path does; windows after the second are checked from the decoded value.
    local s1, s2 = (limit[1] - cost) * interval[1], 1 / 0
    if n > 1 then
      s2 = (limit[2] - cost) * interval[2]
    end
    -- Upvalues the loop uses, as locals (an upvalue costs an operation at each use).
    local reply, replied = REPLY, REPLIED
    local sunpack, rcall, DENIED = sunpack, rcall, -1 - REASON_LIMIT
    local seen_key, seen_value = SEEN_KEY, SEEN_VALUE
    -- The run read at once (read_run, prelude.lua); the values this call writes, kept apart.
    local values, written, off = read_run(keys, from, to, it, explicit), false, from - 1
    for r = from, to do
      local key = keys[r]
      local raw
      if values then
        raw = written and written[key] or values[r - off] or ''
      else
        raw = seen_key == key and seen_value or rcall('GET', key) or ''
      end
      -- fp, last, then the TATs of the first two windows (a2: struct's next position if n = 1);
      -- v: all of them, where needed.
      local fp, last, a1, a2, v
      if #raw == size then
        fp, last, a1, a2 = sunpack(format, raw)
      end
      if fp ~= ifp or last < fresh then
        -- No current state (absent, another size, another definition's, or from before the rule
        -- came back): a full bucket, as load makes it.
        last, a1, a2, v = 0, NEVER, NEVER, FULL
      end
      local t = now
      if last > t then t = last end
      local denied = a1 > t + s1 or a2 > t + s2
      if not denied and n > 2 then
        v = v or {sunpack(format, raw)}
        for i = 3, n do
          if v[2 + i] > t + (limit[i] - cost) * interval[i] then
            denied = true
            break
          end
        end
      end
      if denied then
        b = b + 1
        out[b] = DENIED - 4 * size
        replied = replied + 1
        reply[replied] = raw
        seen_key, seen_value = key, raw
        if explicit and t > last then
          store_last(key, t)
          seen_key = false
        end
      elseif cost == 0 then
        READ_KEY, READ_VALUE, REPLIED, SEEN_KEY, SEEN_VALUE = key, raw, replied, seen_key, seen_value
        return r, b
      else
        -- Admitted: commit's TATs and TTL (the first two windows' TATs from a1 and a2).
        local tat, need = TAT, 0
        if n > 2 and not v then
          v = {sunpack(format, raw)}
        end
        for i = 1, n do
          local at = i == 1 and a1 or i == 2 and a2 or v[2 + i]
          if at < t then at = t end
          local x = at + cost * interval[i]
          tat[i] = x
          if x - t > need then need = x - t end
        end
        local value = pack_fields(ifp, t, tat, n)
        rcall('SET', key, value, 'PX', ttl_px(it, need))
        b = b + 1
        out[b] = -1 - REASON_NONE - 4 * #value
        replied = replied + 1
        reply[replied] = value
        seen_key, seen_value = key, value
        if values then
          written = written or {}
          written[key] = value
        end
      end
    end
    READ_KEY, REPLIED, SEEN_KEY, SEEN_VALUE = false, replied, seen_key, seen_value
    return to + 1, b
  end

  -- Undo record: the TAT of each window right after the reservation. If nothing else was
  -- admitted since, taking c*T back restores the state exactly (a TAT at or before the latest
  -- time seen acts as that time). If other admissions came in between (they raised the TAT by
  -- delta), the TAT becomes max(TAT - c*T, last + delta): never below what those admissions
  -- alone would have left, so a refund never lets more through than the limit allows.
  local function refund(key, it, undo)
    local tat, last = load_fields(key, it, it.n)
    if not tat then
      return
    end
    for i = 1, it.n do
      local delta = tat[i] - undo[i]
      if delta >= 0 then
        tat[i] = math.max(tat[i] - it.cost * it.aux1[i], last + delta)
      end
    end
    store_fields(key, it.fp, last, tat, it.n, nil)
  end

  return {
    load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund, quick = quick,
  }
end
