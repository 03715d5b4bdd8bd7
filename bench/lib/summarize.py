#!/usr/bin/env python3
"""Turns the BENCH_RESULT lines of one bench run into the printed table and results/latest.json.

    summarize.py RUN_DIR OUT_JSON

RUN_DIR holds, per measured run LABEL: LABEL.wrk (one BENCH_RESULT line, from wrk + lib/report.lua or from
lib/pushload.py) and LABEL.cpu ("server_cpu_s load_cpu_s wall_s machine_cpu_s server_context_switches"), plus
meta.json (configuration and machine). Labels: health-1 and health-2 (wrk) always; check (wrk) when the check
scenario ran; health-py (pushload.py) when any pushload.py scenario ran; push (with push.outbox, "backlog_at_end
drain_s"), signin, refresh and possession (pushload.py) when those scenarios ran.
Exit status 2 when the run is not valid (check, a round trip, a sign-in, a refresh or a possession flow answered
anything unexpected, socket errors, or ids ran out).
"""

import json
import os
import sys

# The storage engine's aims (README, Performance): ratios to /health in the same run.
TARGET_RATIO_PCT = {"sqlite": 30.0, "postgres": 15.0}
TARGET_CHECK_P99_MS = 5.0
TARGET_PUSH_RATIO_PCT = 8.0
TARGET_FLOW_RATIO_PCT = 5.0
TARGET_SIGNIN_RATIO_PCT = 5.0
TARGET_COLD_START_MS = 50
TARGET_RSS_IDLE_MB = 40
TARGET_RSS_PEAK_MB = 256


def load(run_dir: str, label: str) -> dict | None:
    path = os.path.join(run_dir, f"{label}.wrk")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = [line for line in f if line.startswith("BENCH_RESULT ")]
    if len(lines) != 1:
        raise SystemExit(f"{label}: expected one BENCH_RESULT line in {label}.wrk, found {len(lines)}")
    result = json.loads(lines[0][len("BENCH_RESULT "):])
    with open(os.path.join(run_dir, f"{label}.cpu")) as f:
        fields = [float(x) for x in f.read().split()]
    server_cpu, load_cpu, wall, machine_cpu = fields[:4]
    # Context switches of the server's threads per iteration (request, or round trip for push): thread hand-offs.
    result["server_switches"] = fields[4] if len(fields) > 4 else None
    # "other" is everything else that ran meanwhile (other builds, the outbox poller is in "server"): on a quiet
    # machine it stays near 0%; tens of percent mean the figures are disturbed.
    result["cpu_pct"] = {
        "server": 100 * server_cpu / wall, "load": 100 * load_cpu / wall,
        "other": max(0.0, 100 * (machine_cpu - server_cpu - load_cpu) / wall),
    }
    return result


def row(endpoint: str, r: dict) -> dict:
    return {
        "endpoint": endpoint,
        "client": r.get("client", "wrk"),
        "requests": r["requests"],
        "requests_per_sec": round(r["requests_per_sec"], 1),
        "p50_ms": round(r["latency_us"]["p50"] / 1000, 3),
        "p99_ms": round(r["latency_us"]["p99"] / 1000, 3),
        "non_2xx": r["non_2xx"],
        "socket_errors": sum(r["socket_errors"].values()),
        "statuses": r["statuses"],
        "server_cpu_pct": round(r["cpu_pct"]["server"], 1),
        # The load generator's CPU: wrk, or pushload.py (all its processes).
        "wrk_cpu_pct": round(r["cpu_pct"]["load"], 1),
        "other_cpu_pct": round(r["cpu_pct"]["other"], 1),
        "server_switches_per_iteration": (
            round(r["server_switches"] / r["requests"], 1) if r.get("server_switches") is not None and r["requests"]
            else None),
    }


def step_latency_ms(extra: dict) -> dict:
    """Per step p50/p99 in ms, in the order an iteration makes the steps (pushload's step_order, when given)."""
    steps = extra.get("step_latency_us", {})
    order = [name for name in extra.get("step_order", []) if name in steps]
    order += [name for name in steps if name not in order]
    return {name: {"p50": round(steps[name]["p50"] / 1000, 3), "p99": round(steps[name]["p99"] / 1000, 3)}
            for name in order}


