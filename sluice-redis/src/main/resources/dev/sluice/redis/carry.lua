-- A key given other windows within one rule definition (a live limit) keeps what it consumed.
-- Mirrors KeyState.carryFrom and each algorithm's carry in dev.sluice.algorithm.
--
-- A value's header fingerprint covers the rule and the windows that wrote it (the rule's own
-- fingerprint, rfp, stands for the key's own windows under the definition), so a value of the
-- same rule under other windows is not current state for the item. Before it is treated as
-- absent, carry_value looks for rfp in it: in the header of a value of the key's own windows
-- (which the item then carries), or at its end, after the windows that wrote it (values.lua)
-- or, for a log, after its longest period and header size (sliding_log_ring.lua). If it is
-- there, the value is converted to the item's windows as it stood at its latest time, written,
-- and decided on as current state. Only this path, taken once per change of a key's windows,
-- pays for it. The conversion stays only if the decision admits: a decision that consumes
-- nothing under the new windows (a peek, a denial) puts the value back as it was, its TTL with
-- it (carry_undo), so that windows changed and changed back before any admission find the key
-- unchanged. A converted value is written first because the state-table algorithms read the
-- key itself, slot by slot for a large log.
--
-- Windows are matched by period: a window of the new set whose period the old set has takes
-- that window's consumption, a new period starts empty, a dropped one is forgotten. Counters
-- (fixed and sliding windows) are kept as they are; a schedule (token and leaky buckets) keeps
-- its backlog at the latest time in whole units of the old interval (ceil(backlog / T_old)),
-- however many the new limit allows, laid out in the new interval, at most MAX_BACKLOG ahead. The log is one for every window: its units inside the old longest window
-- are kept, the newest up to the new largest limit, and count in every window.

-- The slot width of a log whose windows' longest period is `longest` (ScriptAlgorithm.slotWidth).
local function slot_width(longest)
  return longest <= 2147483648 and 4 or longest <= 70368744177664 and 6 or 8
end

-- The old window (of periods period[1..n]) with window i's period, or nil.
local function carry_match(it, i, period, n)
  for j = 1, n do
    if period[j] == it.period[i] then
      return j
    end
  end
  return nil
end

-- The windows a fixed-size value was written under: limits, periods, count and the bytes they
-- take at its end; nil when the value is not this rule's.
local function carry_windows(it, raw)
  local total = #raw
  local own = it.own
  if own and struct.unpack('<I4', raw) == it.rfp then
    return own.limit, own.period, own.n, 0
  end
  if total < HEADER + 6 then
    return nil
  end
  local rfp, n = struct.unpack('<I4I2', raw, total - 5)
  if rfp ~= it.rfp or total < HEADER + 6 + 16 * n then
    return nil
  end
  local limit, period = {}, {}
  local at = total - 5 - 16 * n
  for j = 1, n do
    limit[j], period[j] = struct.unpack('<i8i8', raw, at + 16 * j - 16)
  end
  return limit, period, n, 16 * n + 6
end

-- The furthest a carried schedule reaches ahead of the latest time, 2^50 µs (KeyState.MAX_BACKLOG):
-- sums with times stay below 2^53. A product above it is above it in doubles too.
local MAX_BACKLOG = 1125899906842624

-- The backlog b of a schedule (old interval from), in the new interval `to`.
local function carry_backlog(b, from, to)
  if b <= 0 then
    return 0
  end
  return math.min(floordiv(b + from - 1, from) * to, MAX_BACKLOG)
end

-- The fields of a fixed-size value that old windows wrote, for the item's windows; nil if the
-- value is not such a value of this rule.
local function carry_fields(it, raw, last)
  local limit, period, n, trailer = carry_windows(it, raw)
  if not limit then
    return nil
  end
  local code, f, old = it.code, {}, {}
  -- Where each old window's fields start (sliding_window: its slots, as width and count give).
  local from, count = {}, 0
  for j = 1, n do
    from[j] = count + 1
    if code == 2 then
      local width = math.max(1, floordiv(period[j] + it.extra - 1, it.extra))
      count = count + 2 * (floordiv(period[j] + width - 1, width) + 1)
    else
      count = count + 1
    end
  end
  if #raw ~= HEADER + 8 * count + trailer then
    return nil
  end
  for k = 1, count do old[k] = struct.unpack('<i8', raw, HEADER + 8 * k - 7) end
  local size = code == 2 and it.fields or it.n
  for k = 1, size do f[k] = code >= 4 and NEVER or 0 end
  for i = 1, it.n do
    local j = carry_match(it, i, period, n)
    if j then
      if code == 2 then
        for k = 0, 2 * (it.aux2[i] + 1) - 1 do f[it.offsets[i] + k] = old[from[j] + k] end
      elseif code == 3 then
        f[i] = old[from[j]]
      else
        local was = math.max(1, floordiv(period[j] + limit[j] - 1, limit[j])) -- the old interval
        local b = carry_backlog(old[from[j]] - last, was, it.aux1[i])
        if b > 0 then f[i] = last + b end
      end
    end
  end
  return pack_fields(it, last, f, size)
end

