-- fixed_window: one counter per window, for the window [k*P, (k+1)*P) aligned to multiples of P
-- since the Unix epoch.
--
-- Value: header, then the count as int64 per window, then the windows (values.lua). A count
-- belongs to the window that holds the header's latest time: whenever that time moves into a
-- new window, the count is reset, so no window index needs to be stored. Mirrors
-- dev.sluice.algorithm.FixedWindow.

local fixed_window
do
  local KIND = 3

  local function load(call, key, it)
    local count, last = load_fields(call, key, it, it.n)
    local present = count ~= nil
    if not present then
      count = {}
      for i = 1, it.n do count[i] = 0 end
    end
    return {
      kind = KIND, key = key, present = present, last = last or 0, count = count, cur = false, ends = false,
      t = 0, fits = true, reason = REASON_NONE, ex = false,
    }
  end

  -- At `now` (the decision's time, the same for every step of a call, at or after last): each
  -- window's count (0 if last lies in an earlier window) and the time until it ends. Computed
  -- once per call, kept up to date by commit.
  local function view(state, it, now)
    if not state.cur then
      local cur, ends = {}, {}
      for i = 1, it.n do
        local period = it.period[i]
        local index = floordiv(now, period)
        ends[i] = (index + 1) * period - now
        cur[i] = 0
        if state.present and index == floordiv(state.last, period) then
          cur[i] = state.count[i]
        end
      end
      state.cur, state.ends = cur, ends
    end
    return state.cur, state.ends
  end

  local function evaluate(state, it, now)
    local cur, ends = view(state, it, now)
    for i = 1, it.n do
      if cur[i] + it.cost > it.limit[i] then
        exceed(state, i, ends[i], REASON_LIMIT)
      end
    end
  end

  local function commit(call, state, it, now, undo)
    local cur, ends = view(state, it, now)
    local need = 0
    for i = 1, it.n do
      cur[i] = cur[i] + it.cost
      if ends[i] > need then need = ends[i] end
    end
    state.count, state.last, state.present = cur, now, true
    if undo then undo[1] = now end
    store_fields(call, state.key, it, now, cur, it.n, ttl_px(it, need))
  end

  local function create(call, state, it, now)
    state.last = now
    state.present = true
    store_fields(call, state.key, it, now, state.count, it.n, ttl_px(it, 0))
  end

  -- Counts of windows the time has moved out of are reset with it.
  local function touch(call, state, it, now)
    local cur = view(state, it, now)
    state.count, state.last = cur, now
    store_fields(call, state.key, it, now, cur, it.n, nil)
  end

  -- Per window: remaining, the limit less the current count; reset, the window's end if it
  -- counts anything.
  local function report(state, it, now, numbers, at)
    local cur, ends = view(state, it, now)
    for i = 1, it.n do
      -- A count carried from a larger limit (carry.lua) may be above this one.
      numbers[at + 1] = math.max(0, it.limit[i] - cur[i])
      numbers[at + 2] = retry_of(state, i)
      numbers[at + 3] = cur[i] > 0 and ends[i] or 0
      at = at + 3
    end
    return at
  end

  -- Undo record: the reservation's time. The cost is taken back from every window that is still
  -- the one the reservation counted in; a window that has moved on no longer holds it.
  local function refund(call, key, it, undo)
    local count, last = load_fields(call, key, it, it.n)
    if not count then
      return
    end
    for i = 1, it.n do
      local period = it.period[i]
      if floordiv(last, period) == floordiv(undo[1], period) then
        count[i] = math.max(0, count[i] - it.cost)
      end
    end
    store_fields(call, key, it, last, count, it.n, nil)
  end

  fixed_window = {
    kind = KIND, load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund,
    reads_whole = function() return true end,
  }
end
