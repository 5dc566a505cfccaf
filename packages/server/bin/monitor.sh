#!/bin/sh
# Runs `monitor <role> …` from the build with its role's Node flags: what the image runs (its
# entrypoint) and what the benchmarks measure.
#
# The young generation's semi-spaces, in MiB: every ingest path allocates short-lived objects per
# sample, and with Node's 16 scavenges were a third of the gateway's CPU. The gateway alone gets
# 64: its CPU per remote-write sample fell by 12 % against 32, at the same peak RSS. Role `all`
# keeps 32: 64 took its peak RSS under the batched load from 298 to 338 MiB (docs/benchmarks/compare.md,
# "2026-11-24 19:00"). `all` sizes its consumers thread's young generation itself.
#
# MONITOR_NODE: the node binary (default: node on PATH). MONITOR_NODE_FLAGS: more Node flags,
# e.g. `--cpu-prof` (NODE_OPTIONS does not take it); the benchmarks pass theirs this way.
set -eu
case "${1:-}" in
  gateway) semi_space_mb=64 ;;
  *) semi_space_mb=32 ;;
esac
exec "${MONITOR_NODE:-node}" --enable-source-maps --max-semi-space-size="$semi_space_mb" \
  ${MONITOR_NODE_FLAGS:-} "$(dirname "$0")/../dist/main.js" "$@"
