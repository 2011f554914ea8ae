-- The well-known sorted-set log, for comparison: one member per admitted request, scored by
-- its time, in one sorted set per key; members older than the long window are trimmed on
-- every call.
-- KEYS[1]: the log.
-- ARGV: a member id unique to this request; the long window's limit and period (µs); the short
-- window's limit and period (µs). Time is the server's.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local longLimit, longPeriod = tonumber(ARGV[2]), tonumber(ARGV[3])
local shortLimit, shortPeriod = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longPeriod)
if redis.call('ZCARD', KEYS[1]) >= longLimit then
  return 0
end
if redis.call('ZCOUNT', KEYS[1], '(' .. (now - shortPeriod), '+inf') >= shortLimit then
  return 0
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(longPeriod / 1000))
return 1
