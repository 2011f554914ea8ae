-- The policy records (RedisPolicyStore): live limits, bans, list entries, their version and
-- change log (the denial sketches are sketches.lua's). Every key is under one hash tag, {policies}, so a Cluster
-- keeps them on one shard and one call changes a record and its log entry together.
--
-- ARGV[1] is the operation. Record operations get the same twelve keys:
--   KEYS[1] version   a counter: every change takes the next number (INCR)
--   KEYS[2] floor     the highest version the log no longer holds (0 while it holds all)
--   KEYS[3] log       zset: member '<kind> <rule> <key>', score the version of its last change
--   KEYS[4] expiry    zset: member '<kind> <rule> <key>', score the record's expiry (ms)
--   KEYS[5..12]       per kind (limit, ban, allow, deny): a hash, field '<rule> <key>' and value
--                     '<expiry ms> <value>', and a zset of the same fields at score 0, whose lex
--                     order ('<rule> <key>' as bytes) is the order of pages.
--
-- Time is the server's (TIME), so instances with skewed clocks agree on what has expired. A
-- record whose expiry has passed is absent for every operation; each call removes up to
-- PURGE such records, each removal a change like any other, so readers of the log learn of it.

local PURGE = 100
local KIND = {limit = 5, ban = 7, allow = 9, deny = 11}

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- 'limit rule key' -> 'limit', 'rule key'
local function split_member(member)
  local space = string.find(member, ' ', 1, true)
  return string.sub(member, 1, space - 1), string.sub(member, space + 1)
end

-- A stored value: expiry (ms, 0: never) and the record's value.
local function parse(stored)
  local space = string.find(stored, ' ', 1, true)
  return tonumber(string.sub(stored, 1, space - 1)), string.sub(stored, space + 1)
end

local function expired(expiry, now)
  return expiry ~= 0 and expiry <= now
end

-- Logs a change of one record: the next version becomes its entry's score (one entry per
-- record, so the log holds the last `keep` records changed), and what no longer fits goes,
-- raising the floor below which a reader has missed changes.
local function log_change(member, keep)
  local v = redis.call('INCR', KEYS[1])
  redis.call('ZADD', KEYS[3], v, member)
  local excess = redis.call('ZCARD', KEYS[3]) - keep
  if excess > 0 then
    local last_gone = redis.call('ZRANGE', KEYS[3], excess - 1, excess - 1, 'WITHSCORES')
    redis.call('SET', KEYS[2], last_gone[2])
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, excess - 1)
  end
  return v
end

local function forget(kind, field, keep)
  local k = KIND[kind]
  local member = kind .. ' ' .. field
  redis.call('HDEL', KEYS[k], field)
  redis.call('ZREM', KEYS[k + 1], field)
  redis.call('ZREM', KEYS[4], member)
  return log_change(member, keep)
end

-- Removes up to PURGE records whose expiry has passed.
local function purge(now, keep)
  local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, PURGE)
  for _, member in ipairs(due) do
    local kind, field = split_member(member)
    forget(kind, field, keep)
  end
end

local function version()
  return tonumber(redis.call('GET', KEYS[1]) or '0')
end

-- put kind field value expiry max keep -> version. The expiry is stored as the digits it came
-- in: Lua's numbers print only 14 significant digits.
local function put(now, kind, field, value, expiry_digits, max, keep)
  local k = KIND[kind]
  local expiry = tonumber(expiry_digits)
  local stored = redis.call('HGET', KEYS[k], field)
  if expired(expiry, now) then
    -- Already over on the server's clock: the record is absent, as if it had expired here.
    if stored then
      return forget(kind, field, keep)
    end
    return version()
  end
  if not stored and redis.call('HLEN', KEYS[k]) >= max then
    return redis.error_reply('POLICYFULL the store keeps at most ' .. max .. ' ' .. kind
      .. ' records: remove some, or let them expire')
  end
  local member = kind .. ' ' .. field
  redis.call('HSET', KEYS[k], field, expiry_digits .. ' ' .. value)
  redis.call('ZADD', KEYS[k + 1], 0, field)
  if expiry == 0 then
    redis.call('ZREM', KEYS[4], member)
  else
    redis.call('ZADD', KEYS[4], expiry_digits, member)
  end
  return log_change(member, keep)
