-- Body checks (run.ts --check-bodies): each thread counts the responses it
-- checked and the ones that failed, and keeps the first failure; report.lua
-- sums them. A response is a JSON-RPC message as a JSON body or as the last
-- `data:` line of an SSE body.
checking = true
checked = 0
failures = 0
first_failure = nil

-- The JSON-RPC message of a body: the body itself, or its last SSE data line.
function message_of(body)
  local text = body:match("^%s*(.-)%s*$")
  if text:sub(1, 1) == "{" then return text end
  local last = nil
  for line in text:gmatch("[^\n]+") do
    local data = line:match("^data:%s*(.-)%s*$")
    if data ~= nil and data:sub(1, 1) == "{" then last = data end
  end
  return last
end

function fail(status, body, why)
  failures = failures + 1
  if first_failure == nil then
    first_failure = string.format("%s: status %d, body %s", why, status, body:sub(1, 200))
  end
end

-- A successful JSON-RPC result with the given id; `needle`, when given, must
-- appear in it. True when it passed (a failure is counted once).
function check_result(status, body, id, needle)
  checked = checked + 1
  if status ~= 200 then return fail(status, body, "not 200") end
  local message = message_of(body)
  if message == nil then return fail(status, body, "no JSON-RPC message") end
  if not message:find('"jsonrpc"%s*:%s*"2%.0"') then
    return fail(status, body, "no jsonrpc 2.0")
  end
  if not message:find('"id"%s*:%s*' .. id .. '%s*[,}]') then
    return fail(status, body, "wrong id")
  end
  if not message:find('"result"%s*:%s*{') or message:find('"isError"%s*:%s*true') then
    return fail(status, body, "no result")
  end
  if needle ~= nil and not message:find(needle, 1, true) then
    return fail(status, body, "unexpected result")
  end
  return true
end

-- The answer to a notification: 202 Accepted with no body.
function check_accepted(status, body)
  checked = checked + 1
  if status ~= 202 then return fail(status, body, "notification not 202") end
  if body:match("%S") then return fail(status, body, "notification answered with a body") end
end
