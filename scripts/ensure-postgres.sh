#!/usr/bin/env bash
# Make sure the local PostgreSQL (for the PG store backend and its tests) is running with pgvector.
#
# 1. starts cluster <major>/main if it is stopped (pg_ctlcluster, no systemd here);
# 2. installs pgvector from Debian trixie sources when missing (scripts/install-pgvector.sh);
# 3. waits until the server accepts connections and enables the extension in the databases listed
#    in ZHIWEN_PG_DATABASES (default "postgres test"; missing databases are skipped).
#
# A machine without PostgreSQL at all is not an error: the script says so and exits 0, and the
# PostgreSQL tests are then skipped with that reason. A PostgreSQL that is there but cannot be
# started or given pgvector is an error (exit 1), so CI does not silently skip the PG suite.
#
# Usage: bash scripts/ensure-postgres.sh        (as root; env: PG_MAJOR=15, PG_CLUSTER=main)
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PG_CLUSTER="${PG_CLUSTER:-main}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATABASES="${ZHIWEN_PG_DATABASES:-postgres test}"

if ! command -v pg_lsclusters >/dev/null 2>&1 || [[ ! -d "/usr/lib/postgresql/${PG_MAJOR}" ]]; then
    echo "ensure-postgres: PostgreSQL ${PG_MAJOR} is not installed here; PostgreSQL tests will be skipped"
    exit 0
fi

status="$(pg_lsclusters --no-header | awk -v v="${PG_MAJOR}" -v c="${PG_CLUSTER}" '$1==v && $2==c {print $4}')"
if [[ -z "${status}" ]]; then
    echo "ensure-postgres: FAILED: cluster ${PG_MAJOR}/${PG_CLUSTER} does not exist" >&2
    exit 1
fi
if [[ "${status}" != online* ]]; then
    echo "ensure-postgres: starting PostgreSQL ${PG_MAJOR}/${PG_CLUSTER} (was ${status})"
    pg_ctlcluster --skip-systemctl-redirect "${PG_MAJOR}" "${PG_CLUSTER}" start \
        || { echo "ensure-postgres: FAILED: pg_ctlcluster start" >&2; exit 1; }
fi

bash "${HERE}/install-pgvector.sh" "${PG_MAJOR}"

port="$(pg_lsclusters --no-header | awk -v v="${PG_MAJOR}" -v c="${PG_CLUSTER}" '$1==v && $2==c {print $3}')"
for _ in $(seq 1 30); do
    if pg_isready -q -h 127.0.0.1 -p "${port}"; then break; fi
    sleep 1
done
pg_isready -q -h 127.0.0.1 -p "${port}" \
    || { echo "ensure-postgres: FAILED: PostgreSQL not accepting connections on 127.0.0.1:${port}" >&2; exit 1; }

for db in ${DATABASES}; do
    exists="$(psql -h 127.0.0.1 -p "${port}" -U postgres -d postgres -Atqc \
        "SELECT 1 FROM pg_database WHERE datname = '${db}'" 2>/dev/null || true)"
    [[ "${exists}" == 1 ]] || continue
    psql -h 127.0.0.1 -p "${port}" -U postgres -d "${db}" -qc "CREATE EXTENSION IF NOT EXISTS vector" >/dev/null \
        || { echo "ensure-postgres: FAILED: CREATE EXTENSION vector in database ${db}" >&2; exit 1; }
done
version="$(psql -h 127.0.0.1 -p "${port}" -U postgres -d postgres -Atqc \
    "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
echo "ensure-postgres: PostgreSQL ${PG_MAJOR} on 127.0.0.1:${port} ready, pgvector ${version}"
