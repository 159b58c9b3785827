-- Session creation: each session is an initialize (which returns an
-- Mcp-Session-Id) then a notifications/initialized on that session.
-- wrk -s sessions.lua URL -- INITIALIZE_BODY INITIALIZED_BODY VERSION [check]
-- With `check`, every initialize answer must be a result with id 1, a
-- protocolVersion and an Mcp-Session-Id, and every initialized answer a 202
-- with no body (see check.lua).
dofile("report.lua")
dofile("check.lua")

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
  checking = args[4] == "check"
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
  if checking then
    -- Only initialize is answered with a body; the notification gets an empty 202.
    if body:match("%S") then
      if check_result(status, body, "1", '"protocolVersion"') and id == nil then
        fail(status, body, "initialize answered without Mcp-Session-Id")
      end
    else
      check_accepted(status, body)
    end
  end
  -- Only an initialize answer (a body) opens a session: a server may repeat
  -- the id on the notification's 202, which must not count as another one.
  if id ~= nil and status == 200 and body:match("%S") then table.insert(pending, id) end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("sessions") end
  report(summary, latency, string.format(',"sessions":%d', total))
end
