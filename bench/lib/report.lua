-- Shared wrk hooks for every scenario: per-thread status counting and one machine-readable result line.
--
-- A scenario file loads this with
--     local report = dofile(<dir of the scenario> .. "../lib/report.lua")
--     report.install("name", { extra = function(threads) return { key = number, ... } end })
-- and defines its own `init`/`request` if it needs them. `install` defines the globals `setup`, `response` and
-- `done`; wrk calls `setup` (main state) once per thread before that thread's `init`, `response` in each thread's
-- state, and `done` once in the main state at the end.
--
-- `done` prints exactly one line to stdout:
--     BENCH_RESULT {"scenario":"…","requests":…,"duration_us":…,"latency_us":{…},"statuses":{"200":…},…}
-- run.sh greps for it, so wrk's human-readable output can change without breaking the parser.

local M = {}

-- Thread-state globals (thread:get reads globals).
thread_index = 0
statuses = {}

local function json_number(value)
    if value ~= value or value == math.huge or value == -math.huge then return "null" end
    if value == math.floor(value) and math.abs(value) < 2^53 then return string.format("%d", value) end
    return string.format("%.3f", value)
end

local function json_string(value)
    return '"' .. tostring(value):gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end

local function json_object(tbl)
    local keys = {}
    for key in pairs(tbl) do keys[#keys + 1] = tostring(key) end
    table.sort(keys)
    local parts = {}
    for _, key in ipairs(keys) do
        local value = tbl[key]
        if value == nil then value = tbl[tonumber(key)] end
        local encoded
        if type(value) == "table" then
            encoded = json_object(value)
        elseif type(value) == "number" then
            encoded = json_number(value)
        elseif type(value) == "boolean" then
            encoded = tostring(value)
        else
            encoded = json_string(value)
        end
        parts[#parts + 1] = json_string(key) .. ":" .. encoded
    end
    return "{" .. table.concat(parts, ",") .. "}"
end
M.json_object = json_object

--- Defines the wrk hooks. `options.extra(threads)` may return a table merged into the result as `extra`.
function M.install(scenario, options)
    options = options or {}
    local threads = {}

    function setup(thread)
        thread:set("thread_index", #threads)
        threads[#threads + 1] = thread
    end

    function response(status, headers, body)
        statuses[status] = (statuses[status] or 0) + 1
    end

    function done(summary, latency, requests)
        local merged = {}
        for _, thread in ipairs(threads) do
            for status, count in pairs(thread:get("statuses") or {}) do
                local key = tostring(math.floor(status))
                merged[key] = (merged[key] or 0) + count
            end
        end
        local non2xx = 0
        for status, count in pairs(merged) do
            local code = tonumber(status)
            if code < 200 or code > 299 then non2xx = non2xx + count end
        end
        local duration_s = summary.duration / 1e6
        local result = {
            scenario = scenario,
            threads = #threads,
            requests = summary.requests,
            duration_us = summary.duration,
            requests_per_sec = duration_s > 0 and summary.requests / duration_s or 0,
            bytes = summary.bytes,
            latency_us = {
                mean = latency.mean, stdev = latency.stdev, min = latency.min, max = latency.max,
                p50 = latency:percentile(50), p90 = latency:percentile(90), p99 = latency:percentile(99),
                p999 = latency:percentile(99.9),
            },
            statuses = merged,
            non_2xx = non2xx,
            socket_errors = {
                connect = summary.errors.connect, read = summary.errors.read, write = summary.errors.write,
                timeout = summary.errors.timeout,
            },
        }
        if options.extra then result.extra = options.extra(threads) end
        io.write("BENCH_RESULT ", json_object(result), "\n")
        io.flush()
    end
end

return M
