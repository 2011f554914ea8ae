-- wrk script: POST /v1/acquire for one rule, the key drawn uniformly from SLUICE_KEYS keys
-- (1: one hot key). Counts 200 (allowed) and 429 (denied) answers; anything else is an error.
local rule = os.getenv("SLUICE_RULE") or "auth.createToken"
local keys = tonumber(os.getenv("SLUICE_KEYS") or "10000")
allowed, denied, other = 0, 0, 0 -- globals: done() reads them from each thread
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local k = keys == 1 and 0 or math.random(0, keys - 1)
  return wrk.format(nil, "/v1/acquire", nil, string.format('{"rule":"%s","key":"user:%07d"}', rule, k))
end

function response(status, headers, body)
  if status == 200 then
    allowed = allowed + 1
  elseif status == 429 then
    denied = denied + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local a, d, o = 0, 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("allowed")
    d = d + t:get("denied")
    o = o + t:get("other")
  end
  io.write(string.format("sluice: allowed=%d denied=%d other=%d p50us=%d p99us=%d p999us=%d\n",
    a, d, o, latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
