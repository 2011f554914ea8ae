-- The keys beside a (rule, key)'s state that policies write (StateSiblings): KEYS[1] is
-- '<state key>:ban' or '<state key>:audit'.
--   ban until: the ban lasts until `until` (epoch ms, on the server's clock; 0: until lifted)
--   unban:     lifts it (and the denials counted towards one); 1 if there was one
--   audit:     the audit values, newest first
-- A ban key holds what policies.lua reads: int64s end of the ban (us), denials counted and the
-- start of their count (an operator's ban counts none).
local op = ARGV[1]
if op == 'ban' then
  local until_ms = tonumber(ARGV[2])
  if until_ms == 0 then
    -- Until lifted: an end no decision reaches (the year 2096).
    redis.call('SET', KEYS[1], struct.pack('<i8i8i8', 4e15, 0, 0))
    return 1
  end
  local t = redis.call('TIME')
  local left = until_ms - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  if left <= 0 then
    redis.call('DEL', KEYS[1])
    return 0
  end
  redis.call('SET', KEYS[1], struct.pack('<i8i8i8', until_ms * 1000, 0, 0), 'PX', string.format('%d', left))
  return 1
elseif op == 'unban' then
  return redis.call('DEL', KEYS[1])
elseif op == 'audit' then
  return redis.call('LRANGE', KEYS[1], 0, -1)
end
return redis.error_reply('ERR unknown operation')
