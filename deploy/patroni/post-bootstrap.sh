#!/bin/sh
# Patroni's post_bootstrap (deploy/patroni/patroni.yml): runs once, on the node that initialised
# the cluster, with a superuser's connection URL as its argument. Creates the monitor's login role
# (password MONITOR_DB_PASSWORD), its database and TimescaleDB in it; the standbys get them by
# replication. The role owns its database and reads the server's settings (the migration checks
# that TimescaleDB is preloaded); it is no superuser.
set -eu
psql -X -q -v ON_ERROR_STOP=1 -v password="${MONITOR_DB_PASSWORD:?set MONITOR_DB_PASSWORD}" "$1" <<'SQL'
create role monitor login password :'password';
grant pg_read_all_settings to monitor;
create database monitor owner monitor;
\connect monitor
create extension if not exists timescaledb;
SQL
