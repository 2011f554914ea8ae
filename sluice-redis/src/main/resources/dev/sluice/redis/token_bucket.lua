-- token_bucket: GCRA, one theoretical arrival time (TAT) per window. Mirrors
-- dev.sluice.memory.TokenBucketState.
--
-- aux1 = T, the emission interval ceil(P / L) in microseconds (at least 1). An empty bucket holds
-- L units; cost c fits when max(TAT, now) + c*T - now <= L*T.
--
-- Value: header, then TAT as int64 per window. An absent value is a full bucket (TAT = -inf).

local token_bucket
do
  local KIND = 4

  -- `spare`: a state this algorithm made for an earlier request of the call, refilled rather
  -- than made again (a batch decides many requests of one item).
  local function load(call, key, it, spare)
    local tat, last = load_fields(call, key, it, it.n)
    local present = true
    if not tat then
      tat = {}
      for i = 1, it.n do tat[i] = NEVER end
      present, last = false, 0
    end
    local s = spare
    if s then
      s.key, s.present, s.last, s.value, s.tat = key, present, last, call.seen_value, tat
      s.t, s.fits, s.reason, s.ex = 0, true, REASON_NONE, false
      local ex = s.spare
      for i = 1, it.n do ex[i] = false end
      return s
    end
    return {
      kind = KIND, key = key, present = present, last = last, value = call.seen_value, tat = tat,
      t = 0, fits = true, reason = REASON_NONE, ex = false, spare = {},
    }
  end

  -- The decision: cost overflows no window at t. A window's excess is its retry.
  local function evaluate(s, it, t)
    local tat, interval, limit, cost = s.tat, it.aux1, it.limit, it.cost
    for i = 1, it.n do
      local from = tat[i]
      if from < t then from = t end
      local excess = from + (cost - limit[i]) * interval[i] - t
      if excess > 0 then
        exceed(s, i, excess, REASON_LIMIT)
      end
    end
  end

  -- Undo record: each window's TAT after the commit.
  local function commit(call, s, it, t, undo)
    local tat, interval, cost = s.tat, it.aux1, it.cost
    local need = 0
    for i = 1, it.n do
      local from = tat[i]
      if from < t then from = t end
      tat[i] = from + cost * interval[i]
      if tat[i] - t > need then need = tat[i] - t end
      if undo then undo[i] = tat[i] end
    end
    s.last = t
    s.present = true
    s.value = store_fields(call, s.key, it.fp, t, tat, it.n, ttl_px(it, need))
  end

  -- A decision on a key with no state still records its time, as the memory store does.
  local function create(call, s, it, t)
    s.last = t
    s.present = true
    s.value = store_fields(call, s.key, it.fp, t, s.tat, it.n, ttl_px(it, 0))
  end

  local function touch(call, s, it, t)
    s.last = t
    store_last(call, s.key, t)
  end

  -- Per window: remaining, the limit less the whole emission intervals the TAT is ahead of t;
  -- retry; reset, when the TAT is reached.
  local function report(s, it, t, out, o)
    local tat, interval, limit = s.tat, it.aux1, it.limit
    for i = 1, it.n do
      local backlog = tat[i] - t
      if backlog < 0 then backlog = 0 end
      out[o + 1] = limit[i] - floordiv(backlog + interval[i] - 1, interval[i])
      out[o + 2] = retry_of(s, i)
      out[o + 3] = backlog
      o = o + 3
    end
    return o
  end

  -- The value, which the client reads as the report (Replies.tokenBucket).
  local function value_of(s, it)
    return s.present and s.value
  end

  -- Undo record: the TAT of each window right after the reservation. If nothing else was
  -- admitted since, taking c*T back restores the state exactly (a TAT at or before the latest
  -- time seen acts as that time). If other admissions came in between (they raised the TAT by
  -- delta), the TAT becomes max(TAT - c*T, last + delta): never below what those admissions
  -- alone would have left, so a refund never lets more through than the limit allows.
  local function refund(call, key, it, undo)
    local tat, last = load_fields(call, key, it, it.n)
    if not tat then
      return
    end
    for i = 1, it.n do
      local delta = tat[i] - undo[i]
      if delta >= 0 then
        tat[i] = math.max(tat[i] - it.cost * it.aux1[i], last + delta)
      end
    end
    store_fields(call, key, it.fp, last, tat, it.n, nil)
  end

  token_bucket = {
    kind = KIND, load = load, evaluate = evaluate, commit = commit, create = create,
    touch = touch, report = report, refund = refund, value_of = value_of,
    reads_whole = function() return true end,
  }
end
