-- token_bucket: GCRA, one theoretical arrival time (TAT) per window.
--
-- aux1 = T, the emission interval ceil(P / L) in microseconds (at least 1). An empty bucket holds
-- L units; cost c fits when max(TAT, now) + c*T - now <= L*T.
--
-- Value: header, then TAT as int64 per window. An absent value is a full bucket (TAT = -inf).
-- Mirrors dev.sluice.memory.TokenBucketState.

local TB = {}

function TB.load(key, it)
  local tat, last = load_fields(key, it, it.n)
  if not tat then
    tat = {}
    for i = 1, it.n do tat[i] = NEVER end
    return {key = key, present = false, tat = tat}
  end
  return {key = key, present = true, last = last, tat = tat}
end

function TB.evaluate(s, it, now, e)
  for i = 1, it.n do
    local t = it.aux1[i]
    local excess = math.max(s.tat[i], now) + it.cost * t - now - it.limit[i] * t
    if excess > 0 then
      e.exceeded[i] = true
      e.retry[i] = excess
      e.fits = false
      e.reason = REASON_LIMIT
    end
  end
end

function TB.commit(s, it, now, e, undo)
  local need = 0
  for i = 1, it.n do
    s.tat[i] = math.max(s.tat[i], now) + it.cost * it.aux1[i]
    if s.tat[i] - now > need then need = s.tat[i] - now end
    if undo then undo[i] = s.tat[i] end
  end
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.tat, ttl_ms(it, need))
end

-- A decision on a key with no state still records its time, as the memory store does.
function TB.create(s, it, now)
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.tat, ttl_ms(it, 0))
end

function TB.touch(s, it, now)
  s.last = now
  redis.call('SETRANGE', s.key, 4, struct.pack('<i8', now))
end

function TB.remaining(s, it, now, i)
  local t = it.aux1[i]
  local backlog = math.max(0, s.tat[i] - now)
  return it.limit[i] - floordiv(backlog + t - 1, t)
end

function TB.reset(s, it, now, i)
  return math.max(0, s.tat[i] - now)
end

-- Undo record: the TAT of each window right after the reservation. If nothing else was admitted
-- since, taking c*T back restores the state exactly (a TAT at or before the latest time seen
-- acts as that time). If other admissions came in between (they raised the TAT by delta), the
-- TAT becomes max(TAT - c*T, last + delta): never below what those admissions alone would have
-- left, so a refund never lets more through than the limit allows.
function TB.refund(key, it, undo)
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
  store_fields(key, it.fp, last, tat, nil)
end

ALGORITHMS[4] = TB
