-- fixed_window: one counter per window, for the window [k*P, (k+1)*P) aligned to multiples of P
-- since the Unix epoch.
--
-- Value: header, then the count as int64 per window. A count belongs to the window that holds
-- the header's latest time: whenever that time moves into a new window, the count is reset, so
-- no window index needs to be stored. Mirrors dev.sluice.memory.FixedWindowState.

ALGORITHMS[3] = function()
  local function load(key, it)
    local count, last = load_fields(key, it, it.n)
    if not count then
      count = {}
      for i = 1, it.n do count[i] = 0 end
      return {key = key, present = false, last = 0, count = count, t = 0, fits = true, reason = REASON_NONE, ex = false}
    end
    return {key = key, present = true, last = last, count = count, t = 0, fits = true, reason = REASON_NONE, ex = false}
  end

  -- The count of window i at `now` (now >= last).
  local function current(s, it, now, i)
    if not s.present then
      return 0
    end
    local p = it.period[i]
    if floordiv(now, p) == floordiv(s.last, p) then
      return s.count[i]
    end
    return 0
  end

  local function roll(s, it, now)
    for i = 1, it.n do
      s.count[i] = current(s, it, now, i)
    end
    s.last = now
    s.present = true
  end

  local function evaluate(s, it, now)
    for i = 1, it.n do
      if current(s, it, now, i) + it.cost > it.limit[i] then
        local p = it.period[i]
        exceed(s, i, (floordiv(now, p) + 1) * p - now, REASON_LIMIT)
      end
    end
  end

  local function commit(s, it, now, undo)
    roll(s, it, now)
    local need = 0
    for i = 1, it.n do
      local p = it.period[i]
      s.count[i] = s.count[i] + it.cost
      local ends = (floordiv(now, p) + 1) * p - now
      if ends > need then need = ends end
    end
    if undo then undo[1] = now end
    store_fields(s.key, it.fp, now, s.count, it.n, ttl_ms(it, need))
  end

  local function create(s, it, now)
    s.last = now
    s.present = true
    store_fields(s.key, it.fp, now, s.count, it.n, ttl_ms(it, 0))
  end

  -- Counts of windows the time has moved out of are reset with it.
  local function touch(s, it, now)
    roll(s, it, now)
    store_fields(s.key, it.fp, now, s.count, it.n, nil)
  end

  -- Per window: remaining, the limit less the current count; reset, the window's end if it
  -- counts anything.
  local function report(s, it, now, out, o)
    local ex = s.ex
    for i = 1, it.n do
      local count = current(s, it, now, i)
      local reset = 0
      if count > 0 then
        local p = it.period[i]
        reset = (floordiv(now, p) + 1) * p - now
      end
      out[o + 1] = it.limit[i] - count
      out[o + 2] = ex and ex[i] or 0
      out[o + 3] = reset
      o = o + 3
    end
    return o
  end

  -- Undo record: the reservation's time. The cost is taken back from every window that is still
  -- the one the reservation counted in; a window that has moved on no longer holds it.
  local function refund(key, it, undo)
    local count, last = load_fields(key, it, it.n)
    if not count then
      return
    end
    for i = 1, it.n do
      local p = it.period[i]
      if floordiv(last, p) == floordiv(undo[1], p) then
        count[i] = math.max(0, count[i] - it.cost)
      end
    end
    store_fields(key, it.fp, last, count, it.n, nil)
  end

  return {
    load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund,
  }
end
