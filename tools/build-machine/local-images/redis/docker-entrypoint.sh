#!/bin/sh
# As the redis image: arguments alone are redis-server's, and the server listens on every
# interface without protected mode (the container's network is the boundary).
set -e
if [ "${1#-}" != "$1" ] || [ $# = 0 ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  shift
  set -- redis-server --bind '* -::*' --protected-mode no "$@"
fi
exec "$@"
