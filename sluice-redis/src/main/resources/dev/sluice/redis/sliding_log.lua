-- sliding_log: exact rolling windows from one log of admitted units, shared by all windows of the
-- key, newest last, holding at most the largest limit (cap) of the key's windows.
--
-- A window (L, P) has room for cost c exactly when its (L - c + 1)-th most recent unit is at or
-- before now - P: one fixed-width read. `remaining` counts the units inside (now - P, now] by
-- binary search over the newest L. Mirrors dev.sluice.memory.SlidingLogState.
--
-- Value: a 36-byte header, then a ring of `len` slots of W bytes (W = extra, 6 or 8):
--   fp    uint32   rule fingerprint          last  int64   latest time seen
--   base  int64    slots hold (t - base)     head  uint32  next slot to write
--   size  uint32   units held (<= len)       seq   int64   units ever admitted, less refunds
-- With W = 6 a slot spans 2^48 us (8.9 years) from base; when now outgrows that, base moves up
-- to now - longest period and older units are clamped to it, which changes no answer since they
-- are outside every window. The Java side picks W = 8 for periods over 2^46 us.
--
-- The ring grows with use (by a quarter at a time, up to cap), not preallocated to the limit,
-- and only while the units it would push out are still inside some window; growing rewrites the
-- value once, so it is allocated at its exact size.
-- Values up to CACHED bytes are read whole once and written whole; larger ones are read and
-- written slot by slot with GETRANGE / SETRANGE, so a decision on a log of 10^6 units costs
-- O(windows * log L) reads, not O(L).

local SL = {}
local LOG_HEADER = 36
local CACHED = 4096

local function sl_pack_header(s)
  return struct.pack('<I4i8i8I4I4i8', s.fp, s.last, s.base, s.head, s.size, s.seq)
end

function SL.load(key, it)
  local W = it.extra
  local s = {key = key, present = false, W = W, fmt = '<I' .. W, fp = it.fp, size = 0}
  local raw = redis.call('GETRANGE', key, 0, CACHED - 1)
  local total = #raw
  if total == CACHED then
    total = redis.call('STRLEN', key)
  else
    s.cache = raw
  end
  if total < LOG_HEADER or (total - LOG_HEADER) % W ~= 0 then
    s.cache = nil
    return s
  end
  local fp, last, base, head, size, seq = struct.unpack('<I4i8i8I4I4i8', raw)
  if not current_state(it, fp, last) then
    s.cache = nil
    return s
  end
  s.present, s.last, s.base, s.head, s.size, s.seq = true, last, base, head, size, seq
  s.len = (total - LOG_HEADER) / W
  return s
end

-- Bytes of `count` slots from slot `pos`, without wrapping.
local function sl_get(s, pos, count)
  local off = LOG_HEADER + pos * s.W
  if s.cache then
    return string.sub(s.cache, off + 1, off + count * s.W)
  end
  return redis.call('GETRANGE', s.key, int(off), int(off + count * s.W - 1))
end

