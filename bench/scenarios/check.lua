-- Scenario: POST /v1/verifications/check with a wrong code, spread over pre-started verifications.
--
-- Environment (set by bench/run.sh):
--   BENCH_API_KEY   the project's secret key (vk_…)
--   BENCH_IDS_FILE  one verification id per line, seeded before the run
--   BENCH_THREADS   wrk's -t, so each thread takes a disjoint slice of the ids
--   BENCH_CODE      the wrong code to send (default 10 digits; run.sh creates the project with --code-length 10,
--                   so a wrong guess hits the full HMAC compare and the odds of an accidental match are 1e-10)
--
-- Thread k of n uses ids k+1, k+1+n, k+1+2n, … round-robin, so one id is never shared between threads and is
-- checked once per pass over the slice. A verification answers 200 to its first 5 wrong codes and 429 after
-- that, so a clean run needs at most 5 passes: `extra.max_checks_per_id` in the result says how many there were.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "../lib/report.lua")

local MAX_CHECKS = 5

-- Thread-state globals, read back in done() with thread:get.
sent = 0
slice_size = 0

local prepared = {}
local cursor = 0

function init(args)
    local key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")
    local path = os.getenv("BENCH_IDS_FILE") or error("BENCH_IDS_FILE is not set")
    local thread_count = tonumber(os.getenv("BENCH_THREADS") or "1")
    local code = os.getenv("BENCH_CODE") or "0000000000"
    local headers = {
        ["Authorization"] = "Bearer " .. key,
        ["Content-Type"] = "application/json",
    }
    local index = 0
    for line in io.lines(path) do
        if line ~= "" then
            if index % thread_count == thread_index then
                local body = '{"id":"' .. line .. '","code":"' .. code .. '"}'
                prepared[#prepared + 1] = wrk.format("POST", "/v1/verifications/check", headers, body)
            end
            index = index + 1
        end
    end
    slice_size = #prepared
    if slice_size == 0 then error("no ids for thread " .. thread_index .. " in " .. path) end
end

function request()
    cursor = cursor % slice_size + 1
    sent = sent + 1
    return prepared[cursor]
end

report.install("check", {
    extra = function(threads)
        local total_sent, max_passes, ids = 0, 0, 0
        for _, thread in ipairs(threads) do
            local thread_sent, size = thread:get("sent") or 0, thread:get("slice_size") or 0
            total_sent = total_sent + thread_sent
            ids = ids + size
            if size > 0 then max_passes = math.max(max_passes, math.ceil(thread_sent / size)) end
        end
        return {
            ids = ids, requests_sent = total_sent, max_checks_per_id = max_passes,
            ids_exhausted = max_passes > MAX_CHECKS,
        }
    end,
})