def main() -> int:
    run_dir, out_json = sys.argv[1], sys.argv[2]
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    raw = {label: load(run_dir, label)
           for label in ("health-1", "check", "start", "flow", "jwks", "health-py", "push", "signin", "refresh",
                         "possession", "health-2")}
    health1, check, start, flow, jwks, health_py, push, signin, refresh, possession, health2 = raw.values()
    if health1 is None or health2 is None:
        raise SystemExit("health-1 and health-2 are required")

    rows = [row("GET /health (run 1)", health1)]
    if check:
        rows.append(row("POST /v1/verifications/check", check))
    if start:
        rows.append(row("POST /v1/verifications (start)", start))
    if flow:
        rows.append(row("start+check flow (HTTP requests)", flow))
    if jwks:
        rows.append(row("GET …/.well-known/jwks.json", jwks))
    if health_py:
        rows.append(row("GET /health (pushload.py)", health_py))
    if push:
        steps = "create+fetch+respond" if push["extra"].get("fetch") else "create+respond"
        rows.append(row(f"push round trip ({steps})", push))
    if signin:
        rows.append(row(f"sign-in (otp start+verify, {signin['connections']} conns)", signin))
    if refresh:
        rows.append(row(f"POST /v1/auth/refresh ({refresh['connections']} conns)", refresh))
    if possession:
        rows.append(row(f"possession flow (4 reqs, {possession['connections']} conns)", possession))
    rows.append(row("GET /health (run 2)", health2))
    by_label = dict(zip([k for k, v in raw.items() if v is not None], rows))
    r1, r2 = by_label["health-1"], by_label["health-2"]
    mean = {
        "endpoint": "GET /health (mean of 2)",
        "client": "wrk",
        "requests": r1["requests"] + r2["requests"],
        "requests_per_sec": round((r1["requests_per_sec"] + r2["requests_per_sec"]) / 2, 1),
        "p50_ms": round((r1["p50_ms"] + r2["p50_ms"]) / 2, 3),
        "p99_ms": round((r1["p99_ms"] + r2["p99_ms"]) / 2, 3),
        "non_2xx": r1["non_2xx"] + r2["non_2xx"],
        "socket_errors": r1["socket_errors"] + r2["socket_errors"],
        "server_cpu_pct": round((r1["server_cpu_pct"] + r2["server_cpu_pct"]) / 2, 1),
        "wrk_cpu_pct": round((r1["wrk_cpu_pct"] + r2["wrk_cpu_pct"]) / 2, 1),
        "other_cpu_pct": round((r1["other_cpu_pct"] + r2["other_cpu_pct"]) / 2, 1),
        "server_switches_per_iteration": (
            round((r1["server_switches_per_iteration"] + r2["server_switches_per_iteration"]) / 2, 1)
            if r1["server_switches_per_iteration"] is not None and r2["server_switches_per_iteration"] is not None
            else None),
    }
    rows.append(mean)

    health_rps = mean["requests_per_sec"]

    def pct(value, of):
        return 100 * value / of if of else 0.0

    drift = pct(health2["requests_per_sec"] - health1["requests_per_sec"], health1["requests_per_sec"])
    problems = []
    if any(r["socket_errors"] for r in rows[:-1]):
        problems.append("the load generator saw socket errors (see socket_errors in the JSON)")
    if r1["non_2xx"] or r2["non_2xx"] or (health_py and health_py["non_2xx"]):
        problems.append("/health answered non-2xx responses")

    document_check = {}
    extra = {}
    if check:
        c = by_label["check"]
        extra = check.get("extra", {})
        if c["non_2xx"]:
            problems.append(f"check answered {c['non_2xx']} non-2xx responses {check['statuses']}")
        if extra.get("ids_exhausted"):
            problems.append(
                f"the check run used each id up to {extra['max_checks_per_id']} times (> 5): seed more (SEED=…)")
        document_check = {"check_to_health_pct": round(pct(c["requests_per_sec"], health_rps), 2)}

    # Plain wrk scenarios without a target: their ratio to /health, and every answer must be 2xx.
    for label, result in (("start", start), ("jwks", jwks)):
        if result:
            r = by_label[label]
            if r["non_2xx"]:
                problems.append(f"{label} answered {r['non_2xx']} non-2xx responses {result['statuses']}")
            document_check[f"{label}_to_health_pct"] = round(pct(r["requests_per_sec"], health_rps), 2)
    if flow:
        # A flow is one start and one check; its rate is the checks answered 200 per second.
        r = by_label["flow"]
        if r["non_2xx"]:
            problems.append(f"flow answered {r['non_2xx']} non-2xx responses {flow['statuses']}")
        flows_per_sec = flow["extra"]["flows"] / (flow["duration_us"] / 1e6)
        document_check["flow"] = {"flows_per_sec": round(flows_per_sec, 1), "starts": flow["extra"]["starts"],
                                  "flows": flow["extra"]["flows"]}
        document_check["flow_to_health_pct"] = round(pct(flows_per_sec, health_rps), 2)

    document_push = {}
    if push:
        p = by_label["push"]
        pe = push["extra"]
        if p["non_2xx"]:
            problems.append(f"{p['non_2xx']} push round trips got an unexpected answer {push['statuses']}: "
                            f"{pe.get('samples')}")
        outbox = None
        outbox_path = os.path.join(run_dir, "push.outbox")
        if os.path.exists(outbox_path):
            with open(outbox_path) as f:
                backlog, drain = f.read().split()
            outbox = {"pushes_queued_at_end": int(backlog), "drain_s": float(drain)}
        document_push = {
            "push_to_health_pct": round(pct(p["requests_per_sec"], health_rps), 2),
            "push_to_health_py_pct": (
                round(pct(p["requests_per_sec"], by_label["health-py"]["requests_per_sec"]), 2)
                if health_py else None),
            "push": {
                "round_trips_per_sec": p["requests_per_sec"],
                "http_requests_per_sec": round(pe["http_requests_per_sec"], 1),
                "requests_per_round_trip": 3 if pe.get("fetch") else 2,
                "devices": pe.get("devices"),
                "step_latency_ms": step_latency_ms(pe),
                "client_cpu_us_per_round_trip": pe.get("load_cpu_us_per_iteration"),
                "client_cpu_pct_per_process": pe.get("load_cpu_pct_per_process"),
                "health_py_client_cpu_pct_per_process": (
                    health_py["extra"].get("load_cpu_pct_per_process") if health_py else None),
                "outbox": outbox,
            },
        }

    # signin, refresh and possession: iterations/s against /health (wrk's, and pushload's own), per-step figures,
    # client CPU.
    test_number_scenarios = (("signin", signin, "sign_ins_per_sec"), ("refresh", refresh, "refreshes_per_sec"),
                             ("possession", possession, "flows_per_sec"))
    document_sessions = {}
    for label, result, rate_key in test_number_scenarios:
        if not result:
            continue
        r, e = by_label[label], result["extra"]
        if r["non_2xx"]:
            problems.append(f"{r['non_2xx']} {e.get('iterations', label)} got an unexpected answer "
                            f"{result['statuses']}: {e.get('samples')}")
        document_sessions.update({
            f"{label}_to_health_pct": round(pct(r["requests_per_sec"], health_rps), 2),
            f"{label}_to_health_py_pct": (
                round(pct(r["requests_per_sec"], by_label["health-py"]["requests_per_sec"]), 2) if health_py else None),
            label: {
                rate_key: r["requests_per_sec"],
                "http_requests_per_sec": round(e["http_requests_per_sec"], 1),
                "step_requests_per_sec": {name: round(v, 1) for name, v in e.get("step_requests_per_sec", {}).items()},
                "step_latency_ms": step_latency_ms(e),
                "connections": result["connections"],
                "connections_asked": e.get("connections_asked"),
                "test_numbers": e.get("test_numbers"),
                "client_cpu_us_per_iteration": e.get("load_cpu_us_per_iteration"),
                "client_cpu_pct_per_process": e.get("load_cpu_pct_per_process"),
            },
        })

    width = 38

    def switches(r):
        value = r.get("server_switches_per_iteration")
        return "-" if value is None else f"{value:.1f}"

    header = (f"{'endpoint':<{width}} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} {'server CPU':>11} "
              f"{'load CPU':>9} {'other CPU':>10} {'ctx sw':>7}")
    print()
    print(f"Verity bench: {meta['threads']} threads, {meta['connections']} connections, "
          f"{meta['duration_s']} s per run, {meta['seeded']} verifications seeded, "
          f"{meta.get('push', {}).get('devices', 0)} push factors, "
          f"{'PostgreSQL' if meta.get('database') == 'postgres' else 'SQLite'}")
    print(f"machine: {meta['machine']['nproc']} cores, {meta['machine']['cpu']}; commit {meta['git_commit']}")
    print()
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['endpoint']:<{width}} {r['requests_per_sec']:>10.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} "
              f"{r['non_2xx']:>8} {r['server_cpu_pct']:>10.0f}% {r['wrk_cpu_pct']:>8.0f}% "
              f"{r['other_cpu_pct']:>9.0f}% {switches(r):>7}")
    print()
    targets = {}
    if check:
        ratio = document_check["check_to_health_pct"]
        target_ratio = TARGET_RATIO_PCT["postgres" if meta.get("database") == "postgres" else "sqlite"]
        ratio_ok = ratio >= target_ratio
        p99_ok = by_label["check"]["p99_ms"] <= TARGET_CHECK_P99_MS
        targets.update({"check_to_health_pct": target_ratio, "check_p99_ms": TARGET_CHECK_P99_MS,
                        "ratio_met": ratio_ok, "p99_met": p99_ok})
        print(f"check / health   = {ratio:.1f}%   (target >= {target_ratio:.0f}%: "
              f"{'met' if ratio_ok else 'MISSED'})")
        print(f"check p99        = {by_label['check']['p99_ms']:.2f} ms (target <= {TARGET_CHECK_P99_MS:.0f} ms: "
              f"{'met' if p99_ok else 'MISSED'})")
    for label in ("start", "jwks"):
        if f"{label}_to_health_pct" in document_check:
            print(f"{label + ' / health':<16} = {document_check[label + '_to_health_pct']:.1f}%   (no target)")
    if flow:
        flow_ok = document_check["flow_to_health_pct"] >= TARGET_FLOW_RATIO_PCT
        targets.update({"flow_to_health_pct": TARGET_FLOW_RATIO_PCT, "flow_ratio_met": flow_ok})
        print(f"flow / health    = {document_check['flow_to_health_pct']:.2f}%  (start+check flows/s over wrk's "
              f"/health req/s; target >= {TARGET_FLOW_RATIO_PCT:.0f}%: {'met' if flow_ok else 'MISSED'})")
        print(f"flow             = {document_check['flow']['flows_per_sec']:.1f} flows/s "
              f"({document_check['flow']['flows']} checked of {document_check['flow']['starts']} started)")
    if push:
        ratio = document_push["push_to_health_pct"]
        push_ok = ratio >= TARGET_PUSH_RATIO_PCT
        targets.update({"push_to_health_pct": TARGET_PUSH_RATIO_PCT, "push_ratio_met": push_ok})
        dp = document_push["push"]
        print(f"push / health    = {ratio:.1f}%   (round trips/s over wrk's /health req/s; target >= "
              f"{TARGET_PUSH_RATIO_PCT:.0f}%: {'met' if push_ok else 'MISSED'})")
        if document_push["push_to_health_py_pct"] is not None:
            print(f"push / health    = {document_push['push_to_health_py_pct']:.1f}%   (both measured with "
                  f"pushload.py, the same client)")
        steps = ", ".join(f"{name} p50 {s['p50']:.2f} / p99 {s['p99']:.2f} ms"
                          for name, s in dp["step_latency_ms"].items())
        print(f"push             = {dp['round_trips_per_sec']:.1f} round trips/s = {dp['http_requests_per_sec']:.1f} "
              f"HTTP req/s ({dp['requests_per_round_trip']} per round trip); {steps}")
        print(f"push client      = {dp['client_cpu_us_per_round_trip']} us CPU per round trip; its processes used "
              f"{dp['client_cpu_pct_per_process']}% of a core each (100% would make it the bottleneck)")
        if dp["outbox"]:
            print(f"push outbox      = {dp['outbox']['pushes_queued_at_end']} pushes still queued at the end of the "
                  f"run, drained in {dp['outbox']['drain_s']:.1f} s")
    for label, result, _ in test_number_scenarios:
        if not result:
            continue
        d, e = document_sessions, result["extra"]
        what = e.get("iterations") or f"{e['iteration']}s"
        if label == "signin":
            signin_ok = d["signin_to_health_pct"] >= TARGET_SIGNIN_RATIO_PCT
            targets.update({"signin_to_health_pct": TARGET_SIGNIN_RATIO_PCT, "signin_ratio_met": signin_ok})
            aim = f"target >= {TARGET_SIGNIN_RATIO_PCT:.0f}%: {'met' if signin_ok else 'MISSED'}"
        else:
            aim = "no target"
        print(f"{label + ' / health':<16} = {d[label + '_to_health_pct']:.2f}%  ({what}/s over wrk's /health req/s; "
              f"{aim})")
        if d[f"{label}_to_health_py_pct"] is not None:
            print(f"{label + ' / health':<16} = {d[label + '_to_health_py_pct']:.2f}%  (both measured with "
                  f"pushload.py, the same client)")
        dl = d[label]
        if label == "signin":
            conns = f"{dl['connections']} connections, one test number each"
            if dl["connections"] != meta["connections"]:
                conns += f", not {meta['connections']}: a project has at most 10"
        elif label == "refresh":
            conns = f"{dl['connections']} connections, one session each, {dl['test_numbers']} test numbers"
        else:
            conns = f"{dl['connections']} connections, {dl['test_numbers']} test numbers round-robin"
        print(f"{label:<16} = {by_label[label]['requests_per_sec']:.1f} {what}/s = {dl['http_requests_per_sec']:.1f} "
              f"HTTP req/s ({conns})")
        steps = "; ".join(f"{name} {dl['step_requests_per_sec'].get(name, 0):.1f} req/s, p50 {s['p50']:.2f} / "
                          f"p99 {s['p99']:.2f} ms" for name, s in dl["step_latency_ms"].items())
        if len(dl["step_latency_ms"]) > 1:
            print(f"{label + ' steps':<16} = {steps}")
        print(f"{label + ' client':<16} = {dl['client_cpu_us_per_iteration']} us CPU per {e['iteration']}; its "
              f"processes used {dl['client_cpu_pct_per_process']}% of a core each")
    print(f"health drift     = {drift:+.1f}% from run 1 to run 2")
    memory = {}
    memory_path = os.path.join(run_dir, "memory.json")
    if os.path.exists(memory_path):
        with open(memory_path) as f:
            memory = json.load(f)
        def verdict(value, limit):
            return "met" if value <= limit else "MISSED"
        print(f"cold start       = {memory['cold_start_ms']} ms to the first /health 200 "
              f"(target <= {TARGET_COLD_START_MS} ms: {verdict(memory['cold_start_ms'], TARGET_COLD_START_MS)})")
        print(f"memory           = RSS {memory['rss_idle_mb']:.1f} MB idle (target <= {TARGET_RSS_IDLE_MB} MB: "
              f"{verdict(memory['rss_idle_mb'], TARGET_RSS_IDLE_MB)}), {memory['rss_peak_mb']:.1f} MB peak (target <= "
              f"{TARGET_RSS_PEAK_MB} MB: {verdict(memory['rss_peak_mb'], TARGET_RSS_PEAK_MB)})")
    if check:
        print(f"ids              = {extra.get('ids')} seeded for the check run, each checked at most "
              f"{extra.get('max_checks_per_id')} times (limit 5)")
    busiest_other = max(r["other_cpu_pct"] for r in rows[:-1])
    if busiest_other > 20:
        print(f"NOTE: other processes used up to {busiest_other:.0f}% CPU during a run: the figures are disturbed")
    for problem in problems:
        print(f"INVALID RUN: {problem}")

    document = {
        **meta,
        "results": rows,
        **document_check,
        **document_push,
        **document_sessions,
        "health_drift_pct": round(drift, 2),
        "memory": memory,
        "targets": targets,
        "check_ids": extra,
        "valid": not problems,
        "problems": problems,
        "raw": {label: value for label, value in raw.items() if value is not None},
    }
    os.makedirs(os.path.dirname(out_json), exist_ok=True)
    with open(out_json, "w") as f:
        json.dump(document, f, indent=2, sort_keys=False)
        f.write("\n")
    print(f"\nwrote {out_json}")
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
