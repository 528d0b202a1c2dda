#!/usr/bin/env bash
# Start a throwaway PostgreSQL server on localhost for the store tests.
#
#   eval "$(.ci/postgres.sh)"        # start; prints `export GEMMLENS_TEST_PG_URL=...` and GEMMLENS_TEST_PG_DIR
#   .ci/postgres.sh stop             # stop the server named by GEMMLENS_TEST_PG_DIR and remove its directory
#
# Only the export lines go to stdout (they are eval'ed); everything else goes to stderr.
# The cluster lives in a temp dir and listens on 127.0.0.1 only, with trust auth: it is for tests, never data.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

# CI runs as root, and PostgreSQL refuses to run as root: run its tools as the postgres user there.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
    fi
}

if [ "${1:-start}" = stop ]; then
    dir=${GEMMLENS_TEST_PG_DIR:?GEMMLENS_TEST_PG_DIR is not set: nothing to stop}
    bin=$(pg_bindir)
    if [ -n "$bin" ] && [ -d "$dir/data" ]; then
        as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    fi
    rm -rf "$dir"
    exit 0
fi

bin=$(pg_bindir)
if [ -z "$bin" ]; then
    log "PostgreSQL not found; installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    bin=$(pg_bindir)
    [ -n "$bin" ] || { log "postgresql installed but no initdb under /usr/lib/postgresql/*/bin"; exit 1; }
fi
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    log "running as root but there is no postgres user to run the server as"; exit 1
fi

dir=$(mktemp -d /tmp/gemmlens-pg.XXXXXX)
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown postgres: "$dir"

# A free port: bind port 0 and let the kernel choose (a tiny race with other starters is acceptable in CI).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

as_pg "$bin/initdb" -D "$dir/data" -U gemmlens --auth=trust --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
# fsync off: a test cluster that dies is simply recreated, and tests run faster.
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100" start >&2 \
    || { cat "$dir/server.log" >&2; exit 1; }
as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U gemmlens gemmlens_test >&2

log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $dir)"
echo "export GEMMLENS_TEST_PG_URL=postgresql+psycopg://gemmlens@127.0.0.1:$port/gemmlens_test"
echo "export GEMMLENS_TEST_PG_DIR=$dir"
