#!/usr/bin/env python3
"""Turns the BENCH_RESULT lines of one bench run into the printed table and results/latest.json.

    summarize.py RUN_DIR OUT_JSON

RUN_DIR holds, per measured run LABEL: LABEL.wrk (wrk's output, with one BENCH_RESULT line) and LABEL.cpu
("server_cpu_s wrk_cpu_s wall_s machine_cpu_s"), plus meta.json (configuration and machine).
Labels: health-1, check, health-2.
Exit status 2 when the run is not valid (check answered anything but 2xx, socket errors, or ids ran out).
"""

import json
import os
import sys

TARGET_RATIO_PCT = 30.0
TARGET_CHECK_P99_MS = 10.0


def load(run_dir: str, label: str) -> dict:
    with open(os.path.join(run_dir, f"{label}.wrk")) as f:
        lines = [line for line in f if line.startswith("BENCH_RESULT ")]
    if len(lines) != 1:
        raise SystemExit(f"{label}: expected one BENCH_RESULT line in {label}.wrk, found {len(lines)}")
    result = json.loads(lines[0][len("BENCH_RESULT "):])
    with open(os.path.join(run_dir, f"{label}.cpu")) as f:
        server_cpu, wrk_cpu, wall, machine_cpu = (float(x) for x in f.read().split())
    # "other" is everything else that ran meanwhile (other builds, the outbox poller is in "server"): on a quiet
    # machine it stays near 0%; tens of percent mean the figures are disturbed.
    result["cpu_pct"] = {
        "server": 100 * server_cpu / wall, "wrk": 100 * wrk_cpu / wall,
        "other": max(0.0, 100 * (machine_cpu - server_cpu - wrk_cpu) / wall),
    }
    return result


def row(endpoint: str, r: dict) -> dict:
    return {
        "endpoint": endpoint,
        "requests": r["requests"],
        "requests_per_sec": round(r["requests_per_sec"], 1),
        "p50_ms": round(r["latency_us"]["p50"] / 1000, 3),
        "p99_ms": round(r["latency_us"]["p99"] / 1000, 3),
        "non_2xx": r["non_2xx"],
        "socket_errors": sum(r["socket_errors"].values()),
        "statuses": r["statuses"],
        "server_cpu_pct": round(r["cpu_pct"]["server"], 1),
        "wrk_cpu_pct": round(r["cpu_pct"]["wrk"], 1),
        "other_cpu_pct": round(r["cpu_pct"]["other"], 1),
    }


def main() -> int:
    run_dir, out_json = sys.argv[1], sys.argv[2]
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    health1, check, health2 = (load(run_dir, label) for label in ("health-1", "check", "health-2"))

    rows = [
        row("GET /health (run 1)", health1),
        row("POST /v1/verifications/check", check),
        row("GET /health (run 2)", health2),
    ]
    mean = {
        "endpoint": "GET /health (mean of 2)",
        "requests": health1["requests"] + health2["requests"],
        "requests_per_sec": round((health1["requests_per_sec"] + health2["requests_per_sec"]) / 2, 1),
        "p50_ms": round((rows[0]["p50_ms"] + rows[2]["p50_ms"]) / 2, 3),
        "p99_ms": round((rows[0]["p99_ms"] + rows[2]["p99_ms"]) / 2, 3),
        "non_2xx": rows[0]["non_2xx"] + rows[2]["non_2xx"],
        "socket_errors": rows[0]["socket_errors"] + rows[2]["socket_errors"],
        "server_cpu_pct": round((rows[0]["server_cpu_pct"] + rows[2]["server_cpu_pct"]) / 2, 1),
        "wrk_cpu_pct": round((rows[0]["wrk_cpu_pct"] + rows[2]["wrk_cpu_pct"]) / 2, 1),
        "other_cpu_pct": round((rows[0]["other_cpu_pct"] + rows[2]["other_cpu_pct"]) / 2, 1),
    }
    rows.append(mean)

    health_rps = mean["requests_per_sec"]
    ratio = 100 * check["requests_per_sec"] / health_rps if health_rps else 0.0
    drift = (
        100 * (health2["requests_per_sec"] - health1["requests_per_sec"]) / health1["requests_per_sec"]
        if health1["requests_per_sec"] else 0.0
    )
    extra = check.get("extra", {})
    problems = []
    if rows[1]["non_2xx"]:
        problems.append(f"check answered {rows[1]['non_2xx']} non-2xx responses {check['statuses']}")
    if any(r["socket_errors"] for r in rows[:3]):
        problems.append("wrk saw socket errors (see socket_errors in the JSON)")
    if extra.get("ids_exhausted"):
        problems.append(
            f"the check run used each id up to {extra['max_checks_per_id']} times (> 5): seed more (SEED=…)")
    if rows[0]["non_2xx"] or rows[2]["non_2xx"]:
        problems.append("/health answered non-2xx responses")

    header = (f"{'endpoint':<30} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} {'server CPU':>11} "
              f"{'wrk CPU':>8} {'other CPU':>10}")
    print()
    print(f"Verity bench: {meta['threads']} threads, {meta['connections']} connections, "
          f"{meta['duration_s']} s per run, {meta['seeded']} verifications seeded, SQLite")
    print(f"machine: {meta['machine']['nproc']} cores, {meta['machine']['cpu']}; commit {meta['git_commit']}")
    print()
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['endpoint']:<30} {r['requests_per_sec']:>10.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} "
              f"{r['non_2xx']:>8} {r['server_cpu_pct']:>10.0f}% {r['wrk_cpu_pct']:>7.0f}% {r['other_cpu_pct']:>9.0f}%")
    print()
    ratio_ok = ratio >= TARGET_RATIO_PCT
    p99_ok = rows[1]["p99_ms"] < TARGET_CHECK_P99_MS
    print(f"check / health = {ratio:.1f}%   (target >= {TARGET_RATIO_PCT:.0f}%: {'met' if ratio_ok else 'MISSED'})")
    print(f"check p99      = {rows[1]['p99_ms']:.2f} ms (target < {TARGET_CHECK_P99_MS:.0f} ms: "
          f"{'met' if p99_ok else 'MISSED'})")
    print(f"health drift   = {drift:+.1f}% from run 1 to run 2")
    print(f"ids            = {extra.get('ids')} seeded for the check run, each checked at most "
          f"{extra.get('max_checks_per_id')} times (limit 5)")
    busiest_other = max(r["other_cpu_pct"] for r in rows[:3])
    if busiest_other > 20:
        print(f"NOTE: other processes used up to {busiest_other:.0f}% CPU during a run: the figures are disturbed")
    for problem in problems:
        print(f"INVALID RUN: {problem}")

    document = {
        **meta,
        "results": rows,
        "check_to_health_pct": round(ratio, 2),
        "health_drift_pct": round(drift, 2),
        "targets": {
            "check_to_health_pct": TARGET_RATIO_PCT, "check_p99_ms": TARGET_CHECK_P99_MS,
            "ratio_met": ratio_ok, "p99_met": p99_ok,
        },
        "check_ids": extra,
        "valid": not problems,
        "problems": problems,
        "raw": {"health-1": health1, "check": check, "health-2": health2},
    }
    os.makedirs(os.path.dirname(out_json), exist_ok=True)
    with open(out_json, "w") as f:
        json.dump(document, f, indent=2, sort_keys=False)
        f.write("\n")
    print(f"\nwrote {out_json}")
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
