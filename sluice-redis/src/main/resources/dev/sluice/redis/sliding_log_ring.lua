-- sliding_log's value and its ring of slots: reading, writing and laying it out, and the rule
-- both sliding_log.lua (small rules) and sliding_log_large.lua decide by (log_rule), with the
-- count of units inside a window (log_inside), over either way of reading a slot.
--
-- Value: a header, then a ring of `len` slots of W bytes (W = the item's extra: 4, 6 or 8). The
-- header:
--   fp    uint32   rule fingerprint          last  int64   latest time seen
--   base  int64    slots hold (t - base)     head  uint32  next slot to write
--   size  uint32   units held (<= len)       seq   int64   units ever admitted, less refunds
-- and, for a large rule (one whose values can reach LOG_CACHED bytes):
--   len   uint32   slots in the ring
--   then per window a uint32: how many of the newest units include every unit inside the
--   window as of the last commit that searched slot by slot (the window's cursor).
-- A value written under other windows than the key's own (a live limit) ends, after the ring,
-- with what carry.lua needs to read it under yet other windows (it.log_trailer, LOG_TRAILER
-- bytes): the windows' longest period (int64), the header's size (uint16), the rule's own
-- fingerprint (uint32). A value of the key's own windows has no such end.
-- A slot of W bytes spans 2^(8W) us from base (4 bytes: 71 minutes; 6: 8.9 years); when now
-- outgrows that, base moves up to now - longest period and older units are clamped to it, which
-- changes no answer since they are outside every window. The Java side picks the narrowest
-- width that spans the longest period, since every byte of a value is hashed by Redis's Lua
-- each time the value is read or replied.
--
-- A small rule's value is read whole with one GET and written whole with one SET (with PX: value
-- and TTL in one command), its slots unpacked from the string as they are needed. A large rule's
-- value is not read whole once it is large, since that hashing would cost more than the
-- decision: its first LOG_CACHED bytes are read with one GETRANGE (the whole value while it is
-- that small), and beyond that its slots one by one, each at most once per decision.

local LOG_HEADER = 36
local LOG_FORMAT = '<I4i8i8I4I4i8'
local LOG_TRAILER = 14
-- The size of value read whole: a rule whose values can outgrow it is a large rule.
local LOG_CACHED = 1024
-- By slot width: struct's format of one slot, and the largest offset from base it holds (every
-- exact integer, for 8 bytes).
local SLOT_FORMAT = {[4] = '<I4', [6] = '<I6', [8] = '<I8'}
local MAX_OFFSET = {[4] = 4294967295, [6] = 281474976710655, [8] = 9007199254740992}

-- The rule of every sliding_log decision, made once per item (what the item fixes in upvalues):
-- a window (L, P) has room for cost c exactly when its (L - c + 1)-th most recent unit is at or
-- before t - P. The function it makes takes a ring (head, size, len) whose slot at byte `at`
-- (1-based) of the value is `read(fmt, src, at)` — struct.unpack itself on a value read whole,
-- log_slot_at on a state — and `since` (t - base), and returns, from window `from` on, the
-- first window without room and how long after t it has room again (> 0 us); nil when all
-- have room.
local function log_rule(it, hdr)
  local n, period, W, fmt = it.n, it.period, it.extra, SLOT_FORMAT[it.extra]
  local leaving = {}
  for i = 1, n do leaving[i] = it.limit[i] - it.cost + 1 end
  return function(read, src, head, size, len, since, from)
    for i = from, n do
      local k = leaving[i]
      if k <= size then
        local wait = read(fmt, src, hdr + 1 + (head - k) % len * W) + period[i] - since
        if wait > 0 then
          return i, wait
        end
      end
    end
  end
end

