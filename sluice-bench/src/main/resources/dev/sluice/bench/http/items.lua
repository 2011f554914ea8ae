-- wrk script: GET /api/items/{id} for users taken in turn from SLUICE_USERS (X-User header), so
-- that each user asks at the same steady rate and no per-user limit of the application binds.
-- No response() callback: wrk counts answers that are not 2xx itself, and a Lua call per answer
-- would make the load generator, not the server, the bottleneck.
local users = tonumber(os.getenv("SLUICE_USERS") or "10000")
local n = 0

function init(args)
  -- each wrk thread starts elsewhere in the rotation
  n = math.random(0, users - 1)
end

function request()
  n = n + 1
  return wrk.format("GET", "/api/items/" .. (n % 1000), {["X-User"] = "u" .. (n % users)})
end
