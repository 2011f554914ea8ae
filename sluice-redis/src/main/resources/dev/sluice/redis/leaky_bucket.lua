-- leaky_bucket: shaping. Each window keeps the time its next unit may start; its slots are
-- T = ceil(P / L) apart (aux1). A request starts at the latest of now and every window's next
-- slot and waits (start - now); it is denied if some window's queue is longer than max_wait
-- (extra, microseconds). An admitted request of cost c moves every window's next slot to
-- start + c*T.
--
-- Value: header, then the next slot as int64 per window, then the windows (values.lua). Absent:
-- every slot free (-inf).
-- Mirrors dev.sluice.algorithm.LeakyBucket.

local leaky_bucket
do
  local KIND = 5

  local function load(call, key, it)
    local next_start, last = load_fields(call, key, it, it.n)
    if not next_start then
      next_start = {}
      for i = 1, it.n do next_start[i] = NEVER end
      return {
        kind = KIND, key = key, present = false, last = 0, next_start = next_start, start = 0, t = 0, fits = true,
        reason = REASON_NONE, ex = false,
      }
    end
    return {
      kind = KIND, key = key, present = true, last = last, next_start = next_start, start = 0, t = 0, fits = true,
      reason = REASON_NONE, ex = false,
    }
  end

  local function evaluate(state, it, now)
    local next_start = state.next_start
    local start = now
    for i = 1, it.n do
      if next_start[i] > start then start = next_start[i] end
    end
    state.start = start
    for i = 1, it.n do
      local over = next_start[i] - now - it.extra
      if over > 0 then
        exceed(state, i, over, REASON_WAIT)
      end
    end
  end

  local function commit(call, state, it, now, undo)
    local next_start = state.next_start
    local need = 0
    if undo then undo[1] = state.start end
    for i = 1, it.n do
      -- A slot before now is as good as now: record it as now so the undo record stays finite.
      if undo then undo[i + 1] = math.max(next_start[i], now) end
      next_start[i] = state.start + it.cost * it.aux1[i]
      if next_start[i] - now > need then need = next_start[i] - now end
    end
    state.last = now
    state.present = true
    store_fields(call, state.key, it, now, next_start, it.n, ttl_px(it, need))
  end

  local function create(call, state, it, now)
    state.last = now
    state.present = true
    store_fields(call, state.key, it, now, state.next_start, it.n, ttl_px(it, 0))
  end

  local function touch(call, state, it, now)
    state.last = now
    store_last(call, state.key, now)
  end

  -- Per window: remaining, the slots still free within max_wait; reset, when the queue is empty.
  local function report(state, it, now, numbers, at)
    local next_start = state.next_start
    for i = 1, it.n do
      local queued = next_start[i] - now
      if queued < 0 then queued = 0 end
      local remaining = 0
      if queued <= it.extra then
        remaining = math.min(it.limit[i], floordiv(it.extra - queued, it.aux1[i]) + 1)
      end
      numbers[at + 1] = remaining
      numbers[at + 2] = retry_of(state, i)
      numbers[at + 3] = queued
      at = at + 3
    end
    return at
  end

  -- Undo record: the reservation's start, then each window's next slot before it. The slots are
  -- given back only if no later request was scheduled behind the reservation; otherwise moving
  -- them back would let a new request start closer than T to that later one, so the reserved
  -- slot is left as a gap (a delay, never a burst).
  local function refund(call, key, it, undo)
    local next_start, last = load_fields(call, key, it, it.n)
    if not next_start then
      return
    end
    for i = 1, it.n do
      if next_start[i] ~= undo[1] + it.cost * it.aux1[i] then
        return
      end
    end
    for i = 1, it.n do
      next_start[i] = undo[i + 1]
    end
    store_fields(call, key, it, last, next_start, it.n, nil)
  end

  leaky_bucket = {
    kind = KIND, load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund,
    reads_whole = function() return true end,
  }
end
