-- Shared by every benchmark script: keeps the threads so done() can read
-- their counters, and prints one machine-readable line for bench/run.ts.
threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function report(summary, latency, extra)
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
    '"non2xx":%d,"socket_errors":%d%s}\n',
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99),
    errors.status, errors.connect + errors.read + errors.write + errors.timeout,
    extra or ""))
end
