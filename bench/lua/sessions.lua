-- Session creation: each session is an initialize (which returns an
-- Mcp-Session-Id) then a notifications/initialized on that session.
-- wrk -s sessions.lua URL -- INITIALIZE_BODY INITIALIZED_BODY VERSION
dofile("report.lua")

local pending = {}
sessions = 0

function init(args)
  local base = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
  }
  initialize = wrk.format("POST", nil, base, args[1])
  initialized_body = args[2]
  version = args[3]
end

function request()
  local id = table.remove(pending)
  if id == nil then return initialize end
  sessions = sessions + 1
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Protocol-Version"] = version,
    ["Mcp-Session-Id"] = id,
  }, initialized_body)
end

function response(status, headers, body)
  local id = headers["mcp-session-id"] or headers["Mcp-Session-Id"]
  if id ~= nil then table.insert(pending, id) end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("sessions") end
  report(summary, latency, string.format(',"sessions":%d', total))
end