-- The rule's layout, once per item: header size and format (with cursors for large rules), and
-- its decision rule (log_rule).
local function log_layout(it)
  if LOG_HEADER + it.extra * it.maxlimit < LOG_CACHED then
    it.log_header, it.log_format = LOG_HEADER, LOG_FORMAT
  else
    it.log_header, it.log_format = LOG_HEADER + 4 + 4 * it.n, LOG_FORMAT .. string.rep('I4', 1 + it.n)
  end
  it.log_full = log_rule(it, it.log_header)
  it.log_trailer = it.own and struct.pack('<i8I2I4', it.longest, it.log_header, it.rfp) or ''
end

-- The ring length after growing one of `len` slots that must hold `needed` units, up to `cap`:
-- small rings double (each growth rewrites the value), larger ones grow by a quarter.
local function log_grown(len, needed, cap)
  local grown = len - floordiv(-len, 4)
  if len < 32 then grown = 2 * len end
  return math.min(cap, math.max(needed, grown, 4))
end

-- The value (t - base) of the slot at ring position pos (0 <= pos < len): from the value held
-- in state.raw, else read with GETRANGE once and kept in state.ring.
local function log_slot(state, pos)
  local raw = state.raw
  if raw then
    return (struct.unpack(state.fmt, raw, state.hdr + 1 + pos * state.W))
  end
  local v = state.ring[pos + 1]
  if not v then
    local off = state.hdr + pos * state.W
    v = struct.unpack(state.fmt, redis.call('GETRANGE', state.key, int(off), int(off + state.W - 1)))
    state.ring[pos + 1] = v
  end
  return v
end

-- The time of the k-th most recent unit, 1 <= k <= size.
local function log_recent(state, k)
  return state.base + log_slot(state, (state.head - k) % state.len)
end

-- log_slot by the slot's byte offset in the value (`at`, 1-based), with struct.unpack's
-- arguments: a ring is read by `read(fmt, src, at)`, struct.unpack itself on a value read whole
-- (no call between the decision and the string), this on a state.
local function log_slot_at(_, state, at)
  return log_slot(state, (at - state.hdr - 1) / state.W)
end

-- How many of the newest `hi` units (hi >= 1) are after `floor` (a slot value: t - base), by
-- binary search; the hi-th newest is probed first, so a full window (every denial of cost 1)
-- takes one probe. The ring is read as log_rule's function reads it.
local function log_inside(read, src, fmt, hdr, W, head, len, hi, floor)
  if read(fmt, src, hdr + 1 + (head - hi) % len * W) > floor then
    return hi
  end
  local lo = 0
  hi = hi - 1
  -- invariant: the lo newest are inside; units beyond hi are not.
  while lo < hi do
    local mid = lo + hi + 1
    mid = (mid - mid % 2) / 2
    if read(fmt, src, hdr + 1 + (head - mid) % len * W) > floor then
      lo = mid
    else
      hi = mid - 1
    end
  end
  return lo
end

-- The bytes of `count` slots from slot `from` (taken modulo len), wrapping around the end.
local function log_read(state, from, count)
  local bytes = ''
  if count <= 0 then
    return bytes
  end
  from = from % state.len
  while count > 0 do
    local before_end = math.min(count, state.len - from)
    local off = state.hdr + from * state.W
    if state.raw then
      bytes = bytes .. string.sub(state.raw, off + 1, off + before_end * state.W)
    else
      bytes = bytes .. redis.call('GETRANGE', state.key, int(off), int(off + before_end * state.W - 1))
    end
    count, from = count - before_end, 0
  end
  return bytes
end

