-- fixed_window: one counter per window, for the window [k*P, (k+1)*P) aligned to multiples of P
-- since the Unix epoch.
--
-- Value: header, then the count as int64 per window. A count belongs to the window that holds
-- the header's latest time: whenever that time moves into a new window, the count is reset, so
-- no window index needs to be stored. Mirrors dev.sluice.memory.FixedWindowState.

local FW = {}

function FW.load(key, it)
  local count, last = load_fields(key, it, it.n)
  if not count then
    count = {}
    for i = 1, it.n do count[i] = 0 end
    return {key = key, present = false, count = count}
  end
  return {key = key, present = true, last = last, count = count}
end

-- The count of window i at `now` (now >= last).
local function fw_current(s, it, now, i)
  if not s.present then
    return 0
  end
  local p = it.period[i]
  if floordiv(now, p) == floordiv(s.last, p) then
    return s.count[i]
  end
  return 0
end

local function fw_roll(s, it, now)
  for i = 1, it.n do
    s.count[i] = fw_current(s, it, now, i)
  end
  s.last = now
  s.present = true
end

function FW.evaluate(s, it, now, e)
  for i = 1, it.n do
    local p = it.period[i]
    if fw_current(s, it, now, i) + it.cost > it.limit[i] then
      e.exceeded[i] = true
      e.retry[i] = (floordiv(now, p) + 1) * p - now
      e.fits = false
      e.reason = REASON_LIMIT
    end
  end
end

function FW.commit(s, it, now, e, undo)
  fw_roll(s, it, now)
  local need = 0
  for i = 1, it.n do
    local p = it.period[i]
    s.count[i] = s.count[i] + it.cost
    local ends = (floordiv(now, p) + 1) * p - now
    if ends > need then need = ends end
  end
  if undo then undo[1] = now end
  store_fields(s.key, it.fp, now, s.count, ttl_ms(it, need))
end

function FW.create(s, it, now)
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.count, ttl_ms(it, 0))
end

function FW.touch(s, it, now)
  fw_roll(s, it, now)
  store_fields(s.key, it.fp, now, s.count, nil)
end

function FW.remaining(s, it, now, i)
  return it.limit[i] - fw_current(s, it, now, i)
end

function FW.reset(s, it, now, i)
  if fw_current(s, it, now, i) == 0 then
    return 0
  end
  local p = it.period[i]
  return (floordiv(now, p) + 1) * p - now
end

-- Undo record: the reservation's time. The cost is taken back from every window that is still
-- the one the reservation counted in; a window that has moved on no longer holds it.
function FW.refund(key, it, undo)
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
  store_fields(key, it.fp, last, count, nil)
end

ALGORITHMS[3] = FW
