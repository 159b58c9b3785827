-- One fixed POST, over and over: wrk -s post.lua URL -- BODY "Name: value"...
dofile("report.lua")

function init(args)
  local headers = {}
  for i = 2, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  request_bytes = wrk.format("POST", nil, headers, args[1])
end

function request()
  return request_bytes
end

function done(summary, latency, requests)
  report(summary, latency)
end
