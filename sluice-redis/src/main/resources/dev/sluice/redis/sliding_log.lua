-- sliding_log: exact rolling windows from one log of admitted units, shared by all windows of the
-- key, newest last, holding at most the largest limit (cap) of the key's windows.
--
-- A window (L, P) has room for cost c exactly when its (L - c + 1)-th most recent unit is at or
-- before now - P: one fixed-width read. Mirrors dev.sluice.memory.SlidingLogState.
--
-- Value: a header, then a ring of `len` slots of W bytes (W = extra: 4, 6 or 8). The header:
--   fp    uint32   rule fingerprint          last  int64   latest time seen
--   base  int64    slots hold (t - base)     head  uint32  next slot to write
--   size  uint32   units held (<= len)       seq   int64   units ever admitted, less refunds
-- and, for a large rule (one whose values can reach CACHED bytes):
--   len   uint32   slots in the ring
--   then per window a uint32, its cursor: a count of the newest units that includes every unit
--   inside the window as of some commit (the last one that read the value slot by slot).
-- A slot of W bytes spans 2^(8W) us from base (4 bytes: 71 minutes; 6: 8.9 years); when now
-- outgrows that, base moves up to now - longest period and older units are clamped to it, which
-- changes no answer since they are outside every window. The Java side picks W = 4 for periods
-- up to 2^31 us (so base moves at most every 35 minutes), 6 up to 2^46 us, 8 beyond: every byte
-- of a value costs the server about 13 instructions per decision (Redis's Lua hashes it when the
-- value is read and again in the reply).
--
-- The ring grows with use (doubling up to 32 slots, then by a quarter at a time, up to cap), not
-- preallocated to the limit, and only while the units it would push out are still inside some
-- window; growing rewrites the value once, so it is allocated at its exact size.
--
-- A small rule's value is read whole with one GET and written whole with one SET (with PX: value
-- and TTL in one command); rings of up to DECODED slots are decoded with one struct call, and
-- `remaining` is a binary search over the newest L units. A large rule's value is not read whole
-- once it is large: Redis's Lua hashes every byte of every string it receives, so a 4 KB read
-- costs more than the rest of the decision. Its first CACHED bytes are read with one GETRANGE
-- (the whole value while it is that small, then handled as a small one), and beyond that its
-- slots one by one, each at most once per call. `remaining` then searches forward from the
-- window's cursor: units are stamped in order, so the units older than the cursor were outside
-- the window at that commit and have stayed outside. Galloping, then binary search, costs
-- O(log k) reads for a cursor k units behind; a commit moves the cursors up, so a decision reads
-- a few slots, however large the log.

