-- sliding_window: rolling windows from sub-bucket counters.
--
-- Window i has buckets of width w = aux1 = ceil(P / precision) microseconds, aligned to the
-- epoch, and counts the n + 1 most recent of them, n = aux2 = ceil(P / w). Bucket j lives in slot
-- j mod (n + 1); a slot holds (bucket index, count), and a slot whose index is not j counts 0.
--
-- Value: header, then (index, count) as two int64 per slot, window after window.
-- Mirrors dev.sluice.memory.SlidingWindowState.

local sliding_window
do
  local KIND = 2

  -- Once per item argument: it.fields, the int64 fields of the value after its header, and
  -- it.offsets[i], the position in those fields of window i's slot 0.
  local function prepare(it)
    local offsets, pos = {}, 1
    for i = 1, it.n do
      offsets[i] = pos
      pos = pos + 2 * (it.aux2[i] + 1)
    end
    it.fields, it.offsets = pos - 1, offsets
  end

  local function load(call, key, it)
    local count = it.fields
    local f, last = load_fields(call, key, it, count)
    local present = f ~= nil
    if not f then
      f = {}
      for i = 1, count do f[i] = 0 end
    end
    return {
      kind = KIND, key = key, present = present, last = last or 0, f = f, count = count, base = it.offsets,
      buckets = false, sums = false, curs = false,
      t = 0, fits = true, reason = REASON_NONE, ex = false,
    }
  end

  -- The position in f of the slot of window i's bucket j.
  local function slot(s, it, i, j)
    local m = it.aux2[i] + 1
    return s.base[i] + 2 * (j - floordiv(j, m) * m)
  end

  -- At `now` (the same for every step of a call): per window the index of now's bucket (curs),
  -- the counts of the n + 1 buckets up to it, oldest first (buckets; a slot that holds an older
  -- bucket counts 0), and their sum (sums). Computed once per call, kept up to date by commit.
  -- The buckets fill every slot once, so the slot steps by one (wrapping) from the oldest's.
  local function view(s, it, now)
    if not s.buckets then
      local f = s.f
      local buckets, sums, curs = {}, {}, {}
      for i = 1, it.n do
        local m = it.aux2[i] + 1
        local cur = floordiv(now, it.aux1[i])
        local j = cur - m + 1
        local at = slot(s, it, i, j)
        local first, wrap = s.base[i], s.base[i] + 2 * m
        local b, total = {}, 0
        for k = 1, m do
          local c = 0
          if f[at] == j then c = f[at + 1] end
          b[k] = c
          total = total + c
          j = j + 1
          at = at + 2
          if at == wrap then at = first end
        end
        buckets[i], sums[i], curs[i] = b, total, cur
      end
      s.buckets, s.sums, s.curs = buckets, sums, curs
    end
    return s.buckets, s.sums, s.curs
  end

  local function evaluate(s, it, now)
    local buckets, sums, curs = view(s, it, now)
    for i = 1, it.n do
      local used = sums[i]
      if used + it.cost > it.limit[i] then
        -- Oldest buckets leave first: the k-th oldest, bucket cur - n + k - 1, stops counting at
        -- (cur + k) * w. They hold `used`, so the cost (at most the limit) fits at the latest
        -- when all have left.
        local b, w, cur = buckets[i], it.aux1[i], curs[i]
        local freed, retry = 0, (cur + #b) * w - now
        for k = 1, #b do
          freed = freed + b[k]
          if used - freed + it.cost <= it.limit[i] then
            retry = (cur + k) * w - now
            break
          end
        end
        exceed(s, i, retry, REASON_LIMIT)
      end
    end
  end

  local function commit(call, s, it, now, undo)
    local buckets, sums, curs = view(s, it, now)
    local f = s.f
    local need = 0
    for i = 1, it.n do
      local w, n, cur = it.aux1[i], it.aux2[i], curs[i]
      local at = slot(s, it, i, cur)
      if f[at] ~= cur then
        f[at] = cur
        f[at + 1] = 0
      end
      f[at + 1] = f[at + 1] + it.cost
      local b = buckets[i]
      b[#b] = b[#b] + it.cost
      sums[i] = sums[i] + it.cost
      local ends = (cur + n + 1) * w - now
      if ends > need then need = ends end
    end
    if undo then undo[1] = now end
    s.last = now
    s.present = true
    store_fields(call, s.key, it.fp, now, f, s.count, ttl_px(it, need))
  end

  local function create(call, s, it, now)
    s.last = now
    s.present = true
    store_fields(call, s.key, it.fp, now, s.f, s.count, ttl_px(it, 0))
  end

  local function touch(call, s, it, now)
    s.last = now
    store_last(call, s.key, now)
  end

  -- Per window: remaining, the limit less the buckets' sum; reset, when the newest bucket that
  -- counts anything leaves the window.
  local function report(s, it, now, out, o)
    local buckets, sums, curs = view(s, it, now)
    for i = 1, it.n do
      local b, reset = buckets[i], 0
      for k = #b, 1, -1 do
        if b[k] > 0 then
          reset = (curs[i] + k) * it.aux1[i] - now
          break
        end
      end
      out[o + 1] = it.limit[i] - sums[i]
      out[o + 2] = retry_of(s, i)
      out[o + 3] = reset
      o = o + 3
    end
    return o
  end

  -- Undo record: the reservation's time. Its cost is taken back from the bucket it went into,
  -- if that bucket is still in its slot.
  local function refund(call, key, it, undo)
    local s = load(call, key, it)
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
    store_fields(call, key, it.fp, s.last, s.f, s.count, nil)
  end

  sliding_window = {
    kind = KIND, prepare = prepare, load = load, evaluate = evaluate, commit = commit, create = create, touch = touch,
    report = report, refund = refund,
    reads_whole = function() return true end,
  }
end