-- The log that other windows of this rule wrote, laid out for the item; nil if it is not one. A
-- log of the key's own windows (the rule's fingerprint in its header) is read by the windows the
-- item carries; another ends with its longest period, header size and the rule's fingerprint.
local function carry_log(call, key, it, raw)
  if #raw < LOG_HEADER then
    return nil
  end
  local fp, last, base, head, size = struct.unpack('<I4i8i8I4I4', raw)
  if last < it.fresh then
    return nil
  end
  local own, longest, hdr, trailer = it.own, 0, 0, 0
  if own and fp == it.rfp then
    local cap = 0
    for j = 1, own.n do
      if own.period[j] > longest then longest = own.period[j] end
      if own.limit[j] > cap then cap = own.limit[j] end
    end
    hdr = LOG_HEADER
    if LOG_HEADER + slot_width(longest) * cap >= LOG_CACHED then hdr = LOG_HEADER + 4 + 4 * own.n end
  else
    if #raw >= LOG_CACHED then
      raw = redis.call('GET', key) -- a large value, of which the decision read only a prefix
    end
    local rfp
    longest, hdr, rfp = struct.unpack('<i8I2I4', raw, #raw - LOG_TRAILER + 1)
    if rfp ~= it.rfp then
      return nil
    end
    trailer = LOG_TRAILER
  end
  if hdr > LOG_HEADER and #raw >= LOG_CACHED then
    raw = redis.call('GET', key)
  end
  local W = slot_width(longest)
  local len = (#raw - hdr - trailer) / W
  if hdr > LOG_HEADER and #raw >= hdr then
    len = struct.unpack('<I4', raw, LOG_HEADER + 1)
  end
  if len % 1 ~= 0 or size > len or #raw ~= hdr + len * W + trailer then
    return nil
  end
  -- The units inside the old longest window, oldest first; the newest up to the new cap.
  local fmt, units = SLOT_FORMAT[W], {}
  for k = size, 1, -1 do
    local u = base + struct.unpack(fmt, raw, hdr + 1 + (head - k) % len * W)
    if u > last - longest then units[#units + 1] = u end
  end
  local kept = math.min(#units, it.maxlimit)
  -- Slots hold (u - base) within the new width: units older than the new longest window, which
  -- count in none of the new windows, are clamped to base.
  local new_base = last - it.longest
  if kept > 0 and units[#units - kept + 1] > new_base then new_base = units[#units - kept + 1] end
  local nfmt, slots = SLOT_FORMAT[it.extra], {}
  for k = #units - kept + 1, #units do
    slots[#slots + 1] = struct.pack(nfmt, math.max(0, units[k] - new_base))
  end
  local header = struct.pack(LOG_FORMAT, it.fp, last, new_base, 0, kept, kept)
  if it.log_header > LOG_HEADER then
    -- A large rule's length, and cursors that search every unit held.
    local cursors = {}
    for i = 1, it.n do cursors[i] = kept end
    header = header .. struct.pack('<I4' .. string.rep('I4', it.n), kept, unpack(cursors))
  end
  return header .. table.concat(slots) .. it.log_trailer
end

-- The key's value `raw` (nil: read it here, as the decision did) converted to the item's
-- windows and written, if it is state of the item's rule definition under other windows;
-- else nil. Called only on a value that is not the item's current state. Also returns what
-- carry_undo needs to put the key back: its whole value before and its TTL.
local function carry_value(call, key, it, raw)
  if raw == nil then
    raw = read_value(call, key)
  end
  if not raw or #raw < HEADER then
    return nil
  end
  local value
  if it.code == 1 then
    value = carry_log(call, key, it, raw)
  else
    local last = struct.unpack('<i8', raw, 5)
    if last >= it.fresh then
      value = carry_fields(it, raw, last)
    end
  end
  if not value then
    return nil
  end
  -- The TTL covers the longest new window and the carried schedules, from the latest time.
  local need, now = it.longest, call.now
  local last = struct.unpack('<i8', value, 5)
  if it.code >= 4 then
    for i = 1, it.n do
      local at = struct.unpack('<i8', value, HEADER + 8 * i - 7)
      if at - now > need then need = at - now end
    end
  end
  if last > now then need = need + last - now end
  local saved = {redis.call('GET', key), redis.call('PTTL', key)}
  write_value(call, key, value, ttl_px(it, need))
  return value, saved
end

-- Puts back the value carry_value converted, as it was and with the TTL it had, when the
-- decision on the converted value admitted nothing.
local function carry_undo(call, key, saved)
  local value, pttl = saved[1], saved[2]
  if pttl > 0 then
    write_value(call, key, value, int(pttl))
  else
    redis.call('SET', key, value)
    write_value(call, key, value, nil)
  end
  return value
end

-- After the report: a value converted from other windows whose decision admitted nothing goes
-- back to what it was. `entry` is a state table or a request's entry: both carry key, saved (what
-- carry_value returned with the conversion, or false) and committed.
local function put_back(call, entry)
  if entry.saved and not entry.committed then
    carry_undo(call, entry.key, entry.saved)
  end
end

-- A state-table item's state as loaded: if the key holds state of other windows of the rule, the
-- converted value's, loaded again, with what put_back needs in saved (false when nothing was
-- converted; set every time, as a spare state is refilled).
local function carry_state(call, key, it, spare, state)
  local saved = false
  if not state.present then
    local carried, before = carry_value(call, key, it, state.prefix or nil)
    if carried then
      state, saved = it.algorithm.load(call, key, it, spare), before
    end
  end
  state.saved = saved
  return state
end

-- A decide-way item's decision on the key's value `raw`, converted first if it is state of other
-- windows of the rule: the value decided on, what put_back needs (false: nothing converted), then
-- it.decide's answers.
local function carry_decide(call, key, it, raw, undo)
  local reason, t, present, value, px = it.decide(raw, call.now, undo)
  if raw and not present then
    local carried, saved = carry_value(call, key, it, raw)
    if carried then
      return carried, saved, it.decide(carried, call.now, undo)
    end
  end
  return raw, false, reason, t, present, value, px
end
