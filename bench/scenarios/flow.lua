-- Scenario: the whole code flow a backend runs, start then check: POST /v1/verifications to a new destination, then
-- POST /v1/verifications/check on the id it answered.
--
-- Environment (set by bench/run.sh): BENCH_API_KEY, the project's secret key; BENCH_CODE, the code to check (a
-- wrong 10-digit code: the console sender keeps the real one on the server, and a wrong check costs the server the
-- same as a right one, the HMAC compare and one conditional UPDATE of the verification).
--
-- Each thread keeps the ids its starts answered in a queue: a connection checks the oldest pending id when there is
-- one and starts a new verification otherwise, so starts and checks alternate and every started verification is
-- checked once. Thread k sends to +1 416 (2+k)xx xxxx, counting up, so no two starts share a destination.
-- `extra.flows` counts the checks answered 200: completed flows.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "../lib/report.lua")

-- Thread-state globals, read back in done() with thread:get.
flows = 0
starts = 0

local start_headers, check_headers, code
local pending = {}
local head, tail = 1, 0
local counter = 0

function init(args)
    local key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")
    code = os.getenv("BENCH_CODE") or "0000000000"
    start_headers = { ["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json" }
    check_headers = start_headers
end

function request()
    if head <= tail then
        local id = pending[head]
        pending[head] = nil
        head = head + 1
        return wrk.format("POST", "/v1/verifications/check", check_headers,
            '{"id":"' .. id .. '","code":"' .. code .. '"}')
    end
    counter = counter + 1
    local to = string.format("+1416%d%06d", 2 + thread_index, counter % 1000000)
    return wrk.format("POST", "/v1/verifications", start_headers, '{"to":"' .. to .. '","channel":"sms"}')
end

report.install("flow", {
    extra = function(threads)
        local total_flows, total_starts = 0, 0
        for _, thread in ipairs(threads) do
            total_flows = total_flows + (thread:get("flows") or 0)
            total_starts = total_starts + (thread:get("starts") or 0)
        end
        return { flows = total_flows, starts = total_starts }
    end,
})

local count_status = response
function response(status, headers, body)
    count_status(status, headers, body)
    if status == 201 then
        starts = starts + 1
        local id = body:match('"id"%s*:%s*"(ver_[^"]+)"')
        if id then
            tail = tail + 1
            pending[tail] = id
        end
    elseif status == 200 then
        flows = flows + 1
    end
end