-- Writes whole slots from slot `from`, wrapping: into state.raw when the value is held here (written
-- back by log_persist), else into the key. Slots kept in state.ring are dropped.
local function log_write(call, state, from, bytes)
  local count = #bytes / state.W
  if count <= 0 then
    return
  end
  if not state.raw then
    state.ring = {}
  end
  from = from % state.len
  while count > 0 do
    local before_end = state.len - from
    if count < before_end then before_end = count end
    local off = state.hdr + from * state.W
    local piece = bytes
    if before_end < count then
      piece = string.sub(bytes, 1, before_end * state.W)
      bytes = string.sub(bytes, before_end * state.W + 1)
    end
    if state.raw then
      state.raw = string.sub(state.raw, 1, off) .. piece .. string.sub(state.raw, off + #piece + 1)
    else
      write_range(call, state.key, int(off), piece)
    end
    count, from = count - before_end, 0
  end
end

-- Rewrites the ring as `len` slots relative to `base`, oldest unit in slot 0, into state.raw: from
-- here on the value is held here and written back whole.
local function log_rebuild(state, len, base)
  local units = ''
  if state.size > 0 then
    units = log_read(state, state.head - state.size, state.size)
    if base ~= state.base then
      local parts = {}
      for k = 0, state.size - 1 do
        local offset = struct.unpack(state.fmt, units, k * state.W + 1)
        parts[k + 1] = struct.pack(state.fmt, math.max(0, state.base + offset - base))
      end
      units = table.concat(parts)
    end
  end
  state.base = base
  state.len = len
  state.head = state.size % len
  state.raw = string.rep('\0', state.hdr) .. units .. string.rep('\0', (len - state.size) * state.W) .. state.trailer
end

-- The header as the state now stands (a large rule's with its length and cursors).
local function log_header(state, it)
  if state.hdr == LOG_HEADER then
    return struct.pack(LOG_FORMAT, it.fp, state.last, state.base, state.head, state.size, state.seq)
  end
  local inside, cur = {}, state.cur
  for i = 1, it.n do
    local count = state.seq - cur[i]
    if count < 0 then count = 0 elseif count > state.size then count = state.size end
    inside[i] = count
  end
  return struct.pack(it.log_format, it.fp, state.last, state.base, state.head, state.size, state.seq, state.len,
    unpack(inside, 1, it.n))
end

-- Writes the header (and, when the value is held here, everything) back. A commit passes the
-- TTL; a refund keeps the one the last commit set.
local function log_persist(call, state, it, ttl)
  local header = log_header(state, it)
  if state.raw then
    state.raw = header .. string.sub(state.raw, state.hdr + 1)
    write_value(call, state.key, state.raw, ttl)
  else
    write_range(call, state.key, 0, header)
    if ttl then
      redis.call('PEXPIRE', state.key, ttl)
    end
  end
  state.value = state.raw
end

-- Cursors (large rules). Units are stamped in order, so the units older than a window's cursor
-- were outside it at that commit and have stayed outside: `remaining` searches forward from the
-- cursor, galloping then binary search, O(log k) reads for a cursor k units behind, and a commit
-- moves the cursors up, so a decision reads a few slots however large the log.

-- The slot value (t - base) of the unit of index j (seq - size <= j < seq).
local function log_unit(state, j)
  return log_slot(state, (state.head - (state.seq - j)) % state.len)
end

-- The first index in [lo, seq) whose unit is after `floor` (relative to base), or seq if none.
local function log_first_after(state, lo, floor)
  local hi, step = state.seq, 1
  while lo < hi do
    local j = lo + step - 1
    if j >= hi then j = hi - 1 end
    if log_unit(state, j) > floor then
      hi = j
      break
    end
    lo = j + 1
    step = step * 2
  end
  while lo < hi do
    local mid = lo + hi
    mid = (mid - mid % 2) / 2
    if log_unit(state, mid) > floor then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end

-- Moves each window's cursor to its first unit inside the window at t.
local function log_advance(state, it, t)
  local cur, seq, size = state.cur, state.seq, state.size
  for i = 1, it.n do
    local held = it.limit[i]
    if size < held then held = size end
    local lo = cur[i]
    if lo < seq - held then lo = seq - held end
    if lo > seq then lo = seq end
    cur[i] = log_first_after(state, lo, t - it.period[i] - state.base)
  end
end

local function log_no_cursors(it)
  local cur = {}
  for i = 1, it.n do cur[i] = 0 end
  return cur
end