ALGORITHMS[1] = function()
  local LOG_HEADER = 36
  local LOG_FORMAT = '<I4i8i8I4I4i8'
  -- The size of value read whole: a rule whose values can outgrow it is a large rule.
  local CACHED = 1024
  local DECODED = 32
  -- struct formats by slot width and ring length (up to DECODED): of the ring alone, and of the
  -- whole value, keyed by 100 * W + len. Building a format costs about as much as the struct call
  -- that reads it.
  local RINGS, VALUES = {}, {}
  -- By slot width: struct's code for one slot, and the largest offset from base it holds (every
  -- exact integer, for 8 bytes).
  local SLOT_CODE = {[4] = 'I4', [6] = 'I6', [8] = 'I8'}
  local SLOT = {[4] = '<I4', [6] = '<I6', [8] = '<I8'}
  local MAX_OFFSET = {[4] = 4294967295, [6] = 281474976710655, [8] = 9007199254740992}

  local function ring_format(W, len)
    local f = RINGS[100 * W + len]
    if not f then
      f = '<' .. string.rep(SLOT_CODE[W], len)
      if keep then RINGS[100 * W + len] = f end
    end
    return f
  end

  local function value_format(W, len)
    local f = VALUES[100 * W + len]
    if not f then
      f = LOG_FORMAT .. string.rep(SLOT_CODE[W], len)
      if keep then VALUES[100 * W + len] = f end
    end
    return f
  end

  -- Slot values (t - base) by position + 1, all of them for a ring of up to DECODED slots
  -- (s.ring[len + 1] is then struct's next position, unused).
  local function decode(s)
    if s.len == 0 or s.len > DECODED then
      return {}
    end
    return {sunpack(ring_format(s.W, s.len), s.raw, s.hdr + 1)}
  end

  -- The rule's layout, once per item: header size and format (with cursors for large rules).
  local function prepare(it)
    if LOG_HEADER + it.extra * it.maxlimit < CACHED then
      it.hdr, it.hfmt = LOG_HEADER, LOG_FORMAT
    else
      it.hdr, it.hfmt = LOG_HEADER + 4 + 4 * it.n, LOG_FORMAT .. string.rep('I4', 1 + it.n)
    end
  end

  -- s.raw: the whole value when it is small (or rebuilt in Lua), else false.
  -- s.ring: slot values (t - base) by position + 1 as far as read: decoded at once from a small
  -- value, else one by one (from s.raw, or with GETRANGE) as the evaluation and the report's
  -- binary searches probe them, each once.
  --
  -- States by the item's position in the request (k), reused from call to call when running as
  -- a library: resetting the fields costs half of building the table, and leaves no garbage.
  -- k is nil for a refund, which builds its own.
  local POOL = {}

  local function load(key, it, k)
    local W = it.extra -- 4, 6 or 8
    local hdr = it.hdr
    local s = k and POOL[k]
    if s then
      s.key, s.present, s.last, s.W, s.fmt, s.size = key, false, 0, W, SLOT[W], 0
      s.raw, s.ring, s.base, s.head, s.seq, s.len = false, false, 0, 0, 0, 0
      s.hdr, s.cur = hdr, false
      s.t, s.fits, s.reason, s.ex = 0, true, REASON_NONE, false
      -- The report reads ex[1..n] only: clearing those is enough.
      local spare = s.spare
      for i = 1, it.n do spare[i] = false end
    else
      s = {
        key = key, present = false, last = 0, W = W, fmt = SLOT[W], size = 0,
        raw = false, ring = false, base = 0, head = 0, seq = 0, len = 0, hdr = hdr, cur = false,
        t = 0, fits = true, reason = REASON_NONE, ex = false, spare = {},
      }
      if k then POOL[k] = s end
    end
    if hdr == LOG_HEADER then
      -- Every value of this rule is small: read whole. (A large value of another rule
      -- definition is read whole once, then replaced.)
      local raw = read_value(key) or ''
      local total = #raw
      if total < hdr or (total - hdr) % W ~= 0 then
        return s
      end
      local fp, last, base, head, size, seq = sunpack(LOG_FORMAT, raw)
      if fp ~= it.fp or last < it.fresh then
        return s
      end
      s.present, s.last, s.base, s.head, s.size, s.seq = true, last, base, head, size, seq
      s.len = (total - hdr) / W
      s.raw = raw
      s.ring = decode(s)
      return s
    end
    -- A large rule's value: its first CACHED bytes, which are the whole value while it is
    -- small; a larger one is read slot by slot. Every string a command returns to Lua is hashed
    -- byte by byte (Redis's Lua interns strings with a full hash), so reading a large value
    -- whole would cost more than the decision.
    local raw = rcall('GETRANGE', key, 0, CACHED - 1)
    if #raw < hdr then
      return s
    end
    local v = {sunpack(it.hfmt, raw)}
    -- fp, last, base, head, size, seq, len, then how many units are inside each window.
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
    s.len = v[7]
    s.cur = cur
    if total == #raw then
      s.raw = raw
      s.ring = decode(s)
    else
      s.ring = {}
    end
    return s
  end

  -- The value of slot pos + 1 (1 <= pos + 1 <= len) when not decoded yet.
  local function read_slot(s, pos)
    local off = s.hdr + pos * s.W
    local v
    if s.raw then
      v = sunpack(s.fmt, s.raw, off + 1)
    else
      v = sunpack(s.fmt, rcall('GETRANGE', s.key, int(off), int(off + s.W - 1)))
    end
    s.ring[pos + 1] = v
    return v
  end

  -- The time of the k-th most recent unit, 1 <= k <= size.
  local function recent(s, k)
    local pos = (s.head - k) % s.len
    return s.base + (s.ring[pos + 1] or read_slot(s, pos))
  end

  -- The bytes of `count` slots from slot `from` (taken modulo len), wrapping around the end.
  local function read(s, from, count)
    local bytes = ''
    if count <= 0 then
      return bytes
    end
    from = from % s.len
    while count > 0 do
      local m = math.min(count, s.len - from)
      local off = s.hdr + from * s.W
      if s.raw then
        bytes = bytes .. string.sub(s.raw, off + 1, off + m * s.W)
      else
        bytes = bytes .. rcall('GETRANGE', s.key, int(off), int(off + m * s.W - 1))
      end
      count, from = count - m, 0
    end
    return bytes
  end

  -- Writes whole slots from slot `from`, wrapping. Callers keep s.ring right.
  local function write(s, from, bytes)
    local count = #bytes / s.W
    if count <= 0 then
      return
    end
    from = from % s.len
    while count > 0 do
      local m = s.len - from
      if count < m then m = count end
      local off = s.hdr + from * s.W
      local piece = bytes
      if m < count then
        piece = string.sub(bytes, 1, m * s.W)
        bytes = string.sub(bytes, m * s.W + 1)
      end
      if s.raw then
        s.raw = string.sub(s.raw, 1, off) .. piece .. string.sub(s.raw, off + #piece + 1)
      else
        rcall('SETRANGE', s.key, int(off), piece)
      end
      count, from = count - m, 0
    end
  end

  -- Rewrites the ring as `len` slots relative to `base`, oldest unit in slot 0, into s.raw: from
  -- here on the value is built in Lua and written back with one SET.
  local function rebuild(s, len, base)
    local entries = ''
    if s.size > 0 then
      entries = read(s, s.head - s.size, s.size)
      if base ~= s.base then
        local parts = {}
        for k = 0, s.size - 1 do
          local rel = sunpack(s.fmt, entries, k * s.W + 1)
          parts[k + 1] = spack(s.fmt, math.max(0, s.base + rel - base))
        end
        entries = table.concat(parts)
      end
    end
    s.base = base
    s.len = len
    s.head = s.size % len
    s.raw = string.rep('\0', s.hdr) .. entries .. string.rep('\0', (len - s.size) * s.W)
    s.ring = decode(s)
  end

  -- Writes the header (and, when the value is held in Lua, everything) back. A commit passes the
  -- TTL; a refund keeps the one the last commit set. `whole`: s.ring holds every slot and s.raw's
  -- ring is stale, so the value is packed from s.ring with one struct call.
  local DISTANCES = {}

  local function header(s, it)
    if s.hdr == LOG_HEADER then
      return spack(LOG_FORMAT, it.fp, s.last, s.base, s.head, s.size, s.seq)
    end
    local d, cur = DISTANCES, s.cur
    for i = 1, it.n do
      local x = s.seq - cur[i]
      if x < 0 then x = 0 elseif x > s.size then x = s.size end
      d[i] = x
    end
    return spack(it.hfmt, it.fp, s.last, s.base, s.head, s.size, s.seq, s.len,
      unpack(d, 1, it.n))
  end

  local function persist(s, it, ttl, whole)
    if whole then
      if s.hdr == LOG_HEADER then
        s.raw = spack(value_format(s.W, s.len), it.fp, s.last, s.base, s.head, s.size, s.seq,
          unpack(s.ring, 1, s.len))
      else
        s.raw = header(s, it) .. spack(ring_format(s.W, s.len), unpack(s.ring, 1, s.len))
      end
      rcall('SET', s.key, s.raw, 'PX', ttl)
      return
    end
    local header = header(s, it)
    if s.raw then
      s.raw = header .. string.sub(s.raw, s.hdr + 1)
      if ttl then
        rcall('SET', s.key, s.raw, 'PX', ttl)
      else
        rcall('SET', s.key, s.raw, 'KEEPTTL')
      end
    else
      rcall('SETRANGE', s.key, 0, header)
      if ttl then
        rcall('PEXPIRE', s.key, ttl)
      end
    end
  end

  -- The slot value (t - base) of the unit of index j (seq - size <= j < seq).
  local function at(s, j)
    local pos = (s.head - (s.seq - j)) % s.len
    local ring = s.ring
    return ring[pos + 1] or read_slot(s, pos)
  end

  -- The first index in [lo, seq) whose unit is after `floor` (relative to base), or seq if none:
  -- galloping from lo, then binary search, so a cursor k units behind costs about 2 log2(k) reads.
  local function first_after(s, lo, floor)
    local seq = s.seq
    local hi, step = seq, 1
    while lo < hi do
      local j = lo + step - 1
      if j >= hi then j = hi - 1 end
      if at(s, j) > floor then
        hi = j
        break
      end
      lo = j + 1
      step = step * 2
    end
    while lo < hi do
      local mid = lo + hi
      mid = (mid - mid % 2) / 2
      if at(s, mid) > floor then
        hi = mid
      else
        lo = mid + 1
      end
    end
    return lo
  end

  -- Moves each window's cursor to its first unit inside the window at `now` (large rules).
  local function advance(s, it, now)
    local cur, seq, size = s.cur, s.seq, s.size
    for i = 1, it.n do
      local held = it.limit[i]
      if size < held then held = size end
      local lo = cur[i]
      if lo < seq - held then lo = seq - held end
      if lo > seq then lo = seq end
      cur[i] = first_after(s, lo, now - it.period[i] - s.base)
    end
  end

  local function no_cursors(it)
    local cur = {}
    for i = 1, it.n do cur[i] = 0 end
    return cur
  end

  local function evaluate(s, it, now)
    if not s.present then
      return
    end
    for i = 1, it.n do
      local k = it.limit[i] - it.cost + 1 -- the unit that must have left the window
      if k <= s.size then
        local expires = recent(s, k) + it.period[i]
        if expires > now then
          exceed(s, i, expires - now, REASON_LIMIT)
        end
      end
    end
  end

  -- Undo record: {time, seq after, units dropped before (seq - size), units this commit pushed
  -- out of a full ring, then those units' times, oldest first}.
  local function commit(s, it, now, undo)
    local c = it.cost
    local cap = it.maxlimit
    if not s.present then
      s.size, s.seq, s.head, s.base, s.len = 0, 0, 0, now, 0
      s.raw, s.ring = false, false
      if s.hdr > LOG_HEADER then s.cur = no_cursors(it) end
    end
    local len = s.len
    local needed = s.size + c
    if needed > cap then needed = cap end
    if needed > len then
      -- A full ring whose units to be pushed out have all left every window overwrites them
      -- instead of growing: they can no longer deny or count anything.
      local over = s.size + c - len
      local expired = over <= s.size and recent(s, s.size - over + 1) + it.longest <= now
      if not expired then
        -- Small rings double (each growth rewrites the value), larger ones grow by a quarter.
        local grown = len - floordiv(-len, 4)
        if len < 32 then grown = 2 * len end
        len = math.min(cap, math.max(needed, grown, 4))
      end
    end
    -- A slot holds offsets from base up to MAX_OFFSET[W].
    local base, max_offset = s.base, MAX_OFFSET[s.W]
    if now - base > max_offset then
      base = now - it.longest
    end
    if not s.present or len ~= s.len or base ~= s.base then
      rebuild(s, len, base)
    end
    -- c <= cap and c <= needed <= len: the c new units fit in the ring.
    local dropped = s.size + c - s.len
    if dropped < 0 then dropped = 0 end
    if undo then
      undo[1], undo[2], undo[3], undo[4] = now, s.seq + c, s.seq - s.size, dropped
      if dropped > 0 then
        local old = read(s, s.head - s.size, dropped)
        for k = 1, dropped do
          undo[4 + k] = s.base + (sunpack(s.fmt, old, (k - 1) * s.W + 1))
        end
      end
    end
    -- A small value's ring is decoded whole (c <= len <= DECODED): the new units go into s.ring
    -- alone, and the value is packed from it.
    local whole = s.raw and s.len <= DECODED
    local offset = now - s.base
    if whole then
      local ring, head, len = s.ring, s.head, s.len
      for k = 0, c - 1 do
        ring[(head + k) % len + 1] = offset
      end
    else
      write(s, s.head, string.rep(spack(s.fmt, offset), c))
      if c <= DECODED then
        for k = 0, c - 1 do
          s.ring[(s.head + k) % s.len + 1] = offset
        end
      else
        s.ring = {}
      end
    end
    s.head = (s.head + c) % s.len
    s.size = s.size + c - dropped
    s.seq = s.seq + c
    s.last = now
    s.present = true
    if s.cur and not s.raw then advance(s, it, now) end
    persist(s, it, ttl_px(it, it.longest), whole)
  end

  local function create(s, it, now)
    s.size, s.seq, s.head, s.base, s.len, s.last = 0, 0, 0, now, 0, now
    s.present = true
    if s.hdr > LOG_HEADER then s.cur = no_cursors(it) end
    s.raw = string.rep('\0', s.hdr)
    persist(s, it, ttl_px(it, 0))
  end

  local function touch(s, it, now)
    s.last = now
    store_last(s.key, now)
  end

  -- How many of the newest `hi` units are after `floor` (a slot value: t - base), by binary
  -- search; the hi-th newest is probed first, so a full window (every denial of cost 1) takes
  -- one probe. Slots not read yet are read from the value (read_slot).
  local function inside(s, hi, floor)
    local ring, head, len = s.ring, s.head, s.len
    local lo = 0
    local pos = (head - hi) % len
    if (ring[pos + 1] or read_slot(s, pos)) > floor then
      return hi
    end
    hi = hi - 1
    -- invariant: the lo newest are inside; units beyond hi are not.
    while lo < hi do
      local mid = lo + hi + 1
      mid = (mid - mid % 2) / 2
      pos = (head - mid) % len
      if (ring[pos + 1] or read_slot(s, pos)) > floor then
        lo = mid
      else
        hi = mid - 1
      end
    end
    return lo
  end

  -- Per window: remaining, the units admitted in (now - P, now] (from the cursor, or counted by
  -- binary search over the newest min(size, L)); retry; reset, when the newest unit leaves it.
  local function report(s, it, now, out, o)
    local ex, size, ring, head, len, cur = s.ex, s.size, s.ring, s.head, s.len, s.cur
    -- A value read whole is searched in Lua; the cursors are used where each probe is a read.
    if s.raw then
      cur = false
    elseif cur and s.present and size > 0 then
      advance(s, it, now)
    end
    for i = 1, it.n do
      local limit, period = it.limit[i], it.period[i]
      local lo, reset = 0, 0
      if not (s.present and size > 0) then
        -- nothing held: the full limit remains
      elseif cur then
        lo = s.seq - cur[i]
      else
        -- Slot values relative to base: compare with floor - base, no addition per probe.
        lo = inside(s, limit < size and limit or size, now - period - s.base)
      end
      if s.present and size > 0 then
        local pos = (head - 1) % len
        reset = s.base + (ring[pos + 1] or read_slot(s, pos)) + period - now
        if reset < 0 then reset = 0 end
      end
      out[o + 1] = limit - lo
      out[o + 2] = ex and ex[i] or 0
      out[o + 3] = reset
      o = o + 3
    end
    return o
  end

  -- One item decided before the general path builds anything (decide.lua asks first when a
  -- request has one item), for a small rule: one GET, the header and the slot each window needs
  -- read with one struct call each, locals rather than a state. A denial writes nothing; an
  -- admission is one SET of the new value, spliced or packed with one struct call, the ring grown
  -- first where commit would grow it, or made where the key holds no current state. Either way
  -- the report is the value itself (see "quick path" in prelude.lua): the client counts
  -- `remaining` in it, which here would be a binary search per window. A key is left undecided,
  -- having written nothing, for the general path to decide from the start, when it is not that
  -- simple (a value not decoded whole; a peek; a cost above a limit; a ring that would grow beyond
  -- DECODED slots; a base that must move). It decides as evaluate and commit above, and the
  -- differential tests compare its decisions and the reports the client makes of them with the
  -- memory store on every trace.
  --
  -- quick's admission at t: commit into the value v (fp, last, base, head, size, seq, then slot
  -- pos at v[7 + pos]; len slots), then report it; nil when the general path must decide.
  local function admit(key, it, t, v, len, out, b)
    local cost, W = it.cost, it.extra
    local base, head, size = v[3], v[4], v[5]
    if t - base > MAX_OFFSET[W] then
      return nil
    end
    local cap = it.maxlimit
    local needed = size + cost
    if needed > cap then needed = cap end
    if needed > len then
      -- A full ring whose units to be pushed out have all left every window overwrites them;
      -- otherwise it grows as commit grows it (doubling, then by a quarter), oldest unit first.
      local over = size + cost - len
      if over > size or base + v[7 + (head - (size - over + 1)) % len] + it.longest > t then
        local grown = len - floordiv(-len, 4)
        if len < 32 then grown = 2 * len end
        if grown < needed then grown = needed end
        if grown < 4 then grown = 4 end
        if grown > cap then grown = cap end
        if grown > DECODED then
          return nil
        end
        local w = {v[1], v[2], base, size % grown, size, v[6]}
        local from = head - size
        for j = 0, size - 1 do
          w[7 + j] = v[7 + (from + j) % len]
        end
        for j = size, grown - 1 do
          w[7 + j] = 0
        end
        v, len, head = w, grown, size % grown
      end
    end
    local dropped = size + cost - len
    if dropped < 0 then dropped = 0 end
    local offset = t - base
    for k = 0, cost - 1 do
      v[7 + (head + k) % len] = offset
    end
    v[2], v[4], v[5], v[6] = t, (head + cost) % len, size + cost - dropped, v[6] + cost
    local value = spack(value_format(W, len), unpack(v, 1, 6 + len))
    READ_KEY = false
    rcall('SET', key, value, 'PX', ttl_px(it, it.longest))
    out[b + 1] = -1 - REASON_NONE - 4 * #value
    REPLIED = REPLIED + 1
    REPLY[REPLIED] = value
    SEEN_KEY, SEEN_VALUE = key, value
    return b + 1
  end

  -- The header (v[1..6]) of a value that has no ring yet, handed to admit, which grows it a ring.
  local EMPTY = {}
  -- What quick reads for a value too short to be a log: a header whose latest time is before any
  -- item's fresh time (times lie within +-2^52 us), so no current state, like a missing key.
  local ABSENT = struct.pack(LOG_FORMAT, 0, -2 ^ 62, 0, 0, 0, 0)
  -- The header as quick reads it, without seq (at SEQ_AT): a field costs struct a tenth of a call.
  local QUICK_FORMAT, SEQ_AT = '<I4i8i8I4I4', 29

  -- Decides keys[from..to], all of this item, one after the other (a batch's requests that share
  -- their argument): one Lua call for them all, not one each. Returns the position of the first
  -- key it left undecided (to + 1 when none), having written nothing for it and left its value in
  -- READ_KEY and READ_VALUE for the general path, and the report's last position.
  local function quick(keys, from, to, it, now, explicit, out, b)
    local cost = it.cost
    if it.hdr ~= LOG_HEADER or it.over then
      return from, b
    end
    local W, fresh, ifp = it.extra, it.fresh, it.fp
    local limit, period, n = it.limit, it.period, it.n
    local slot = SLOT[W]
    local max_offset = MAX_OFFSET[W]
    -- Written out for the first two windows, since every Lua operation counts (one costs the
    -- server about 45 instructions; a batched denial here takes some 70 of them, 20,000
    -- instructions in all): window i has room when its ki-th most recent unit (ki = limit - cost
    -- + 1) has left it; a window that is not there never looks (k2 beyond any size). Windows
    -- after the second are checked in a loop.
    local k1, p1 = limit[1] - cost + 1, period[1]
    local k2, p2 = 1 / 0, 0
    if n > 1 then
      k2, p2 = limit[2] - cost + 1, period[2]
    end
    -- Upvalues the loop uses, as locals (an upvalue costs an operation at each use).
    local reply, replied = REPLY, REPLIED
    local sunpack, rcall, H, H1 = sunpack, rcall, LOG_HEADER, LOG_HEADER + 1
    local DENIED, decoded = -1 - REASON_LIMIT, DECODED
    local seen_key, seen_value = SEEN_KEY, SEEN_VALUE
    -- The run read at once (read_run, prelude.lua) where no key of it can leave it undecided
    -- (rings up to DECODED slots); the values this call writes, kept apart.
    local values, written, off = it.maxlimit <= decoded and read_run(keys, from, to, it, explicit), false, from - 1
    for r = from, to do
      local key = keys[r]
      local raw
      if values then
        raw = written and written[key] or values[r - off] or ''
      else
        raw = seen_key == key and seen_value or rcall('GET', key) or ''
      end
      local rawlen = #raw
      -- Where admit must decide the admission (a ring to make, grow or rebase): the value's
      -- header and slots as admit takes them, its ring length, and the time.
      local v, vlen, vt
      -- (seq, which only an admission needs, is read then)
      local fp, last, base, head, size = sunpack(QUICK_FORMAT, rawlen >= H and raw or ABSENT)
      local len = (rawlen - H) / W
      if fp ~= ifp or last < fresh or len % 1 ~= 0 then
        -- No current state (absent, not a log, another definition's, or from before the rule
        -- came back): any cost within the limits fits, and commit starts the ring, based at now.
        if cost == 0 then
          READ_KEY, READ_VALUE, REPLIED, SEEN_KEY, SEEN_VALUE = key, raw, replied, seen_key, seen_value
          return r, b
        end
        v, vlen, vt = EMPTY, 0, now
        v[1], v[2], v[3], v[4], v[5], v[6] = ifp, now, now, 0, 0, 0
      else
        if len > decoded then
          READ_KEY, READ_VALUE, REPLIED, SEEN_KEY, SEEN_VALUE = key, raw, replied, seen_key, seen_value
          return r, b
        end
        local t = now
        if last > t then t = last end
        -- Slots hold t - base: compared with t - base - period, no addition per probe.
        local tb = t - base
        local denied = k1 <= size and sunpack(slot, raw, H1 + (head - k1) % len * W) + p1 > tb
          or k2 <= size and sunpack(slot, raw, H1 + (head - k2) % len * W) + p2 > tb
        if not denied and n > 2 then
          for i = 3, n do
            local k = limit[i] - cost + 1
            if k <= size and sunpack(slot, raw, H1 + (head - k) % len * W) + period[i] > tb then
              denied = true
              break
            end
          end
        end
        if denied then
          b = b + 1
          out[b] = DENIED - 4 * rawlen
          replied = replied + 1
          reply[replied] = raw
          seen_key, seen_value = key, raw
          if explicit and t > last then
            store_last(key, t)
            seen_key = false
          end
        elseif cost == 0 then
          READ_KEY, READ_VALUE, REPLIED, SEEN_KEY, SEEN_VALUE = key, raw, replied, seen_key, seen_value
          return r, b
        elseif len == 0 then
          -- (a key whose decisions so far admitted nothing: the time recorded, no ring yet)
          v, vlen, vt = EMPTY, 0, t
          v[1], v[2], v[3], v[4], v[5], v[6] = fp, last, base, head, size, sunpack('<i8', raw, SEQ_AT)
        elseif head + cost <= len and (size + cost <= len or len == it.maxlimit) and tb <= max_offset then
          -- The common admission: the ring keeps its size (it has room, or is at the largest
          -- limit and overwrites its oldest unit, which the evaluation found outside every window
          -- that counts it) and the new units do not wrap around its end. The new value is the
          -- new header, the slots before the head, the new units and the slots after them:
          -- spliced from the value read, at a third of the cost of decoding all its slots and
          -- packing them again.
          local needed = size + cost
          if needed > len then needed = len end
          local at = LOG_HEADER + head * W
          local unit = spack(slot, tb)
          if cost > 1 then unit = string.rep(unit, cost) end
          local value = spack(LOG_FORMAT, fp, t, base, (head + cost) % len, needed, sunpack('<i8', raw, SEQ_AT) + cost)
            .. string.sub(raw, LOG_HEADER + 1, at) .. unit .. string.sub(raw, at + cost * W + 1)
          rcall('SET', key, value, 'PX', ttl_px(it, it.longest))
          b = b + 1
          out[b] = -1 - REASON_NONE - 4 * #value
          replied = replied + 1
          reply[replied] = value
          seen_key, seen_value = key, value
          if values then
            written = written or {}
            written[key] = value
          end
        else
          v, vlen, vt = {sunpack(value_format(W, len), raw)}, len, t
        end
      end
      if v then
        REPLIED = replied
        local q = admit(key, it, vt, v, vlen, out, b)
        if not q then
          READ_KEY, READ_VALUE, SEEN_KEY, SEEN_VALUE = key, raw, seen_key, seen_value
          return r, b
        end
        b, replied, seen_key, seen_value = q, REPLIED, SEEN_KEY, SEEN_VALUE
        if values then
          written = written or {}
          written[key] = seen_value
        end
      end
    end
    READ_KEY, REPLIED, SEEN_KEY, SEEN_VALUE = false, replied, seen_key, seen_value
    return to + 1, b
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
  local function refund(key, it, undo)
    local s = load(key, it)
    if not s.present then
      return
    end
    local t, seq_after, dropped_before, a = undo[1], undo[2], undo[3], undo[4]
    local c = it.cost
    local m = s.seq - seq_after
    if m < 0 or m + c > s.size or t < s.base then
      return
    end
    if read(s, s.head - m - c, c) ~= string.rep(spack(s.fmt, t - s.base), c) then
      return
    end
    local was_full = s.size == s.len
    local drops = (s.seq - s.size) - dropped_before
    write(s, s.head - m - c, read(s, s.head - m, m))
    s.ring = {}
    s.head = (s.head - c) % s.len
    s.size = s.size - c
    s.seq = s.seq - c
    local fill = ''
    if drops == a then
      local parts = {}
      for k = 1, a do
        parts[k] = spack(s.fmt, math.max(0, undo[4 + k] - s.base))
      end
      fill = table.concat(parts)
    elseif drops > 0 and was_full then
      local oldest = t
      if s.size > 0 then
        oldest = recent(s, s.size)
      end
      fill = string.rep(spack(s.fmt, oldest - s.base), math.min(c, drops))
    end
    local r = #fill / s.W
    write(s, s.head - s.size - r, fill)
    s.size = s.size + r
    if s.cur then
      -- Units moved: search every window from the oldest unit held again.
      for i = 1, it.n do s.cur[i] = s.seq - s.size end
    end
    persist(s, it, nil)
  end

  return {
    prepare = prepare, load = load, evaluate = evaluate, commit = commit, create = create,
    touch = touch, report = report, refund = refund, quick = quick,
  }
end
