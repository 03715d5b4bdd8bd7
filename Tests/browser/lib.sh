# Shared by the browser checks (instant_link.sh, console.sh): finding the browser, chromedriver and the verity
# binary, free ports, and starting and stopping chromedriver. Source it after `cd` to the repository root and after
# setting NAME (the check's name, for messages) and WORK (its scratch directory).

# Sets CHROMIUM and CHROMEDRIVER, or exits saying how to install them.
find_browser() {
    CHROMIUM=${CHROMIUM_BIN:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
    CHROMEDRIVER=${CHROMEDRIVER_BIN:-$(command -v chromedriver || true)}
    if [ -z "$CHROMIUM" ] || [ -z "$CHROMEDRIVER" ] || [ ! -x "$CHROMIUM" ] || [ ! -x "$CHROMEDRIVER" ]; then
        echo "$NAME: needs headless Chromium and chromedriver (found browser '${CHROMIUM}', driver '${CHROMEDRIVER}')." >&2
        echo "  Debian/Ubuntu: sudo apt-get install -y chromium chromium-driver" >&2
        echo "  or point CHROMIUM_BIN and CHROMEDRIVER_BIN at a matching browser and driver." >&2
        exit 1
    fi
}

# Sets VERITY: VERITY_BIN, or a debug build of the verity product.
find_verity() {
    if [ -n "${VERITY_BIN:-}" ]; then
        VERITY=$VERITY_BIN
    else
        swift build --product verity >/dev/null 2>&1 || swift build --product verity
        VERITY="$PWD/.build/debug/verity"
    fi
}

# Sets ARTIFACTS: ARTIFACTS_DIR (made if missing), as an absolute path.
artifacts_dir() {
    ARTIFACTS=${ARTIFACTS_DIR:-${TMPDIR:-/tmp}/verity-artifacts}
    mkdir -p "$ARTIFACTS"
    ARTIFACTS=$(cd "$ARTIFACTS" && pwd)
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_driver PORT: starts chromedriver (in its own process group where setsid exists) and waits until it is ready;
# sets DRIVER_PID. Logs go to $WORK/chromedriver.log and .out.
start_driver() {
    if command -v setsid >/dev/null; then
        setsid "$CHROMEDRIVER" --port="$1" --log-path="$WORK/chromedriver.log" >"$WORK/chromedriver.out" 2>&1 &
    else
        "$CHROMEDRIVER" --port="$1" --log-path="$WORK/chromedriver.log" >"$WORK/chromedriver.out" 2>&1 &
    fi
    DRIVER_PID=$!
    local ready=""
    for _ in $(seq 1 100); do
        ready=$(curl -sf "http://127.0.0.1:$1/status" 2>/dev/null \
            | python3 -c "import json,sys; print(json.load(sys.stdin)['value']['ready'])" 2>/dev/null || true)
        [ "$ready" = "True" ] && return 0
        sleep 0.1
    done
    echo "$NAME: chromedriver did not become ready: $(cat "$WORK/chromedriver.out")" >&2
    return 1
}

stop_driver() {
    if [ -n "${DRIVER_PID:-}" ]; then
        # chromedriver runs in its own process group (setsid), so any browser it left behind goes with it.
        if [ "$(ps -o pgid= -p "$DRIVER_PID" 2>/dev/null | tr -d ' ')" = "$DRIVER_PID" ]; then
            kill -- "-$DRIVER_PID" 2>/dev/null || true
        else
            kill "$DRIVER_PID" 2>/dev/null || true
        fi
        wait "$DRIVER_PID" 2>/dev/null || true
        DRIVER_PID=""
    fi
}
