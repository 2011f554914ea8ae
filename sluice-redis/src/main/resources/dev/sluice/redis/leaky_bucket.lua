-- leaky_bucket: shaping. Each window keeps the time its next unit may start; its slots are
-- T = ceil(P / L) apart (aux1). A request starts at the latest of now and every window's next
-- slot and waits (start - now); it is denied if some window's queue is longer than max_wait
-- (extra, microseconds). An admitted request of cost c moves every window's next slot to
-- start + c*T.
--
-- Value: header, then the next slot as int64 per window. Absent: every slot free (-inf).
-- Mirrors dev.sluice.memory.LeakyBucketState.

local LB = {}

function LB.load(key, it)
  local nxt, last = load_fields(key, it, it.n)
  if not nxt then
    nxt = {}
    for i = 1, it.n do nxt[i] = NEVER end
    return {key = key, present = false, next = nxt}
  end
  return {key = key, present = true, last = last, next = nxt}
end

function LB.evaluate(s, it, now, e)
  local start = now
  for i = 1, it.n do
    if s.next[i] > start then start = s.next[i] end
  end
  e.start = start
  for i = 1, it.n do
    local over = s.next[i] - now - it.extra
    if over > 0 then
      e.exceeded[i] = true
      e.retry[i] = over
      e.fits = false
      e.reason = REASON_WAIT
    end
  end
end

function LB.commit(s, it, now, e, undo)
  local need = 0
  if undo then undo[1] = e.start end
  for i = 1, it.n do
    -- A slot before now is as good as now: record it as now so the undo record stays finite.
    if undo then undo[i + 1] = math.max(s.next[i], now) end
    s.next[i] = e.start + it.cost * it.aux1[i]
    if s.next[i] - now > need then need = s.next[i] - now end
  end
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.next, ttl_ms(it, need))
end

function LB.create(s, it, now)
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.next, ttl_ms(it, 0))
end

function LB.touch(s, it, now)
  s.last = now
  redis.call('SETRANGE', s.key, 4, struct.pack('<i8', now))
end

function LB.remaining(s, it, now, i)
  local queued = math.max(0, s.next[i] - now)
  if queued > it.extra then
    return 0
  end
  return math.min(it.limit[i], floordiv(it.extra - queued, it.aux1[i]) + 1)
end

function LB.reset(s, it, now, i)
  return math.max(0, s.next[i] - now)
end

-- Undo record: the reservation's start, then each window's next slot before it. The slots are
-- given back only if no later request was scheduled behind the reservation; otherwise moving
-- them back would let a new request start closer than T to that later one, so the reserved
-- slot is left as a gap (a delay, never a burst).
function LB.refund(key, it, undo)
  local nxt, last = load_fields(key, it, it.n)
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
  store_fields(key, it.fp, last, nxt, nil)
end

ALGORITHMS[5] = LB
