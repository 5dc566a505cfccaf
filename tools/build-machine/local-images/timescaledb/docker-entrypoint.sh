#!/bin/bash
# As timescale/timescaledb's entry point, in short: initialise PGDATA on first start (superuser
# POSTGRES_USER with POSTGRES_PASSWORD, database POSTGRES_DB) with TimescaleDB preloaded in
# postgresql.conf, its telemetry as TIMESCALEDB_TELEMETRY says (off unless set: this stand-in
# reaches nobody's telemetry endpoint) and the extension created in template1, postgres and
# POSTGRES_DB, as the upstream image's initdb script does; then run the server as postgres.
set -euo pipefail
if [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
    echo 'POSTGRES_PASSWORD is empty: set it, or POSTGRES_HOST_AUTH_METHOD=trust' >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >/dev/null
  rm -f "$pwfile"
  # The upstream image preloads TimescaleDB through its postgresql.conf.sample and sizes the
  # workers with timescaledb-tune; a fixed size here: the launcher, a scheduler per database and
  # their jobs share these workers with parallel queries.
  cat >>"$PGDATA/postgresql.conf" <<CONF
listen_addresses = '*'
shared_preload_libraries = 'timescaledb'
timescaledb.telemetry_level = '${TIMESCALEDB_TELEMETRY:-off}'
max_worker_processes = 26
timescaledb.max_background_workers = 18
CONF
  echo "host all all all ${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >>"$PGDATA/pg_hba.conf"
  # A server on the socket only, for the extension (single-user mode runs no loader workers).
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w -s start
  run() { psql -X -q -v ON_ERROR_STOP=1 -U "$user" "$@"; }
  run -d template1 -c 'create extension if not exists timescaledb'
  run -d postgres -c 'create extension if not exists timescaledb'
  if [ "$db" != postgres ]; then
    run -d postgres -c "create database \"$db\""
    run -d "$db" -c 'create extension if not exists timescaledb'
  fi
  pg_ctl -D "$PGDATA" -m fast -w -s stop
  echo "initialised $PGDATA (user $user, database $db, TimescaleDB preloaded)"
fi
shift
exec postgres -D "$PGDATA" "$@"
