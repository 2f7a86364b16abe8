#!/usr/bin/env bash
# Install (if needed) and start a local PostgreSQL on 127.0.0.1 for the storage tests.
# Creates a user and a database, exports EVAL_TEST_POSTGRES_URL and prints it (last line).
# Usage: `source scripts/ci_postgres.sh` (as .ci/run does), or
#        export EVAL_TEST_POSTGRES_URL="$(scripts/ci_postgres.sh | tail -n 1)"
# Needs root (apt-get, and su to the postgres user).
set -euo pipefail

DB_NAME="${PG_DB_NAME:-eval_test}"
DB_USER="${PG_DB_USER:-eval}"
DB_PASSWORD="${PG_DB_PASSWORD:-eval}"
DB_PORT="${PG_DB_PORT:-5432}"

log() { echo "ci_postgres: $*" >&2; }

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    log "installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y postgresql >&2
fi

version="$(pg_lsclusters --no-header | awk 'NR==1 {print $1}')"
cluster="$(pg_lsclusters --no-header | awk 'NR==1 {print $2}')"
if [ -z "${version}" ]; then
    version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
    cluster="main"
    log "creating cluster ${version}/${cluster}"
    pg_createcluster "${version}" "${cluster}" --port "${DB_PORT}" >&2
fi

status="$(pg_lsclusters --no-header | awk -v c="${cluster}" '$2 == c {print $4}')"
if [ "${status}" != "online" ]; then
    log "starting cluster ${version}/${cluster}"
    pg_ctlcluster "${version}" "${cluster}" start -- -o "-c listen_addresses=127.0.0.1" >&2 \
        || pg_ctlcluster "${version}" "${cluster}" start >&2
fi
port="$(pg_lsclusters --no-header | awk -v c="${cluster}" '$2 == c {print $3}')"

as_postgres() { su postgres -s /bin/sh -c "$1"; }
for _ in $(seq 1 30); do
    if as_postgres "pg_isready -q -h 127.0.0.1 -p ${port}"; then break; fi
    sleep 1
done

as_postgres "psql -q -p ${port} -v ON_ERROR_STOP=1" >&2 <<SQL
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${DB_USER}') THEN
        CREATE ROLE ${DB_USER} LOGIN PASSWORD '${DB_PASSWORD}';
    ELSE
        ALTER ROLE ${DB_USER} LOGIN PASSWORD '${DB_PASSWORD}';
    END IF;
END
\$\$;
SQL
if ! as_postgres "psql -p ${port} -tAc \"SELECT 1 FROM pg_database WHERE datname = '${DB_NAME}'\"" | grep -q 1; then
    as_postgres "createdb -p ${port} -O ${DB_USER} ${DB_NAME}" >&2
fi

export EVAL_TEST_POSTGRES_URL="postgresql+asyncpg://${DB_USER}:${DB_PASSWORD}@127.0.0.1:${port}/${DB_NAME}"
echo "${EVAL_TEST_POSTGRES_URL}"
