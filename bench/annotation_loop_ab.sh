#!/usr/bin/env bash
# Old and new code of the annotation loop over HTTP, alternated on one machine in one sitting.
#
#   bench/annotation_loop_ab.sh RUNS...    where each RUN is  LABEL:CODE_DIR:NAME:ANNOTATORS[:FLAGS]
#
# For each NAME, /tmp/NAME.dump (pg_dump -Fc of a database set up by CODE_DIR's own
# `bench/annotation_loop.py setup`) and /tmp/NAME.json (its config) must exist. Every run restores the
# dump into a fresh database, runs VACUUM ANALYZE (the machine's PostgreSQL runs without autovacuum),
# starts a fresh `gunicorn -w WORKERS` from CODE_DIR, warms up for 4 s with 4 annotators, measures
# SECONDS with ANNOTATORS, stops the server and prints one JSON line with the label. FLAGS are passed to
# `annotation_loop.py run` (e.g. --separate for the GET next + POST protocol, --think 2.2).
#
# Example (old = a worktree of the code before, new = this one):
#   bench/annotation_loop_ab.sh old:/tmp/old:loop_old:50:--separate new:$PWD:loop_new:50 \
#       new:$PWD:loop_new:50 old:/tmp/old:loop_old:50:--separate
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
gunicorn=${GUNICORN:-$here/.venv/bin/gunicorn}
port=${PORT:-8418}
workers=${WORKERS:-4}
seconds=${SECONDS_MEASURED:-20}
pg="-h 127.0.0.1 -U postgres"

for spec in "$@"; do
  IFS=: read -r label code name annotators flags <<<"$spec"
  db="${name}_run"
  dropdb $pg --if-exists "$db"
  createdb $pg "$db"
  pg_restore $pg -d "$db" "/tmp/$name.dump"
  psql $pg -d "$db" -qc "VACUUM ANALYZE"
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db" DEBUG=false
  export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/5}
  redis-cli -u "$REDIS_URL" flushdb >/dev/null
  (cd "$code" && exec "$gunicorn" -w "$workers" ${GUNICORN_FLAGS:-} -b "127.0.0.1:$port" --log-level warning config.wsgi) &
  server=$!
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/accounts/login/" && break
    sleep 0.2
  done
  # shellcheck disable=SC2086  # FLAGS are words on purpose
  "$python" "$here/bench/annotation_loop.py" run --url "http://127.0.0.1:$port" --config "/tmp/$name.json" \
    --annotators 4 --seconds 4 $flags >/dev/null
  # What autovacuum does on a production server once a table has grown by 50 rows: the assignments and
  # answers start empty in the dump, and without fresh statistics PostgreSQL keeps planning them as empty
  # (e.g. a sequential scan for every foreign-key check of an answer row). ANALYZE=0 leaves them stale.
  [ "${ANALYZE:-1}" = 1 ] && psql $pg -d "$db" -qc "ANALYZE"
  sleep 1
  # shellcheck disable=SC2086
  result=$("$python" "$here/bench/annotation_loop.py" run --url "http://127.0.0.1:$port" \
    --config "/tmp/$name.json" --annotators "$annotators" --seconds "$seconds" $flags)
  kill "$server"
  wait "$server" 2>/dev/null || true
  echo "{\"label\": \"$label\", \"at\": \"$(date -u +%H:%M:%S)\", \"commit\": \"$(git -C "$code" rev-parse --short HEAD)\", \"result\": $result}"
  sleep 2
done
