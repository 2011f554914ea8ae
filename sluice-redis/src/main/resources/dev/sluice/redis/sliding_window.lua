-- sliding_window: rolling windows from sub-bucket counters.
--
-- Window i has buckets of width w = aux1 = ceil(P / precision) microseconds, aligned to the
-- epoch, and counts the n + 1 most recent of them, n = aux2 = ceil(P / w). Bucket j lives in slot
-- j mod (n + 1); a slot holds (bucket index, count), and a slot whose index is not j counts 0.
--
-- Value: header, then (index, count) as two int64 per slot, window after window, then the
-- windows (values.lua).
-- Mirrors dev.sluice.algorithm.SlidingWindow.

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
    local fields, last = load_fields(call, key, it, count)
    local present = fields ~= nil
    if not fields then
      fields = {}
      for i = 1, count do fields[i] = 0 end
    end
    return {
      kind = KIND, key = key, present = present, last = last or 0, fields = fields, count = count,
      buckets = false, sums = false, curs = false,
      t = 0, fits = true, reason = REASON_NONE, ex = false,
    }
  end

  -- The position in the fields of the slot of window i's bucket j.
  local function slot(it, i, j)
    local slots = it.aux2[i] + 1
    return it.offsets[i] + 2 * (j - floordiv(j, slots) * slots)
  end

  -- At `now` (the same for every step of a call): per window the index of now's bucket (curs),
  -- the counts of the n + 1 buckets up to it, oldest first (buckets; a slot that holds an older
  -- bucket counts 0), and their sum (sums). Computed once per call, kept up to date by commit.
  -- The buckets fill every slot once, so the slot steps by one (wrapping) from the oldest's.
  local function view(state, it, now)
    if not state.buckets then
      local fields = state.fields
      local buckets, sums, curs = {}, {}, {}
      for i = 1, it.n do
        local slots = it.aux2[i] + 1
        local cur = floordiv(now, it.aux1[i])
        local j = cur - slots + 1
        local at = slot(it, i, j)
        local first, wrap = it.offsets[i], it.offsets[i] + 2 * slots
        local counts, total = {}, 0
        for k = 1, slots do
          local count = 0
          if fields[at] == j then count = fields[at + 1] end
          counts[k] = count
          total = total + count
          j = j + 1
          at = at + 2
          if at == wrap then at = first end
        end
        buckets[i], sums[i], curs[i] = counts, total, cur
      end
      state.buckets, state.sums, state.curs = buckets, sums, curs
    end
    return state.buckets, state.sums, state.curs
  end

  local function evaluate(state, it, now)
    local buckets, sums, curs = view(state, it, now)
    for i = 1, it.n do
      local used = sums[i]
      if used + it.cost > it.limit[i] then
        -- Oldest buckets leave first: the k-th oldest, bucket cur - n + k - 1, stops counting at
        -- (cur + k) * w. They hold `used`, so the cost (at most the limit) fits at the latest
        -- when all have left.
        local counts, width, cur = buckets[i], it.aux1[i], curs[i]
        local freed, retry = 0, (cur + #counts) * width - now
        for k = 1, #counts do
          freed = freed + counts[k]
          if used - freed + it.cost <= it.limit[i] then
            retry = (cur + k) * width - now
            break
          end
        end
        exceed(state, i, retry, REASON_LIMIT)
      end
    end
  end

  local function commit(call, state, it, now, undo)
    local buckets, sums, curs = view(state, it, now)
    local fields = state.fields
    local need = 0
    for i = 1, it.n do
      local width, slots, cur = it.aux1[i], it.aux2[i] + 1, curs[i]
      local at = slot(it, i, cur)
      if fields[at] ~= cur then
        fields[at] = cur
        fields[at + 1] = 0
      end
      fields[at + 1] = fields[at + 1] + it.cost
      local counts = buckets[i]
      counts[#counts] = counts[#counts] + it.cost
      sums[i] = sums[i] + it.cost
      local ends = (cur + slots) * width - now
      if ends > need then need = ends end
    end
    if undo then undo[1] = now end
    state.last = now
    state.present = true
    store_fields(call, state.key, it, now, fields, state.count, ttl_px(it, need))
  end

  local function create(call, state, it, now)
    state.last = now
    state.present = true
    store_fields(call, state.key, it, now, state.fields, state.count, ttl_px(it, 0))
  end

  local function touch(call, state, it, now)
    state.last = now
    store_last(call, state.key, now)
  end

  -- Per window: remaining, the limit less the buckets' sum; reset, when the newest bucket that
  -- counts anything leaves the window.
  local function report(state, it, now, numbers, at)
    local buckets, sums, curs = view(state, it, now)
    for i = 1, it.n do
      local counts, reset = buckets[i], 0
      for k = #counts, 1, -1 do
        if counts[k] > 0 then
          reset = (curs[i] + k) * it.aux1[i] - now
          break
        end
      end
      numbers[at + 1] = math.max(0, it.limit[i] - sums[i]) -- a carried count may exceed the limit
      numbers[at + 2] = retry_of(state, i)
      numbers[at + 3] = reset
      at = at + 3
    end
    return at
  end

  -- Undo record: the reservation's time. Its cost is taken back from the bucket it went into,
  -- if that bucket is still in its slot.
  local function refund(call, key, it, undo)
    local state = load(call, key, it)
    if not state.present then
      return
    end
    for i = 1, it.n do
      local j = floordiv(undo[1], it.aux1[i])
      local at = slot(it, i, j)
      if state.fields[at] == j then
        state.fields[at + 1] = math.max(0, state.fields[at + 1] - it.cost)
      end
    end
    store_fields(call, key, it, state.last, state.fields, state.count, nil)
  end

  sliding_window = {
    kind = KIND, prepare = prepare, load = load, evaluate = evaluate, commit = commit,
    create = create, touch = touch, report = report, refund = refund,
    reads_whole = function() return true end,
  }
end
