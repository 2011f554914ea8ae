-- The instances of a limiter fleet (RedisPolicyStore): a sorted set under the policies' hash tag,
-- each instance's id scored by its last heartbeat on this server's clock, in milliseconds. The
-- share of each limit that failure_mode: local holds in an instance is 1 / the instances counted.
--
-- KEYS[1] the set. ARGV[1] is the operation:
--   'beat id ttl'  records the heartbeat of id, forgets instances silent for ttl ms or more, and
--                  returns how many are left (id among them). The set lives 2 ttl after the last
--                  heartbeat, so nothing is left behind once every instance has stopped.
--   'leave id'     forgets id (an instance that closes).
--   'list ttl max' writes nothing: returns the server's time (ms), how many instances were heard
--                  within ttl ms, then the max heard most recently, each its id and last heartbeat.

local op = ARGV[1]

if op == 'beat' then
  local id = ARGV[2]
  local ttl = tonumber(ARGV[3])
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[1], now, id)
  -- Silent instances, a hundred at a time: a fleet rarely loses more between two heartbeats.
  local silent = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - ttl + 1), 'LIMIT', 0, 100)
  if #silent > 0 then
    redis.call('ZREM', KEYS[1], unpack(silent))
  end
  redis.call('PEXPIRE', KEYS[1], 2 * ttl)
  return redis.call('ZCARD', KEYS[1])
elseif op == 'leave' then
  return redis.call('ZREM', KEYS[1], ARGV[2])
elseif op == 'list' then
  local ttl = tonumber(ARGV[2])
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local from = '(' .. (now - ttl)
  local out = {now, redis.call('ZCOUNT', KEYS[1], from, '+inf')}
  local heard = redis.call('ZRANGE', KEYS[1], '+inf', from, 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[3]),
    'WITHSCORES')
  for i = 1, #heard, 2 do
    out[#out + 1] = heard[i]
    out[#out + 1] = tonumber(heard[i + 1])
  end
  return out
end
return redis.error_reply('unknown operation ' .. tostring(op))
