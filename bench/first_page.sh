#!/usr/bin/env bash
# Seconds from `git clone` to the first 200 from /accounts/login/ after `make demo`, and to the judge run
# being queued; prints one JSON object, then stops the demo.
#
# Usage: bench/first_page.sh [BRANCH] [SCRATCH]    (default: the current branch, /tmp/timbang-first-page)
# Environment: PORT (default 28731), MODEL_PORT (default 28732): ports nobody else uses.
# A fresh .venv is made in the clone; pip's download cache is used as it is.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
BRANCH="${1:-$(git -C "$REPO" rev-parse --abbrev-ref HEAD)}"
SCRATCH="${2:-/tmp/timbang-first-page}"
PORT="${PORT:-28731}"
MODEL_PORT="${MODEL_PORT:-28732}"
if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then echo "port $PORT is taken" >&2; exit 1; fi
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
start=$(date +%s.%N)
git clone -q --branch "$BRANCH" "$REPO" "$SCRATCH/clone"
cd "$SCRATCH/clone"
env -u DATABASE_URL -u REDIS_URL -u DJANGO_SETTINGS_MODULE PORT="$PORT" MODEL_PORT="$MODEL_PORT" \
    TIMBANG_VAR_DIR="$SCRATCH/var" DEMO_PASSWORD=demo-pass setsid make demo > "$SCRATCH/demo.log" 2>&1 &
DEMO_PID=$!
trap 'kill -TERM -- -$DEMO_PID 2>/dev/null; sleep 10; kill -KILL -- -$DEMO_PID 2>/dev/null; true' EXIT
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/accounts/login/" || true)" = 200 ]; do
    kill -0 "$DEMO_PID" 2>/dev/null || { echo "make demo stopped; see $SCRATCH/demo.log" >&2; exit 1; }
    sleep 1
done
page=$(date +%s.%N)
until grep -q "Judge run .* queued" "$SCRATCH/demo.log"; do
    kill -0 "$DEMO_PID" 2>/dev/null || break
    sleep 1
done
queued=$(date +%s.%N)
printf '{"branch": "%s", "first_login_200_s": %.1f, "judge_run_queued_s": %.1f, "load_average_1m": %s}\n' \
    "$BRANCH" "$(echo "$page - $start" | bc)" "$(echo "$queued - $start" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