local function sl_put(s, pos, bytes)
  local off = LOG_HEADER + pos * s.W
  if s.cache then
    s.cache = string.sub(s.cache, 1, off) .. bytes .. string.sub(s.cache, off + #bytes + 1)
  else
    redis.call('SETRANGE', s.key, int(off), bytes)
  end
end

-- `count` slots from slot `from` (taken modulo len), wrapping around the end of the ring.
local function sl_read(s, from, count)
  if count <= 0 then
    return ''
  end
  from = from % s.len
  local first = math.min(count, s.len - from)
  local b = sl_get(s, from, first)
  if first < count then
    b = b .. sl_get(s, 0, count - first)
  end
  return b
end

local function sl_write(s, from, bytes)
  local count = #bytes / s.W
  if count <= 0 then
    return
  end
  from = from % s.len
  local first = math.min(count, s.len - from)
  sl_put(s, from, string.sub(bytes, 1, first * s.W))
  if first < count then
    sl_put(s, 0, string.sub(bytes, first * s.W + 1))
  end
end

-- The time of the k-th most recent unit, 1 <= k <= size.
local function sl_recent(s, k)
  return s.base + (struct.unpack(s.fmt, sl_read(s, s.head - k, 1)))
end

local function sl_encode(s, t)
  return struct.pack(s.fmt, t - s.base)
end

local function sl_max_offset(s)
  if s.W >= 7 then
    return 9007199254740992
  end
  return 2 ^ (8 * s.W) - 1
end

-- Rewrites the ring as `len` slots relative to `base`, oldest unit in slot 0, into s.cache: from
-- here on the value is built in Lua and written back with one SET.
local function sl_rebuild(s, len, base)
  local entries = ''
  if s.size > 0 then
    entries = sl_read(s, s.head - s.size, s.size)
    if base ~= s.base then
      local parts = {}
      for k = 0, s.size - 1 do
        local rel = struct.unpack(s.fmt, entries, k * s.W + 1)
        parts[k + 1] = struct.pack(s.fmt, math.max(0, s.base + rel - base))
      end
      entries = table.concat(parts)
    end
  end
  s.base = base
  s.len = len
  s.head = s.size % len
  s.cache = string.rep('\0', LOG_HEADER) .. entries .. string.rep('\0', (len - s.size) * s.W)
end

-- Writes the header (and, when the value is held in Lua, everything) back. A commit passes the
-- TTL; a refund keeps the one the last commit set.
local function sl_persist(s, ttl)
  if s.cache then
    s.cache = sl_pack_header(s) .. string.sub(s.cache, LOG_HEADER + 1)
    if ttl then
      redis.call('SET', s.key, s.cache, 'PX', int(ttl))
    else
      redis.call('SET', s.key, s.cache, 'KEEPTTL')
    end
  else
    redis.call('SETRANGE', s.key, 0, sl_pack_header(s))
    if ttl then
      redis.call('PEXPIRE', s.key, int(ttl))
    end
  end
end

function SL.evaluate(s, it, now, e)
  if not s.present then
    return
  end
  for i = 1, it.n do
    local k = it.limit[i] - it.cost + 1 -- the unit that must have left the window
    if k <= s.size then
      local expires = sl_recent(s, k) + it.period[i]
      if expires > now then
        e.exceeded[i] = true
        e.retry[i] = expires - now
        e.fits = false
        e.reason = REASON_LIMIT
      end
    end
  end
end

-- Undo record: {time, seq after, units dropped before (seq - size), units this commit pushed
-- out of a full ring, then those units' times, oldest first}.
function SL.commit(s, it, now, e, undo)
  local c = it.cost
  local cap = it.maxlimit
  if not s.present then
    s.size, s.seq, s.head, s.base, s.len = 0, 0, 0, now, 0
    s.cache = nil
  end
  local len = s.len
  local needed = math.min(s.size + c, cap)
  if needed > len then
    -- A full ring whose units to be pushed out have all left every window overwrites them
    -- instead of growing: they can no longer deny or count anything.
    local over = s.size + c - len
    local expired = over <= s.size and sl_recent(s, s.size - over + 1) + it.longest <= now
    if not expired then
      len = math.min(cap, math.max(needed, len + ceildiv(len, 4), 4))
    end
  end
  local base = s.base
  if now - base > sl_max_offset(s) then
    base = now - it.longest
  end
  if not s.present or len ~= s.len or base ~= s.base then
    sl_rebuild(s, len, base)
  end
  -- c <= cap and c <= needed <= len: the c new units fit in the ring.
  local dropped = math.max(0, s.size + c - s.len)
  if undo then
    undo[1], undo[2], undo[3], undo[4] = now, s.seq + c, s.seq - s.size, dropped
    if dropped > 0 then
      local old = sl_read(s, s.head - s.size, dropped)
      for k = 1, dropped do
        undo[4 + k] = s.base + (struct.unpack(s.fmt, old, (k - 1) * s.W + 1))
      end
    end
  end
  sl_write(s, s.head, string.rep(sl_encode(s, now), c))
  s.head = (s.head + c) % s.len
  s.size = math.min(s.size + c, s.len)
  s.seq = s.seq + c
  s.last = now
  s.present = true
  sl_persist(s, ttl_ms(it, it.longest))
end

function SL.create(s, it, now)
  s.size, s.seq, s.head, s.base, s.len, s.last = 0, 0, 0, now, 0, now
  s.present = true
  s.cache = string.rep('\0', LOG_HEADER)
  sl_persist(s, ttl_ms(it, 0))
end

function SL.touch(s, it, now)
  s.last = now
  local b = struct.pack('<i8', now)
  redis.call('SETRANGE', s.key, 4, b)
  if s.cache then
    s.cache = string.sub(s.cache, 1, 4) .. b .. string.sub(s.cache, 13)
  end
end

-- Units admitted in (now - P, now] for window i: binary search over the newest min(size, L).
function SL.remaining(s, it, now, i)
  if not s.present then
    return it.limit[i]
  end
  local floor = now - it.period[i]
  local lo, hi = 0, math.min(s.size, it.limit[i])
  -- invariant: the lo most recent are inside; units beyond hi are not counted
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if sl_recent(s, mid) > floor then
      lo = mid
    else
      hi = mid - 1
    end
  end
  return it.limit[i] - lo
end

function SL.reset(s, it, now, i)
  if not s.present or s.size == 0 then
    return 0
  end
  return math.max(0, sl_recent(s, 1) + it.period[i] - now)
end

-- Takes a reservation's c units (all stamped with its time) out of the log.
--
-- The reservation's units are the block that `seq after` points at; units admitted since sit
-- newer than it and are moved c slots older, closing the gap. If the ring was full, units were
-- pushed out meanwhile: when only the reservation pushed any, they are put back exactly from
-- the undo record; when later commits pushed more, the ones they pushed are unknown, so the freed
-- slots take the oldest remaining unit's time instead — no earlier than the lost ones, so the
-- log may over-count for a while (a false deny), never under-count. If the block is not found
-- where expected (the key was reset or rewritten), nothing is taken back.
function SL.refund(key, it, undo)
  local s = SL.load(key, it)
  if not s.present then
    return
  end
  local t, seq_after, dropped_before, a = undo[1], undo[2], undo[3], undo[4]
  local c = it.cost
  local m = s.seq - seq_after
  if m < 0 or m + c > s.size or t < s.base then
    return
  end
  if sl_read(s, s.head - m - c, c) ~= string.rep(sl_encode(s, t), c) then
    return
  end
  local was_full = s.size == s.len
  local drops = (s.seq - s.size) - dropped_before
  sl_write(s, s.head - m - c, sl_read(s, s.head - m, m))
  s.head = (s.head - c) % s.len
  s.size = s.size - c
  s.seq = s.seq - c
  local fill = ''
  if drops == a then
    local parts = {}
    for k = 1, a do
      parts[k] = struct.pack(s.fmt, math.max(0, undo[4 + k] - s.base))
    end
    fill = table.concat(parts)
  elseif drops > 0 and was_full then
    local oldest = t
    if s.size > 0 then
      oldest = sl_recent(s, s.size)
    end
    fill = string.rep(sl_encode(s, oldest), math.min(c, drops))
  end
  local r = #fill / s.W
  sl_write(s, s.head - s.size - r, fill)
  s.size = s.size + r
  sl_persist(s, nil)
end

ALGORITHMS[1] = SL
