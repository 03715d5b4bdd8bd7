-- Scenario: POST /v1/verifications to a new destination every time: the verification's insert and its outbox
-- message in one transaction (console sender; the outbox worker delivers in the background).
--
-- Environment (set by bench/run.sh): BENCH_API_KEY, the project's secret key; BENCH_THREADS, wrk's -t.
-- Thread k sends to +1 415 (2+k)xx xxxx, counting up, so no two requests share a destination (each would otherwise
-- re-send the pending code, and the per-destination limit would end the run).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "../lib/report.lua")

local headers
local counter = 0

function init(args)
    headers = {
        ["Authorization"] = "Bearer " .. (os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")),
        ["Content-Type"] = "application/json",
    }
end

function request()
    counter = counter + 1
    local to = string.format("+1415%d%06d", 2 + thread_index, counter % 1000000)
    return wrk.format("POST", "/v1/verifications", headers, '{"to":"' .. to .. '","channel":"sms"}')
end

report.install("start")
