-- sliding_log on a large rule (one whose values can reach LOG_CACHED bytes), read and written slot
-- by slot with the window cursors of sliding_log_ring.lua; also every sliding_log refund, of
-- small rules as of large. The decision is the one of sliding_log.lua, log_rule in
-- sliding_log_ring.lua, on slots read one by one.

local sliding_log_large
do
  local KIND = 1

  -- `spare`: a state this algorithm made for an earlier request of the call, refilled rather
  -- than made again (a batch decides many requests of one item).
  local function load(call, key, it, spare)
    local W, hdr = it.extra, it.log_header
    local state = spare
    if state then
      state.key, state.present, state.last, state.value, state.W, state.fmt = key, false, 0, false, W, SLOT_FORMAT[W]
      state.raw, state.ring, state.base, state.head, state.size, state.seq, state.len = false, false, 0, 0, 0, 0, 0
      state.hdr, state.cur, state.t, state.fits, state.reason, state.ex = hdr, false, 0, true, REASON_NONE, false
      state.prefix, state.trailer = false, it.log_trailer
      local ex = state.spare
      for i = 1, it.n do ex[i] = false end
    else
      state = {
        kind = KIND, key = key, present = false, last = 0, value = false, W = W, fmt = SLOT_FORMAT[W],
        raw = false, ring = false, base = 0, head = 0, size = 0, seq = 0, len = 0, hdr = hdr,
        cur = false, t = 0, fits = true, reason = REASON_NONE, ex = false, spare = {}, prefix = false,
        trailer = it.log_trailer,
      }
    end
    if hdr == LOG_HEADER then
      -- Every value of this rule is small: read whole. (A large value of another rule
      -- definition is read whole once, then replaced.)
      local raw = read_value(call, key) or ''
      local total = #raw - #it.log_trailer
      state.value = raw
      if total < hdr or (total - hdr) % W ~= 0 then
        return state
      end
      local fp, last, base, head, size, seq = struct.unpack(LOG_FORMAT, raw)
      if fp ~= it.fp or last < it.fresh then
        return state
      end
      state.present, state.last, state.base, state.head, state.size, state.seq = true, last, base, head, size, seq
      state.len = (total - hdr) / W
      state.raw = raw
      return state
    end
    -- A large rule's value: its first LOG_CACHED bytes, which are the whole value while it is
    -- small; the slots of a larger one are read as they are needed.
    local raw = redis.call('GETRANGE', key, 0, LOG_CACHED - 1)
    if #raw < hdr then
      state.prefix = raw
      return state
    end
    -- fp, last, base, head, size, seq, len, then how many units are inside each window.
    local header = {struct.unpack(it.log_format, raw)}
    if header[1] ~= it.fp or header[2] < it.fresh then
      state.prefix = raw
      return state
    end
    local total = hdr + header[7] * W + #it.log_trailer
    if total < #raw then
      return state
    end
    local seq = header[6]
    local cur = {}
    for i = 1, it.n do
      cur[i] = seq - header[7 + i]
    end
    state.present, state.last, state.base, state.head, state.size, state.seq = true, header[2], header[3], header[4], header[5], seq
    state.len, state.cur, state.ring = header[7], cur, {}
    if total == #raw then
      state.raw = raw
    end
    return state
  end

  -- The decision: every window has room for the cost at t.
  local function evaluate(state, it, t)
    if not state.present then
      return
    end
    local full, head, size, len, since = it.log_full, state.head, state.size, state.len, t - state.base
    local i, wait = full(log_slot_at, state, head, size, len, since, 1)
    while i do
      exceed(state, i, wait, REASON_LIMIT)
      i, wait = full(log_slot_at, state, head, size, len, since, i + 1)
    end
  end

  -- The ring length a commit of `cost` at t needs: grown while the units it would push out are
  -- still inside some window; a full ring whose oldest units have left every window overwrites
  -- them instead, since they can no longer deny or count anything.
  local function ring_length(state, it, t)
    local len, cost = state.len, it.cost
    local needed = math.min(state.size + cost, it.maxlimit)
    if needed <= len then
      return len
    end
    local over = state.size + cost - len
    if over <= state.size and log_recent(state, state.size - over + 1) + it.longest <= t then
      return len
    end
    return log_grown(len, needed, it.maxlimit)
  end

  -- Undo record: {time, seq after, units dropped before (seq - size), units this commit pushed
  -- out of a full ring, then those units' times, oldest first}.
  local function commit(call, state, it, t, undo)
    local cost = it.cost
    if not state.present then
      state.size, state.seq, state.head, state.base, state.len, state.raw = 0, 0, 0, t, 0, false
      if state.hdr > LOG_HEADER then state.cur = log_no_cursors(it) end
    end
    local len = ring_length(state, it, t)
    local base = state.base
    if t - base > MAX_OFFSET[state.W] then
      base = t - it.longest
    end
    if not state.present or len ~= state.len or base ~= state.base then
      log_rebuild(state, len, base)
    end
    -- cost <= cap and cost <= needed <= len: the new units fit in the ring.
    local dropped = math.max(0, state.size + cost - state.len)
    if undo then
      undo[1], undo[2], undo[3], undo[4] = t, state.seq + cost, state.seq - state.size, dropped
      if dropped > 0 then
        local old = log_read(state, state.head - state.size, dropped)
        for k = 1, dropped do
          undo[4 + k] = state.base + struct.unpack(state.fmt, old, (k - 1) * state.W + 1)
        end
      end
    end
    local head = state.head
    local units = string.rep(struct.pack(state.fmt, t - state.base), cost)
    state.head = (head + cost) % state.len
    state.size = state.size + cost - dropped
    state.seq = state.seq + cost
    state.last = t
    state.present = true
    local ttl = ttl_px(it, it.longest)
    if state.raw and head + cost <= state.len then
      -- The common admission: the new value is the new header, the slots before the head, the
      -- new units and the slots after them, made as one string.
      local at = state.hdr + head * state.W
      state.raw = log_header(state, it) .. string.sub(state.raw, state.hdr + 1, at) .. units
        .. string.sub(state.raw, at + cost * state.W + 1)
      write_value(call, state.key, state.raw, ttl)
      state.value = state.raw
      return
    end
    log_write(call, state, head, units)
    if state.cur and not state.raw then log_advance(state, it, t) end
    log_persist(call, state, it, ttl)
  end

  -- A decision on a key with no state still records its time, as the memory store does.
  local function create(call, state, it, t)
    state.size, state.seq, state.head, state.base, state.len, state.last = 0, 0, 0, t, 0, t
    state.present = true
    if state.hdr > LOG_HEADER then state.cur = log_no_cursors(it) end
    state.raw = string.rep('\0', state.hdr) .. state.trailer
    log_persist(call, state, it, ttl_px(it, 0))
  end

  local function touch(call, state, it, t)
    state.last = t
    store_last(call, state.key, t)
  end

  -- Per window: remaining, the units admitted in (t - P, t] (from the cursor, or counted by
  -- binary search over the newest min(size, L)); retry; reset, when the newest unit leaves it.
  local function report(state, it, t, numbers, at)
    local size, cur = state.size, state.cur
    local held = state.present and size > 0
    -- A value held whole is searched here; the cursors are used where each probe is a read.
    if state.raw then
      cur = false
    elseif cur and held then
      log_advance(state, it, t)
    end
    local newest = held and log_recent(state, 1) or 0
    for i = 1, it.n do
      local limit, period = it.limit[i], it.period[i]
      local inside, reset = 0, 0
      if held then
        if cur then
          inside = state.seq - cur[i]
        else
          inside = log_inside(log_slot_at, state, state.fmt, state.hdr, state.W, state.head, state.len,
            math.min(limit, size), t - period - state.base)
        end
        reset = math.max(0, newest + period - t)
      end
      numbers[at + 1] = limit - inside
      numbers[at + 2] = retry_of(state, i)
      numbers[at + 3] = reset
      at = at + 3
    end
    return at
  end

  -- Takes a reservation's c units (all stamped with its time) out of the log.
  --
  -- The reservation's units are the block that `seq after` points at; units admitted since sit
  -- newer than it and are moved c slots older, closing the gap. If the ring was full, units were
  -- pushed out meanwhile: when only the reservation pushed any, the newest c of them are put back
  -- exactly from the undo record (a give-back of part of a take frees only c slots); when later
  -- commits pushed more, the ones they pushed are unknown, and nothing stands in for them: a
  -- commit pushes out only units that have left every window (the ring grows otherwise, and a
  -- full-size ring's oldest units have left every window once the cost fits), and windows only
  -- move on, so no window would count them again. If the block is not found where expected (the
  -- key was reset or rewritten), nothing is taken back.
  local GIVE_BACK_MOVES = 64

  local function refund(call, key, it, undo)
    local state = load(call, key, it, nil)
    if not state.present then
      return
    end
    local t, seq_after, dropped_before, pushed_out = undo[1], undo[2], undo[3], undo[4]
    local cost = it.cost
    local newer = state.seq - seq_after
    -- Past 64 later units per unit given back, the move costs more than the units are worth: they
    -- stay counted until the window forgets them (a false deny at worst).
    if newer < 0 or newer + cost > state.size or t < state.base or newer > GIVE_BACK_MOVES * cost then
      return
    end
    if log_read(state, state.head - newer - cost, cost) ~= string.rep(struct.pack(state.fmt, t - state.base), cost) then
      return
    end
    local drops = (state.seq - state.size) - dropped_before
    log_write(call, state, state.head - newer - cost, log_read(state, state.head - newer, newer))
    state.head = (state.head - cost) % state.len
    state.size = state.size - cost
    state.seq = state.seq - cost
    local fill = ''
    if drops == pushed_out then
      -- Only the c slots taken back are free: the newest c of the units pushed out go back.
      local parts = {}
      for k = math.max(1, pushed_out - cost + 1), pushed_out do
        parts[#parts + 1] = struct.pack(state.fmt, math.max(0, undo[4 + k] - state.base))
      end
      fill = table.concat(parts)
    end
    local refilled = #fill / state.W
    log_write(call, state, state.head - state.size - refilled, fill)
    state.size = state.size + refilled
    if state.cur then
      -- Units moved: search every window from the oldest unit held again.
      for i = 1, it.n do state.cur[i] = state.seq - state.size end
    end
    log_persist(call, state, it, nil)
  end

  sliding_log_large = {
    kind = KIND, load = load, evaluate = evaluate, commit = commit, create = create,
    touch = touch, report = report, refund = refund, reads_whole = function() return false end,
  }
end
