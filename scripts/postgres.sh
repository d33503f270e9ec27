#!/usr/bin/env bash
# A throwaway PostgreSQL on loopback, for the tests of the session store.
#
#   scripts/postgres.sh start DIR   installs Debian's postgresql if it is
#                                   missing, makes a cluster in DIR, starts it
#                                   on a free port of 127.0.0.1 and prints its
#                                   URL (the last line of its output)
#   scripts/postgres.sh stop DIR    stops it (DIR can then be deleted)
#
# PostgreSQL refuses to run as root: as root, the cluster belongs to the
# `postgres` user the package creates.
set -euo pipefail
command=${1:?start or stop}
dir=${2:?a directory for the cluster}
as_owner=()
[ "$(id -u)" -ne 0 ] || as_owner=(runuser -u postgres --)
bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$found" ] || { echo "no PostgreSQL binaries under /usr/lib/postgresql" >&2; exit 1; }
    echo "$found"
}
case "$command" in
start)
    if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo apt-get update -qq >&2
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    fi
    pg=$(bin)
    mkdir -p "$dir"
    [ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${as_owner[@]}" "$pg/initdb" -D "$dir/data" -U tools -A trust --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    # Loopback only, the socket in the cluster's own directory, no fsync:
    # the data is thrown away with the directory.
    "${as_owner[@]}" "$pg/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >&2 \
        || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://tools@127.0.0.1:$port/postgres"
    ;;
stop)
    "${as_owner[@]}" "$(bin)/pg_ctl" -D "$dir/data" -m fast -w stop >&2
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
