-- Item arguments, TTLs and what every algorithm's state carries.

-- One item of the request as the Java side encoded it (ItemShape), a JSON array: algorithm code,
-- cost, fresh time (false when no state is too old), shadow (true/false), fingerprint of the rule
-- and the item's windows (`fp`, in every value's header), window count, one algorithm-specific
-- number (`extra`: the sliding log's slot width, the sliding window's precision, the leaky
-- bucket's max wait), the TTL slack in milliseconds (see ttl_px), the fingerprint of the rule
-- alone (`rfp`: which values carry.lua may convert; `fp` is the same for a key's own windows
-- under the definition), then per window limit, period
-- and the numbers the algorithm derives from them: none for sliding_log (1) and fixed_window
-- (3), the emission interval for token_bucket (4) and leaky_bucket (5) in aux1, bucket width
-- and bucket count for sliding_window (2) in aux1 and aux2. One JSON argument decodes in C,
-- cheaper than a separate argument per number. An item of other windows than the key's own
-- under the definition (a live limit) ends with the key's own (`own`: count, then limit and
-- period each), for carry.lua.
-- An item of a rule that bans or audits ends with four numbers more (see policies.lua): the
-- ban's after, within and for (µs), 0 0 0 for none, and the audit's keep, 0 for none.
--
-- `over` lists the windows whose limit the cost exceeds (false: none); `algorithm` is the
-- algorithm's table and `px` the usual TTL, both set by requests.lua; an algorithm's prepare adds
-- its layout.
local function read_item(arg)
  local v = cjson.decode(arg)
  local code, n, cost = v[1], v[6], v[2]
  local derived = 0
  if code == 2 then
    derived = 2
  elseif code >= 4 then
    derived = 1
  end
  local limit, period = {}, {}
  local aux1 = derived > 0 and {} or false
  local aux2 = derived > 1 and {} or false
  local longest, maxlimit = 0, 0
  local over = false
  local p = 10
  for i = 1, n do
    local l, w = v[p], v[p + 1]
    limit[i], period[i] = l, w
    if w > longest then longest = w end
    if l > maxlimit then maxlimit = l end
    if aux1 then aux1[i] = v[p + 2] end
    if aux2 then aux2[i] = v[p + 3] end
    -- A cost larger than a window's limit can never be admitted.
    if cost > l then
      over = over or {}
      over[#over + 1] = i
    end
    p = p + 2 + derived
  end
  -- A fixed-size value of other windows than the key's own ends with them (see values.lua); a
  -- log's header holds what its conversion needs instead.
  local trailer, own = '', false
  if v[5] ~= v[9] then
    own = {n = v[p], limit = {}, period = {}}
    for j = 1, own.n do
      own.limit[j], own.period[j] = v[p + 2 * j - 1], v[p + 2 * j]
    end
    if code ~= 1 then
      local parts = {}
      for i = 1, n do parts[i] = struct.pack('<i8i8', limit[i], period[i]) end
      parts[n + 1] = struct.pack('<I4I2', v[9], n)
      trailer = table.concat(parts)
    end
    p = p + 1 + 2 * own.n
  end
  -- A rule that bans or audits: its four numbers come last (see policies.lua).
  local ban, keep = false, false
  if v[p] then
    ban = v[p] > 0 and {after = v[p], within = v[p + 1], duration = v[p + 2]}
    keep = v[p + 3] > 0 and v[p + 3]
  end
  return {
    code = code, cost = cost, fresh = v[3] or NEVER, shadow = v[4], fp = v[5], rfp = v[9], n = n,
    extra = v[7], slack = v[8], limit = limit, period = period, aux1 = aux1, aux2 = aux2, trailer = trailer,
    own = own,
    longest = longest, maxlimit = maxlimit, over = over, algorithm = false, px = false,
    fields = false, offsets = false, log_header = false, log_format = false, log_full = false,
    decide = false, by_value = false, reads_whole = false, ban = ban, keep = keep, policy = ban or keep,
  }
end

-- The TTL a commit sets, in milliseconds, as PX's argument: no shorter than the longest window,
-- and no shorter than the time the state still matters (`need` microseconds from now), plus a
-- slack that covers clock steps between a master and its replicas and explicit (test or replay)
-- times that move slower than real time. Most commits need no more than the longest window: that
-- TTL is made once per item.
local function ttl_px(it, need)
  if need <= it.longest then
    local px = it.px
    if not px then
      px = int(-floordiv(-it.longest, 1000) + it.slack)
      it.px = px
    end
    return px
  end
  return int(-floordiv(-need, 1000) + it.slack)
end

-- A state-table algorithm's state (what its load returns) carries, besides its own fields: key, present
-- (the key holds current state), last (its latest time), value (the key's value as decided, for
-- a report by value), and the item's evaluation, which requests.lua and the algorithm fill in:
-- t the time it is decided at, fits, reason, and ex[i] the retry of each exceeded window (ex is
-- false while none is). A state may carry `spare`, a table that exceed uses as ex instead of
-- making one (a state reused within a call provides it).

-- Records that window i cannot take the cost, and when it could (retry > 0 us, or -1: never).
local function exceed(state, i, retry, reason)
  local ex = state.ex
  if not ex then
    ex = state.spare or {}
    state.ex = ex
  end
  ex[i] = retry
  state.fits = false
  state.reason = reason
end

-- Window i's retry for the report: 0 unless exceeded.
local function retry_of(state, i)
  local ex = state.ex
  return ex and ex[i] or 0
end
