#!/usr/bin/env bash
# Runs three `verity serve` nodes on one PostgreSQL database behind nginx (round-robin) and checks that what must
# hold once per fleet holds across nodes: checks and attempt limits, single approval, one delivery per outbox
# message, shared rate limits, push challenges answered on another node, and no lost start when a node dies.
# The checks themselves are in cluster_check.py; this script starts and stops everything.
#
#   CLUSTER_POSTGRES_URL  a PostgreSQL server to create a scratch database on (default: VERITY_TEST_POSTGRES_URL),
#                         e.g. postgres://postgres@127.0.0.1:55432/verity_test?sslmode=disable; trust auth expected.
#   VERITY_BIN            the verity binary (default: swift build --product verity, then .build/debug/verity).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PG_URL="${CLUSTER_POSTGRES_URL:-${VERITY_TEST_POSTGRES_URL:-}}"
usage() {
    cat >&2 <<'EOF'
cluster: no PostgreSQL. Start one and point the script at it, for example:
    mkdir -p /tmp/pgc && chown postgres /tmp/pgc
    runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D /tmp/pgc/data -U postgres --auth=trust
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D /tmp/pgc/data -l /tmp/pgc/log -w start \
        -o "-p 55433 -k /tmp/pgc -c listen_addresses=127.0.0.1 -c max_connections=300"
    CLUSTER_POSTGRES_URL='postgres://postgres@127.0.0.1:55433/postgres?sslmode=disable' bash Tests/cluster/cluster.sh
It also needs nginx (apt-get install nginx) and python3 with `cryptography`.
EOF
    exit 1
}
[ -n "$PG_URL" ] || usage
# postgres://user[:password]@host:port/db?… -> user, host, port (the scratch database replaces db).
read -r PG_USER PG_HOST PG_PORT < <(python3 -c '
import sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
print(u.username or "postgres", u.hostname or "127.0.0.1", u.port or 5432)' "$PG_URL")
PSQL=(psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -v ON_ERROR_STOP=1 -q)
"${PSQL[@]}" -d postgres -c "SELECT 1" >/dev/null 2>&1 || { echo "cluster: cannot reach PostgreSQL at $PG_URL" >&2; usage; }
NGINX=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)
[ -n "$NGINX" ] || { echo "cluster: nginx is not installed (apt-get install nginx)" >&2; exit 1; }

if [ -z "${VERITY_BIN:-}" ]; then
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY_BIN="$ROOT/.build/debug/verity"
fi
export VERITY_BIN

WORK=$(mktemp -d /tmp/verity-cluster.XXXXXX)
DB="verity_cluster_$$"
NODE_PIDS=()
NGINX_PID=""
DB_CREATED=""

cleanup() {
    local pid
    [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null || true
    for pid in "${NODE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -n "$NGINX_PID" ] && wait "$NGINX_PID" 2>/dev/null || true
    for pid in "${NODE_PIDS[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ -n "$DB_CREATED" ]; then
        "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
show_logs() {
    local i
    for i in 1 2 3; do echo "--- node $i log (tail) ---" >&2; tail -n 40 "$WORK/node$i.log" >&2 2>/dev/null || true; done
    echo "--- nginx error log (tail) ---" >&2; tail -n 20 "$WORK/nginx/error.log" >&2 2>/dev/null || true
}
fail() { echo "cluster: FAILED: $*" >&2; show_logs; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

"${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB"
DB_CREATED=1
export VERITY_DATABASE_URL="postgres://$PG_USER@$PG_HOST:$PG_PORT/$DB?sslmode=disable"
VERITY_MASTER_KEY=$(openssl rand -base64 32)
export VERITY_MASTER_KEY
unset VERITY_DATA_DIR

# Three nodes, started together (migrations serialise on an advisory lock).
PORTS=()
for i in 1 2 3; do
    PORT=$(free_port)
    PORTS+=("$PORT")
    # Started from a subshell, so the node is not a job of this shell and its SIGKILL later is not announced.
    (VERITY_LOG_LEVEL=info VERITY_RATE_LIMIT_DESTINATION=3/h VERITY_RATE_LIMIT_NUMBER_BLOCK=1000/s VERITY_RATE_LIMIT_PROJECT=1000/s \
        "$VERITY_BIN" serve --host 127.0.0.1 --port "$PORT" --data-dir "$WORK/data$i" >"$WORK/node$i.log" 2>&1 &
        echo $! >"$WORK/node$i.pid")
    NODE_PIDS+=("$(cat "$WORK/node$i.pid")")
done
# /ready asks PostgreSQL, so a node counts as up only once it can use the shared database.
for i in 0 1 2; do
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:${PORTS[$i]}/ready" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:${PORTS[$i]}/ready" >/dev/null || fail "node $((i + 1)) did not answer /ready"
done

NGINX_PORT=$(free_port)
mkdir -p "$WORK/nginx"
# As root, nginx's worker would run as nobody, which cannot enter the 0700 temp dir for its buffers.
NGINX_USER=""
[ "$(id -u)" = "0" ] && NGINX_USER="user root root;"
cat >"$WORK/nginx/nginx.conf" <<EOF
$NGINX_USER
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log $WORK/nginx/access.log;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    upstream verity {
        server 127.0.0.1:${PORTS[0]};
        server 127.0.0.1:${PORTS[1]};
        server 127.0.0.1:${PORTS[2]};
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / {
            proxy_pass http://verity;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
            proxy_read_timeout 30s;
        }
    }
}
EOF
"$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" -g 'daemon off;' 2>>"$WORK/nginx/error.log" &
NGINX_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$NGINX_PORT/health" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$NGINX_PORT/health" >/dev/null || fail "nginx did not answer /health"
echo "ok - three nodes on ports ${PORTS[*]} share database $DB behind nginx on port $NGINX_PORT"

CREATED=$("$VERITY_BIN" admin project create --name Cluster --json) || fail "admin project create"
export CLUSTER_API_KEY CLUSTER_PROJECT
CLUSTER_API_KEY=$(echo "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
CLUSTER_PROJECT=$(echo "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["project"]["id"])')
[[ "$CLUSTER_API_KEY" == vk_* && "$CLUSTER_PROJECT" == prj_* ]] || fail "project create printed $CREATED"

export CLUSTER_PROXY="http://127.0.0.1:$NGINX_PORT"
export CLUSTER_NODES="http://127.0.0.1:${PORTS[0]} http://127.0.0.1:${PORTS[1]} http://127.0.0.1:${PORTS[2]}"
export CLUSTER_NODE_PIDS="${NODE_PIDS[*]}"
export CLUSTER_NODE_LOGS="$WORK/node1.log $WORK/node2.log $WORK/node3.log"
export CLUSTER_WORK="$WORK"
python3 "$ROOT/Tests/cluster/cluster_check.py" || fail "see above"
