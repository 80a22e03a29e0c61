#!/usr/bin/env bash
# Run tests/test_sccs_cdm.py (hp.sccs from_cdm) against a throwaway local PostgreSQL as well as
# DuckDB/SQLite: installs the Debian postgresql package if no initdb is found (needs root and apt),
# starts a cluster in a temporary folder listening on a Unix socket only (no TCP port, so several
# runs can share a machine), creates a database, points HPHAWKES_CDM_URL at it and runs the tests
# (each PostgreSQL test builds its CDM in a schema of its own). The cluster and its folder are
# removed on exit. Extra arguments go to pytest, e.g.  scripts/test_cdm_postgres.sh -k env -x
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "PostgreSQL (initdb) is not installed and this is not root: apt-get install postgresql first" >&2
        exit 2
    fi
    echo "installing postgresql (apt-get)..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PGBIN=${PGBIN:-$(dirname "$(command -v initdb)")}

"$PY" -c "import sqlalchemy, psycopg" 2>/dev/null || "$PY" -m pip install -q sqlalchemy "psycopg[binary]"
"$PY" -c "import duckdb" 2>/dev/null || "$PY" -m pip install -q duckdb

DIR=$(mktemp -d /tmp/hp_cdm_pg.XXXXXX)
PORT=${HP_CDM_PG_PORT:-55432}   # names the socket file only: listen_addresses is empty
if [ "$(id -u)" -eq 0 ]; then
    # initdb and the server refuse to run as root: the postgres user (created by the package) runs them
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$DIR"
    AS_PG=(runuser -u postgres --)
else
    AS_PG=()
fi

stop() {
    "${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap stop EXIT

"${AS_PG[@]}" "$PGBIN/initdb" -D "$DIR/data" -A trust -U postgres --no-sync >/dev/null
"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
    -o "-p $PORT -k $DIR -c listen_addresses='' -c fsync=off" start >/dev/null
"${AS_PG[@]}" "$PGBIN/createdb" -h "$DIR" -p "$PORT" -U postgres hp_cdm

export HPHAWKES_CDM_URL="postgresql+psycopg://postgres@/hp_cdm?host=$DIR&port=$PORT"
echo "$("$PGBIN/postgres" --version) at $DIR (socket, port $PORT)"
cd "$ROOT"
"$PY" -m pytest -q -p no:cacheprovider tests/test_sccs_cdm.py "$@"
