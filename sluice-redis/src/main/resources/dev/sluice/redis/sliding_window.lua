-- sliding_window: rolling windows from sub-bucket counters.
--
-- Window i has buckets of width w = aux1 = ceil(P / precision) microseconds, aligned to the
-- epoch, and counts the n + 1 most recent of them, n = aux2 = ceil(P / w). Bucket j lives in slot
-- j mod (n + 1); a slot holds (bucket index, count), and a slot whose index is not j counts 0.
--
-- Value: header, then (index, count) as two int64 per slot, window after window.
-- Mirrors dev.sluice.memory.SlidingWindowState.

local SW = {}

local function sw_fields(it)
  local total = 0
  for i = 1, it.n do total = total + 2 * (it.aux2[i] + 1) end
  return total
end

function SW.load(key, it)
  local f, last = load_fields(key, it, sw_fields(it))
  local present = f ~= nil
  if not f then
    f = {}
    for i = 1, sw_fields(it) do f[i] = 0 end
  end
  -- base[i]: position in f of window i's slot 0.
  local base, pos = {}, 1
  for i = 1, it.n do
    base[i] = pos
    pos = pos + 2 * (it.aux2[i] + 1)
  end
  return {key = key, present = present, last = last, f = f, base = base}
end

local function sw_slot(s, it, i, j)
  local m = it.aux2[i] + 1
  return s.base[i] + 2 * (j - floordiv(j, m) * m)
end

local function sw_count(s, it, i, j)
  local at = sw_slot(s, it, i, j)
  if s.f[at] == j then
    return s.f[at + 1]
  end
  return 0
end

local function sw_sum(s, it, now, i)
  local cur = floordiv(now, it.aux1[i])
  local total = 0
  for j = cur - it.aux2[i], cur do
    total = total + sw_count(s, it, i, j)
  end
  return total
end

function SW.evaluate(s, it, now, e)
  for i = 1, it.n do
    local used = sw_sum(s, it, now, i)
    if used + it.cost > it.limit[i] then
      e.exceeded[i] = true
      e.fits = false
      e.reason = REASON_LIMIT
      -- Oldest buckets leave first: bucket j stops counting at (j + n + 1) * w.
      local w, n = it.aux1[i], it.aux2[i]
      local cur = floordiv(now, w)
      local freed = 0
      for j = cur - n, cur do
        freed = freed + sw_count(s, it, i, j)
        if used - freed + it.cost <= it.limit[i] then
          e.retry[i] = (j + n + 1) * w - now
          break
        end
      end
    end
  end
end

function SW.commit(s, it, now, e, undo)
  local need = 0
  for i = 1, it.n do
    local w, n = it.aux1[i], it.aux2[i]
    local cur = floordiv(now, w)
    local at = sw_slot(s, it, i, cur)
    if s.f[at] ~= cur then
      s.f[at] = cur
      s.f[at + 1] = 0
    end
    s.f[at + 1] = s.f[at + 1] + it.cost
    local ends = (cur + n + 1) * w - now
    if ends > need then need = ends end
  end
  if undo then undo[1] = now end
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.f, ttl_ms(it, need))
end

function SW.create(s, it, now)
  s.last = now
  s.present = true
  store_fields(s.key, it.fp, now, s.f, ttl_ms(it, 0))
end

function SW.touch(s, it, now)
  s.last = now
  redis.call('SETRANGE', s.key, 4, struct.pack('<i8', now))
end

function SW.remaining(s, it, now, i)
  return it.limit[i] - sw_sum(s, it, now, i)
end

function SW.reset(s, it, now, i)
  local w, n = it.aux1[i], it.aux2[i]
  local cur = floordiv(now, w)
  for j = cur, cur - n, -1 do
    if sw_count(s, it, i, j) > 0 then
      return (j + n + 1) * w - now
    end
  end
  return 0
end

-- Undo record: the reservation's time. Its cost is taken back from the bucket it went into,
-- if that bucket is still in its slot.
function SW.refund(key, it, undo)
  local s = SW.load(key, it)
  if not s.present then
    return
  end
  for i = 1, it.n do
    local j = floordiv(undo[1], it.aux1[i])
    local at = sw_slot(s, it, i, j)
    if s.f[at] == j then
      s.f[at + 1] = math.max(0, s.f[at + 1] - it.cost)
    end
  end
  store_fields(key, it.fp, s.last, s.f, nil)
end

ALGORITHMS[2] = SW
