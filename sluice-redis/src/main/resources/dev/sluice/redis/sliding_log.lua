-- sliding_log: exact rolling windows from one log of admitted units, shared by all windows of the
-- key, newest last, holding at most the largest limit (cap) of the key's windows. Mirrors
-- dev.sluice.memory.SlidingLogState; the value's layout is in sliding_log_ring.lua.
--
-- A window (L, P) has room for cost c exactly when its (L - c + 1)-th most recent unit is at or
-- before now - P: one slot read per window.
--
-- The ring grows with use (doubling up to 32 slots, then by a quarter at a time, up to cap), not
-- preallocated to the limit, and only while the units it would push out are still inside some
-- window; growing rewrites the value once, so it is allocated at its exact size.

local sliding_log
do
  local KIND = 1

  -- `spare`: a state this algorithm made for an earlier request of the call, refilled rather
  -- than made again (a batch decides many requests of one item).
  local function load(call, key, it, spare)
    local W, hdr = it.extra, it.log_header
    local s = spare
    if s then
      s.key, s.present, s.last, s.value, s.W, s.fmt = key, false, 0, false, W, SLOT_FORMAT[W]
      s.raw, s.ring, s.base, s.head, s.size, s.seq, s.len = false, false, 0, 0, 0, 0, 0
      s.hdr, s.cur, s.t, s.fits, s.reason, s.ex = hdr, false, 0, true, REASON_NONE, false
      local ex = s.spare
      for i = 1, it.n do ex[i] = false end
    else
      s = {
        kind = KIND, key = key, present = false, last = 0, value = false, W = W, fmt = SLOT_FORMAT[W],
        raw = false, ring = false, base = 0, head = 0, size = 0, seq = 0, len = 0, hdr = hdr,
        cur = false, t = 0, fits = true, reason = REASON_NONE, ex = false, spare = {},
      }
    end
    if hdr == LOG_HEADER then
      -- Every value of this rule is small: read whole. (A large value of another rule
      -- definition is read whole once, then replaced.)
      local raw = read_value(call, key) or ''
      local total = #raw
      s.value = raw
      if total < hdr or (total - hdr) % W ~= 0 then
        return s
      end
      local fp, last, base, head, size, seq = struct.unpack(LOG_FORMAT, raw)
      if fp ~= it.fp or last < it.fresh then
        return s
      end
      s.present, s.last, s.base, s.head, s.size, s.seq = true, last, base, head, size, seq
      s.len = (total - hdr) / W
      s.raw = raw
      return s
    end
    -- A large rule's value: its first LOG_CACHED bytes, which are the whole value while it is
    -- small; the slots of a larger one are read as they are needed.
    local raw = redis.call('GETRANGE', key, 0, LOG_CACHED - 1)
    if #raw < hdr then
      return s
    end
    -- fp, last, base, head, size, seq, len, then how many units are inside each window.
    local v = {struct.unpack(it.log_format, raw)}
    if v[1] ~= it.fp or v[2] < it.fresh then
      return s
    end
    local total = hdr + v[7] * W
    if total < #raw then
      return s
    end
    local seq = v[6]
    local cur = {}
    for i = 1, it.n do
      cur[i] = seq - v[7 + i]
    end
    s.present, s.last, s.base, s.head, s.size, s.seq = true, v[2], v[3], v[4], v[5], seq
    s.len, s.cur, s.ring = v[7], cur, {}
    if total == #raw then
      s.raw = raw
    end
    return s
  end

  -- The decision: every window has room for the cost at t.
  local function evaluate(s, it, t)
    if not s.present then
      return
    end
    local size, limit, period, cost = s.size, it.limit, it.period, it.cost
    for i = 1, it.n do
      local k = limit[i] - cost + 1 -- the unit that must have left the window
      if k <= size then
        local expires = log_recent(s, k) + period[i]
        if expires > t then
          exceed(s, i, expires - t, REASON_LIMIT)
        end
      end
    end
  end

  -- The ring length a commit of `cost` at t needs: grown while the units it would push out are
  -- still inside some window; a full ring whose oldest units have left every window overwrites
  -- them instead, since they can no longer deny or count anything.
  local function ring_length(s, it, t)
    local len, cost = s.len, it.cost
    local needed = math.min(s.size + cost, it.maxlimit)
    if needed <= len then
      return len
    end
    local over = s.size + cost - len
    if over <= s.size and log_recent(s, s.size - over + 1) + it.longest <= t then
      return len
    end
    -- Small rings double (each growth rewrites the value), larger ones grow by a quarter.
    local grown = len - floordiv(-len, 4)
    if len < 32 then grown = 2 * len end
    return math.min(it.maxlimit, math.max(needed, grown, 4))
  end

  -- Undo record: {time, seq after, units dropped before (seq - size), units this commit pushed
  -- out of a full ring, then those units' times, oldest first}.
  local function commit(call, s, it, t, undo)
    local cost = it.cost
    if not s.present then
      s.size, s.seq, s.head, s.base, s.len, s.raw = 0, 0, 0, t, 0, false
      if s.hdr > LOG_HEADER then s.cur = log_no_cursors(it) end
    end
    local len = ring_length(s, it, t)
    local base = s.base
    if t - base > MAX_OFFSET[s.W] then
      base = t - it.longest
    end
    if not s.present or len ~= s.len or base ~= s.base then
      log_rebuild(s, len, base)
    end
    -- cost <= cap and cost <= needed <= len: the new units fit in the ring.
    local dropped = math.max(0, s.size + cost - s.len)
    if undo then
      undo[1], undo[2], undo[3], undo[4] = t, s.seq + cost, s.seq - s.size, dropped
      if dropped > 0 then
        local old = log_read(s, s.head - s.size, dropped)
        for k = 1, dropped do
          undo[4 + k] = s.base + struct.unpack(s.fmt, old, (k - 1) * s.W + 1)
        end
      end
    end
    local head = s.head
    local units = string.rep(struct.pack(s.fmt, t - s.base), cost)
    s.head = (head + cost) % s.len
    s.size = s.size + cost - dropped
    s.seq = s.seq + cost
    s.last = t
    s.present = true
    local ttl = ttl_px(it, it.longest)
    if s.raw and head + cost <= s.len then
      -- The common admission: the new value is the new header, the slots before the head, the
      -- new units and the slots after them, made as one string.
      local at = s.hdr + head * s.W
      s.raw = log_header(s, it) .. string.sub(s.raw, s.hdr + 1, at) .. units
        .. string.sub(s.raw, at + cost * s.W + 1)
      write_value(call, s.key, s.raw, ttl)
      s.value = s.raw
      return
    end
    log_write(call, s, head, units)
    if s.cur and not s.raw then log_advance(s, it, t) end
    log_persist(call, s, it, ttl)
  end

  -- A decision on a key with no state still records its time, as the memory store does.
  local function create(call, s, it, t)
    s.size, s.seq, s.head, s.base, s.len, s.last = 0, 0, 0, t, 0, t
    s.present = true
    if s.hdr > LOG_HEADER then s.cur = log_no_cursors(it) end
    s.raw = string.rep('\0', s.hdr)
    log_persist(call, s, it, ttl_px(it, 0))
  end

  local function touch(call, s, it, t)
    s.last = t
    store_last(call, s.key, t)
  end

  -- Per window: remaining, the units admitted in (t - P, t] (from the cursor, or counted by
  -- binary search over the newest min(size, L)); retry; reset, when the newest unit leaves it.
  local function report(s, it, t, out, o)
    local size, cur = s.size, s.cur
    local held = s.present and size > 0
    -- A value held whole is searched here; the cursors are used where each probe is a read.
    if s.raw then
      cur = false
    elseif cur and held then
      log_advance(s, it, t)
    end
    local newest = held and log_recent(s, 1) or 0
    for i = 1, it.n do
      local limit, period = it.limit[i], it.period[i]
      local inside, reset = 0, 0
      if held then
        if cur then
          inside = s.seq - cur[i]
        else
          inside = log_inside(s, math.min(limit, size), t - period - s.base)
        end
        reset = math.max(0, newest + period - t)
      end
      out[o + 1] = limit - inside
      out[o + 2] = retry_of(s, i)
      out[o + 3] = reset
      o = o + 3
    end
    return o
  end

  -- A small rule's value, which the client reads as the report (Replies.slidingLog).
  local function value_of(s, it)
    return it.log_header == LOG_HEADER and s.present and s.value
  end

  -- Takes a reservation's c units (all stamped with its time) out of the log.
  --
  -- The reservation's units are the block that `seq after` points at; units admitted since sit
  -- newer than it and are moved c slots older, closing the gap. If the ring was full, units were
  -- pushed out meanwhile: when only the reservation pushed any, they are put back exactly from
  -- the undo record; when later commits pushed more, the ones they pushed are unknown, so the
  -- freed slots take the oldest remaining unit's time instead — no earlier than the lost ones,
  -- so the log may over-count for a while (a false deny), never under-count. If the block is not
  -- found where expected (the key was reset or rewritten), nothing is taken back.
  local function refund(call, key, it, undo)
    local s = load(call, key, it, nil)
    if not s.present then
      return
    end
    local t, seq_after, dropped_before, pushed_out = undo[1], undo[2], undo[3], undo[4]
    local c = it.cost
    local newer = s.seq - seq_after
    if newer < 0 or newer + c > s.size or t < s.base then
      return
    end
    if log_read(s, s.head - newer - c, c) ~= string.rep(struct.pack(s.fmt, t - s.base), c) then
      return
    end
    local was_full = s.size == s.len
    local drops = (s.seq - s.size) - dropped_before
    log_write(call, s, s.head - newer - c, log_read(s, s.head - newer, newer))
    s.head = (s.head - c) % s.len
    s.size = s.size - c
    s.seq = s.seq - c
    local fill = ''
    if drops == pushed_out then
      local parts = {}
      for k = 1, pushed_out do
        parts[k] = struct.pack(s.fmt, math.max(0, undo[4 + k] - s.base))
      end
      fill = table.concat(parts)
    elseif drops > 0 and was_full then
      local oldest = t
      if s.size > 0 then
        oldest = log_recent(s, s.size)
      end
      fill = string.rep(struct.pack(s.fmt, oldest - s.base), math.min(c, drops))
    end
    local refilled = #fill / s.W
    log_write(call, s, s.head - s.size - refilled, fill)
    s.size = s.size + refilled
    if s.cur then
      -- Units moved: search every window from the oldest unit held again.
      for i = 1, it.n do s.cur[i] = s.seq - s.size end
    end
    log_persist(call, s, it, nil)
  end

  sliding_log = {
    kind = KIND, prepare = log_layout, load = load, evaluate = evaluate, commit = commit,
    create = create, touch = touch, report = report, refund = refund, value_of = value_of,
    reads_whole = function(it) return it.log_header == LOG_HEADER end,
  }
end
