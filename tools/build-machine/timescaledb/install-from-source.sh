#!/usr/bin/env bash
# Builds TimescaleDB from an upstream release tarball (a `git archive` of a release tag, as
# github.com/timescale/timescaledb publishes them) against this machine's PostgreSQL, and
# installs it into that PostgreSQL's library and extension directories.
#
#   tools/build-machine/timescaledb/install-from-source.sh timescaledb-2.28.3.tar.gz   # as root
#
# Production users install Timescale's own packages (timescaledb-2-postgresql-15) or run its
# image (timescale/timescaledb:2.28.3-pg15) instead; this script is for machines that reach
# neither, such as this project's CI. It downloads nothing but Debian's build dependencies.
#
# The patches in patches/ beside this script are applied first (each says why). The build is
# cached outside the work tree, keyed by the tarball, the patches and the PostgreSQL version, so
# a second run only copies the files (about a second).
#
# Environment: PG_CONFIG (default: pg_config of PostgreSQL 15), MONITOR_TIMESCALE_CACHE
# (default ~/.cache/monitor/timescaledb).
# Afterwards the server must preload the library: shared_preload_libraries = 'timescaledb'
# (the embedded `npm start` and the testkit do it themselves).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tarball=${1:?usage: install-from-source.sh TIMESCALEDB-TARBALL}
[ -s "$tarball" ] || { echo "no such tarball: $tarball" >&2; exit 2; }
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
cache=${MONITOR_TIMESCALE_CACHE:-$HOME/.cache/monitor/timescaledb}
say() { printf '[timescaledb %ss] %s\n' "$SECONDS" "$*"; }

as_root_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "missing build dependencies ($*): install them as root" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
# pg_config ships with the server headers: without them nothing can be built.
if [ ! -x "$pg_config" ] || [ ! -d "$("$pg_config" --includedir-server 2>/dev/null)" ]; then
  say 'installing postgresql-server-dev-15'
  as_root_install postgresql-server-dev-15
fi
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
[ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  as_root_install "${missing[@]}"
fi

pg_version=$("$pg_config" --version)
key=$( { sha256sum "$tarball" | cut -d' ' -f1; cat "$here"/patches/*.patch; echo "$pg_version"; } \
  | sha256sum | cut -c1-16)
staged=$cache/$key
if [ -d "$staged/root" ]; then
  say "cached build $staged ($pg_version)"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tar -xzf "$tarball" -C "$work"
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
  [ -x "$src/bootstrap" ] || { echo "$tarball is not a TimescaleDB source tarball" >&2; exit 2; }
  for patch in "$here"/patches/*.patch; do
    say "patch $(basename "$patch")"
    patch -d "$src" -p1 --quiet <"$patch"
  done
  say "configure against $pg_version"
  (cd "$src" && ./bootstrap -DCMAKE_BUILD_TYPE=Release -DPG_CONFIG="$pg_config" \
    -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF -DWARNINGS_AS_ERRORS=OFF -DLINTER=OFF \
    >"$work/configure.log" 2>&1) || { tail -30 "$work/configure.log" >&2; exit 1; }
  say 'build (about 90 s on 2 cores)'
  make -C "$src/build" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
  make -C "$src/build" install DESTDIR="$work/root" >"$work/install.log" 2>&1 \
    || { tail -20 "$work/install.log" >&2; exit 1; }
  mkdir -p "$cache"
  mv "$work/root" "$work/staged-root"
  mkdir -p "$staged.partial" && mv "$work/staged-root" "$staged.partial/root"
  rm -rf "$staged" && mv "$staged.partial" "$staged"
fi

# The staged tree mirrors the absolute install paths (DESTDIR): copy it over /.
if [ ! -w "$("$pg_config" --pkglibdir)" ]; then
  echo "cannot write $("$pg_config" --pkglibdir): run as root" >&2
  exit 1
fi
# File by file, and only what differs: a running PostgreSQL maps timescaledb*.so, and copying
# over a mapped library in place crashes every backend that has it loaded (segfaults seen when
# this ran beside a live server). A new file renamed over the old one leaves their inode alone.
(cd "$staged/root" && find . -type d) | while read -r dir; do mkdir -p "/${dir#./}"; done
(cd "$staged/root" && find . ! -type d) | while read -r file; do
  target="/${file#./}"
  if ! cmp -s "$staged/root/$file" "$target"; then
    cp -a "$staged/root/$file" "$target.installing.$$" && mv -f "$target.installing.$$" "$target"
  fi
done
version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$("$pg_config" --sharedir)/extension/timescaledb.control")
say "installed TimescaleDB $version into $("$pg_config" --pkglibdir) for $pg_version"
