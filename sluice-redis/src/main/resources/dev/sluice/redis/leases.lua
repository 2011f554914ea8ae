-- The lease board of leased mode (RedisLeaseBoard): the leader record with its fencing token, each
-- instance's last usage report, and the sizes the leader publishes. Every key under one hash tag,
-- so each call is one script on one shard; every time is this server's clock, in milliseconds.
--
-- KEYS: [1] leader (hash: id, token, until), [2] epoch (the token counter), [3] reports (hash: id
-- → report), [4] seen (zset: id scored by its report's expiry), [5] sizes (hash: id → 'published
-- until ' .. sizes; field '@' → 'token published' of the last publish), [6] sized (zset: id scored
-- by its sizes' expiry). ARGV[1] is the operation:
--   'campaign id term'           leads, renews, or answers the leader in force: {id, token, until, now}
--   'leader'                     the leader in force, nothing written: {id or '', token, until, now}
--   'resign id token'            ends the term if id leads with token: 1, else 0
--   'report id ttl most bytes'   keeps the report; answers {sizes, published, leader id, token,
--                                until, now, reports kept}
--   'reports cursor'             one HSCAN page of unexpired reports: {next cursor, now, id, report, …}
--   'publish id token ttl most n id1 sizes1 …'
--                                writes the sizes if id leads with token and its term runs: 1, else 0
-- A bound passed answers an error starting LEASEFULL, nothing written.

local op = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The token counter outlives any term by far; each campaign moves its expiry on.
local EPOCH_MS = 7 * 24 * 3600 * 1000

local function ms(n)
  return string.format('%d', n)
end

-- The leader in force: its id, token and until, or false when none leads.
local function leader()
  local l = redis.call('HMGET', KEYS[1], 'id', 'token', 'until')
  if l[1] and l[3] and tonumber(l[3]) > now then
    return l[1], tonumber(l[2]), tonumber(l[3])
  end
  return false, 0, 0
end

-- Expired entries of a table, oldest first, a thousand at a time: more rarely expire between calls.
local function drop(zset, hash)
  local gone = redis.call('ZRANGEBYSCORE', zset, '-inf', now, 'LIMIT', 0, 1000)
  if #gone > 0 then
    redis.call('ZREM', zset, unpack(gone))
    redis.call('HDEL', hash, unpack(gone))
  end
end

-- A key kept at least `ttl` ms more, so that nothing is left behind once every instance stopped.
local function keep(key, ttl)
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, ttl)
  end
end

if op == 'campaign' then
  local id = ARGV[2]
  local term = tonumber(ARGV[3])
  local lid, token, till = leader()
  if not lid then
    token = redis.call('INCR', KEYS[2])
    lid = id
    till = now + term
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'id', id, 'token', token, 'until', ms(till))
    redis.call('PEXPIRE', KEYS[1], term)
  elseif lid == id then
    till = now + term
    redis.call('HSET', KEYS[1], 'until', ms(till))
    redis.call('PEXPIRE', KEYS[1], term)
  end
  redis.call('PEXPIRE', KEYS[2], EPOCH_MS)
  return {lid, token, till, now}
elseif op == 'leader' then
  local lid, token, till = leader()
  return {lid or '', token, till, now}
elseif op == 'resign' then
  local l = redis.call('HMGET', KEYS[1], 'id', 'token')
  if l[1] == ARGV[2] and l[2] == ARGV[3] then
    redis.call('DEL', KEYS[1])
    return 1
  end
  return 0
elseif op == 'report' then
  local id = ARGV[2]
  local ttl = tonumber(ARGV[3])
  local most = tonumber(ARGV[4])
  drop(KEYS[4], KEYS[3])
  if not redis.call('ZSCORE', KEYS[4], id) and redis.call('ZCARD', KEYS[4]) >= most then
    return redis.error_reply('LEASEFULL reports of ' .. most .. ' instances are kept, the most the board holds;'
      .. ' a report of a new instance is refused')
  end
  redis.call('HSET', KEYS[3], id, ARGV[5])
  redis.call('ZADD', KEYS[4], ms(now + ttl), id)
  keep(KEYS[3], 2 * ttl)
  keep(KEYS[4], 2 * ttl)
  local sizes, published = '', 0
  local v = redis.call('HGET', KEYS[5], id)
  if v then
    local at, till, from = string.match(v, '^(%d+) (%d+) ()')
    if from and tonumber(till) > now then
      sizes = string.sub(v, from)
      published = tonumber(at)
    end
  end
  local lid, token, till = leader()
  return {sizes, published, lid or '', token, till, now, redis.call('ZCARD', KEYS[4])}
elseif op == 'reports' then
  local page = redis.call('HSCAN', KEYS[3], ARGV[2], 'COUNT', 64)
  local out = {page[1], now}
  local kv = page[2]
  for i = 1, #kv, 2 do
    local till = redis.call('ZSCORE', KEYS[4], kv[i])
    if till and tonumber(till) > now then
      out[#out + 1] = kv[i]
      out[#out + 1] = kv[i + 1]
    end
  end
  return out
elseif op == 'publish' then
  local id = ARGV[2]
  local token = tonumber(ARGV[3])
  local ttl = tonumber(ARGV[4])
  local most = tonumber(ARGV[5])
  local n = tonumber(ARGV[6])
  -- The fence: checked in the script that writes, so no other call comes in between.
  local lid, ltoken = leader()
  if lid ~= id or ltoken ~= token then
    return 0
  end
  drop(KEYS[6], KEYS[5])
  local added = 0
  for i = 0, n - 1 do
    if not redis.call('ZSCORE', KEYS[6], ARGV[7 + 2 * i]) then
      added = added + 1
    end
  end
  local kept = redis.call('ZCARD', KEYS[6]) + added
  if kept > most then
    return redis.error_reply('LEASEFULL sizes of ' .. kept .. ' instances would be kept, more than the ' .. most
      .. ' the board holds; nothing was published')
  end
  local head = ms(now) .. ' ' .. ms(now + ttl) .. ' '
  for i = 0, n - 1 do
    local who = ARGV[7 + 2 * i]
    redis.call('HSET', KEYS[5], who, head .. ARGV[8 + 2 * i])
    redis.call('ZADD', KEYS[6], ms(now + ttl), who)
  end
  redis.call('HSET', KEYS[5], '@', ARGV[3] .. ' ' .. ms(now))
  keep(KEYS[5], ttl)
  keep(KEYS[6], ttl)
  return 1
end
return redis.error_reply('unknown operation ' .. tostring(op))
