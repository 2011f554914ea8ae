-- The keys beside a (rule, key)'s state that policies write (StateSiblings): KEYS[1] is
-- '<state key>:ban' or '<state key>:audit'.
--   ban until: the ban lasts until `until` (epoch ms, on the server's clock; 0: until lifted)
--   unban:     lifts it
--   audit:     the audit values, newest first
local op = ARGV[1]
if op == 'ban' then
  local until_ms = tonumber(ARGV[2])
  if until_ms == 0 then
    redis.call('SET', KEYS[1], ARGV[2])
    return 1
  end
  local t = redis.call('TIME')
  local left = until_ms - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  if left <= 0 then
    redis.call('DEL', KEYS[1])
    return 0
  end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', string.format('%d', left))
  return 1
elseif op == 'unban' then
  redis.call('DEL', KEYS[1])
  return 1
elseif op == 'audit' then
  return redis.call('LRANGE', KEYS[1], 0, -1)
end
return redis.error_reply('ERR unknown operation')