end

-- remove kind field keep -> {removed (1/0), version}
local function remove(now, kind, field, keep)
  local stored = redis.call('HGET', KEYS[KIND[kind]], field)
  if not stored then
    return {0, version()}
  end
  local expiry = parse(stored)
  local v = forget(kind, field, keep)
  return {expired(expiry, now) and 0 or 1, v}
end

-- get kind field -> {expiry, value} or {}
local function get(now, kind, field)
  local stored = redis.call('HGET', KEYS[KIND[kind]], field)
  if not stored then
    return {}
  end
  local expiry, value = parse(stored)
  if expired(expiry, now) then
    return {}
  end
  return {expiry, value}
end

-- page kind min max count -> {field, expiry, value, ...}: up to count live records in lex order
-- from min to max (ZRANGEBYLEX bounds). Expired records not purged yet are skipped.
local function page(now, kind, min, max, count)
  local k = KIND[kind]
  local out = {}
  local found = 0
  while found < count do
    local fields = redis.call('ZRANGEBYLEX', KEYS[k + 1], min, max, 'LIMIT', 0, count)
    if #fields == 0 then
      break
    end
    local stored = redis.call('HMGET', KEYS[k], unpack(fields))
    for i, field in ipairs(fields) do
      if stored[i] then
        local expiry, value = parse(stored[i])
        if not expired(expiry, now) and found < count then
          out[#out + 1] = field
          out[#out + 1] = expiry
          out[#out + 1] = value
          found = found + 1
        end
      end
    end
    if #fields < count then
      break
    end
    min = '(' .. fields[#fields]
  end
  return out
end

-- changes since max -> {version, complete (1/0), kind, field, expiry (-1: removed), value, ...}
-- The changes after `since`, at most `max` records, each as it is now. When there are more, the
-- version returned is that of the last one returned, and the reader asks again from there.
local function changes(now, since_digits, max)
  local since = tonumber(since_digits)
  local current = version()
  local floor = tonumber(redis.call('GET', KEYS[2]) or '0')
  -- A reader behind the floor missed changes; one ahead of the version read another data set
  -- (the keys were deleted, or the server lost them): both must read everything again.
  if since < floor or since > current then
    return {current, 0}
  end
  local entries = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. since_digits, '+inf', 'WITHSCORES', 'LIMIT', 0, max)
  local out = {current, 1}
  if #entries == 2 * max then
    out[1] = tonumber(entries[#entries])
  end
  for i = 1, #entries, 2 do
    local kind, field = split_member(entries[i])
    local stored = redis.call('HGET', KEYS[KIND[kind]], field)
    local expiry, value = -1, ''
    if stored then
      expiry, value = parse(stored)
      if expired(expiry, now) then
        expiry, value = -1, ''
      end
    end
    out[#out + 1] = kind
    out[#out + 1] = field
    out[#out + 1] = expiry
    out[#out + 1] = value
  end
  return out
end

local op = ARGV[1]
local keep = tonumber(ARGV[2])
local now = now_ms()
purge(now, keep)
if op == 'put' then
  return put(now, ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), keep)
elseif op == 'remove' then
  return remove(now, ARGV[3], ARGV[4], keep)
elseif op == 'get' then
  return get(now, ARGV[3], ARGV[4])
elseif op == 'page' then
  return page(now, ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]))
elseif op == 'changes' then
  return changes(now, ARGV[3], tonumber(ARGV[4]))
elseif op == 'version' then
  return version()
end
return redis.error_reply('ERR unknown policy operation')
