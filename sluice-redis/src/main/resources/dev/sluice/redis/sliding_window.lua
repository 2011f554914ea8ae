-- sliding_window: rolling windows from sub-bucket counters.
--
-- Window i has buckets of width w = aux1 = ceil(P / precision) microseconds, aligned to the
-- epoch, and counts the n + 1 most recent of them, n = aux2 = ceil(P / w). Bucket j lives in slot
-- j mod (n + 1); a slot holds (bucket index, count), and a slot whose index is not j counts 0.
--
-- Value: header, then (index, count) as two int64 per slot, window after window.
-- Mirrors dev.sluice.memory.SlidingWindowState.

ALGORITHMS[2] = function()
  local function fields(it)
    local total = 0
    for i = 1, it.n do total = total + 2 * (it.aux2[i] + 1) end
    return total
  end

  local function load(key, it)
    local count = fields(it)
    local f, last = load_fields(key, it, count)
    local present = f ~= nil
    if not f then
      f = {}
      for i = 1, count do f[i] = 0 end
    end
    -- base[i]: position in f of window i's slot 0.
    local base, pos = {}, 1
    for i = 1, it.n do
      base[i] = pos
      pos = pos + 2 * (it.aux2[i] + 1)
    end
    return {
      key = key, present = present, last = last or 0, f = f, count = count, base = base, t = 0, fits = true, reason = REASON_NONE, ex = false
    }
  end

  local function slot(s, it, i, j)
    local m = it.aux2[i] + 1
    return s.base[i] + 2 * (j - floordiv(j, m) * m)
  end

  local function bucket(s, it, i, j)
    local at = slot(s, it, i, j)
    if s.f[at] == j then
      return s.f[at + 1]
    end
    return 0
  end

  -- The count of the n + 1 buckets up to now's: they fill every slot once, so the slot index
  -- steps by one (wrapping) instead of being computed per bucket.
  local function sum(s, it, now, i)
    local f = s.f
    local m = it.aux2[i] + 1
    local j = floordiv(now, it.aux1[i]) - m + 1
    local at = slot(s, it, i, j)
    local wrap = s.base[i] + 2 * m
    local total = 0
    for _ = 1, m do
      if f[at] == j then
        total = total + f[at + 1]
      end
      j = j + 1
      at = at + 2
      if at == wrap then at = s.base[i] end
    end
    return total
  end

  local function evaluate(s, it, now)
    for i = 1, it.n do
      local used = sum(s, it, now, i)
      if used + it.cost > it.limit[i] then
        -- Oldest buckets leave first: bucket j stops counting at (j + n + 1) * w. They hold
        -- `used`, so the cost (at most the limit) fits at the latest when all have left.
        local w, n = it.aux1[i], it.aux2[i]
        local cur = floordiv(now, w)
        local freed, retry = 0, (cur + n + 1) * w - now
        for j = cur - n, cur do
          freed = freed + bucket(s, it, i, j)
          if used - freed + it.cost <= it.limit[i] then
            retry = (j + n + 1) * w - now
            break
          end
        end
        exceed(s, i, retry, REASON_LIMIT)
      end
    end
  end

  local function commit(s, it, now, undo)
    local need = 0
    for i = 1, it.n do
      local w, n = it.aux1[i], it.aux2[i]
      local cur = floordiv(now, w)
      local at = slot(s, it, i, cur)
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
    store_fields(s.key, it.fp, now, s.f, s.count, ttl_ms(it, need))
  end

  local function create(s, it, now)
    s.last = now
    s.present = true
    store_fields(s.key, it.fp, now, s.f, s.count, ttl_ms(it, 0))
  end

  local function touch(s, it, now)
    s.last = now
    store_last(s.key, now)
  end

  -- Per window: remaining, the limit less the buckets' sum; reset, when the newest bucket that
  -- counts anything leaves the window.
  local function report(s, it, now, out, o)
    local ex = s.ex
    for i = 1, it.n do
      local w, n = it.aux1[i], it.aux2[i]
      local cur = floordiv(now, w)
      local reset = 0
      for j = cur, cur - n, -1 do
        if bucket(s, it, i, j) > 0 then
          reset = (j + n + 1) * w - now
          break
        end
      end
      out[o + 1] = it.limit[i] - sum(s, it, now, i)
      out[o + 2] = ex and ex[i] or 0
      out[o + 3] = reset
      o = o + 3
    end
    return o
  end

  -- Undo record: the reservation's time. Its cost is taken back from the bucket it went into,
  -- if that bucket is still in its slot.
  local function refund(key, it, undo)
    local s = load(key, it)
    if not s.present then
      return
    end
    for i = 1, it.n do
      local j = floordiv(undo[1], it.aux1[i])
      local at = slot(s, it, i, j)
      if s.f[at] == j then
        s.f[at + 1] = math.max(0, s.f[at + 1] - it.cost)
      end
    end
    store_fields(key, it.fp, s.last, s.f, s.count, nil)
  end

  return {
    load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund,
  }
end
