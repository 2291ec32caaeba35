#!/usr/bin/env bash
# Installs (from Debian's packages) and starts PostgreSQL and Redis on loopback for the
# tests, then prints the variables that point the tests at them. Idempotent.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PG_DIR=${ENDPOINTS_PORTAL_PG_DIR:-/tmp/endpoints-portal-pg}
PG_PORT=${ENDPOINTS_PORTAL_PG_PORT:-55432}
REDIS_PORT=${ENDPOINTS_PORTAL_REDIS_PORT:-56379}

if ! "$PG_BIN/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q 2>/dev/null; then
  rm -rf "$PG_DIR"
  mkdir -p "$PG_DIR"
  chown postgres "$PG_DIR"
  su postgres -c "$PG_BIN/initdb -D $PG_DIR/data -U postgres --auth=trust -E UTF8" >&2
  su postgres -c "$PG_BIN/pg_ctl -D $PG_DIR/data -l $PG_DIR/log -w -o '-h 127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c max_connections=300' start" >&2
fi

if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --save '' --appendonly no >&2
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

echo "export ENDPOINTS_PORTAL_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
echo "export ENDPOINTS_PORTAL_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
