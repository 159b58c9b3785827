-- Shared by every benchmark script: keeps the threads so done() can read
-- their counters, and prints one machine-readable line for bench/run.ts:
-- wrk's counters, its own CPU time (user + system of the whole wrk process,
-- from /proc/self/stat, in clock ticks) and, when bodies were checked, the
-- checked and failed counts and the first failure.
threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- utime + stime of this process (all its threads), in clock ticks.
local function cpu_ticks()
  local file = io.open("/proc/self/stat")
  if file == nil then return -1 end
  local stat = file:read("*a")
  file:close()
  -- Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
  local rest = stat:sub(stat:find("%) ") + 2)
  local fields = {}
  for field in rest:gmatch("%S+") do table.insert(fields, field) end
  return tonumber(fields[12]) + tonumber(fields[13])
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

-- Sums the body-check counters of every thread (see check.lua), as JSON fields.
local function checks()
  local checked, failures, first = 0, 0, nil
  for _, thread in ipairs(threads) do
    if thread:get("checking") then
      checked = checked + thread:get("checked")
      failures = failures + thread:get("failures")
      first = first or thread:get("first_failure")
    end
  end
  if checked == 0 and failures == 0 then return "" end
  return string.format(',"checked":%d,"bad_bodies":%d%s', checked, failures,
    first and (',"first_bad_body":' .. json_string(first)) or "")
end

function report(summary, latency, extra)
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
    '"non2xx":%d,"socket_errors":%d,"client_cpu_ticks":%d,"client_threads":%d%s%s}\n',
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99),
    errors.status, errors.connect + errors.read + errors.write + errors.timeout,
    cpu_ticks(), #threads, checks(), extra or ""))
end
