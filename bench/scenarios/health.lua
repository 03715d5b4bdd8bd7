-- Scenario: GET /health, the in-memory baseline (no auth, no database).
-- Run by bench/run.sh as: wrk -s bench/scenarios/health.lua http://127.0.0.1:PORT
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "../lib/report.lua")

wrk.method = "GET"
wrk.path = "/health"

report.install("health")
