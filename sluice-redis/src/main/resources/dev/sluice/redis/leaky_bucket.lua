-- leaky_bucket: shaping. Each window keeps the time its next unit may start; its slots are
-- T = ceil(P / L) apart (aux1). A request starts at the latest of now and every window's next
-- slot and waits (start - now); it is denied if some window's queue is longer than max_wait
-- (extra, microseconds). An admitted request of cost c moves every window's next slot to
-- start + c*T.
--
-- Value: header, then the next slot as int64 per window. Absent: every slot free (-inf).
-- Mirrors dev.sluice.memory.LeakyBucketState.

local leaky_bucket
do
  local KIND = 5

  local function load(call, key, it)
    local nxt, last = load_fields(call, key, it, it.n)
    if not nxt then
      nxt = {}
      for i = 1, it.n do nxt[i] = NEVER end
      return {
        kind = KIND, key = key, present = false, last = 0, next = nxt, start = 0, t = 0, fits = true,
        reason = REASON_NONE, ex = false,
      }
    end
    return {
      kind = KIND, key = key, present = true, last = last, next = nxt, start = 0, t = 0, fits = true,
      reason = REASON_NONE, ex = false,
    }
  end

  local function evaluate(s, it, now)
    local nxt = s.next
    local start = now
    for i = 1, it.n do
      if nxt[i] > start then start = nxt[i] end
    end
    s.start = start
    for i = 1, it.n do
      local over = nxt[i] - now - it.extra
      if over > 0 then
        exceed(s, i, over, REASON_WAIT)
      end
    end
  end

  local function commit(call, s, it, now, undo)
    local nxt = s.next
    local need = 0
    if undo then undo[1] = s.start end
    for i = 1, it.n do
      -- A slot before now is as good as now: record it as now so the undo record stays finite.
      if undo then undo[i + 1] = math.max(nxt[i], now) end
      nxt[i] = s.start + it.cost * it.aux1[i]
      if nxt[i] - now > need then need = nxt[i] - now end
    end
    s.last = now
    s.present = true
    store_fields(call, s.key, it.fp, now, nxt, it.n, ttl_px(it, need))
  end

  local function create(call, s, it, now)
    s.last = now
    s.present = true
    store_fields(call, s.key, it.fp, now, s.next, it.n, ttl_px(it, 0))
  end

  local function touch(call, s, it, now)
    s.last = now
    store_last(call, s.key, now)
  end

  -- Per window: remaining, the slots still free within max_wait; reset, when the queue is empty.
  local function report(s, it, now, out, o)
    local nxt = s.next
    for i = 1, it.n do
      local queued = nxt[i] - now
      if queued < 0 then queued = 0 end
      local remaining = 0
      if queued <= it.extra then
        remaining = math.min(it.limit[i], floordiv(it.extra - queued, it.aux1[i]) + 1)
      end
      out[o + 1] = remaining
      out[o + 2] = retry_of(s, i)
      out[o + 3] = queued
      o = o + 3
    end
    return o
  end

  -- Undo record: the reservation's start, then each window's next slot before it. The slots are
  -- given back only if no later request was scheduled behind the reservation; otherwise moving
  -- them back would let a new request start closer than T to that later one, so the reserved
  -- slot is left as a gap (a delay, never a burst).
  local function refund(call, key, it, undo)
    local nxt, last = load_fields(call, key, it, it.n)
    if not nxt then
      return
    end
    for i = 1, it.n do
      if nxt[i] ~= undo[1] + it.cost * it.aux1[i] then
        return
      end
    end
    for i = 1, it.n do
      nxt[i] = undo[i + 1]
    end
    store_fields(call, key, it.fp, last, nxt, it.n, nil)
  end

  leaky_bucket = {
    kind = KIND, load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund,
    reads_whole = function() return true end,
  }
end
