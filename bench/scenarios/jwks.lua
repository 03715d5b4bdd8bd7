-- Scenario: GET /v1/projects/{id}/.well-known/jwks.json, what backends fetch to validate session tokens (no auth;
-- one indexed read of the project's published keys).
--
-- Environment (set by bench/run.sh): BENCH_PROJECT_ID, the project's public id (prj_…).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "../lib/report.lua")

wrk.method = "GET"
wrk.path = "/v1/projects/" .. (os.getenv("BENCH_PROJECT_ID") or error("BENCH_PROJECT_ID is not set"))
    .. "/.well-known/jwks.json"

report.install("jwks")
