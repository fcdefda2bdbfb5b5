#!/usr/bin/env bash
# Build and install pgvector for the local PostgreSQL from Debian's trixie *source* package.
#
# Debian bookworm ships no pgvector package, so we add a deb-src-only entry for trixie (never a
# binary "deb" one, so no trixie package can be installed by accident), fetch the source with
# `apt-get source pgvector` and build it against postgresql-server-dev-<major>. Idempotent: exits
# at once when the extension is already installed. Needs root (apt, make install).
#
# Usage: sudo bash scripts/install-pgvector.sh [PG_MAJOR]     (default: 15)
set -euo pipefail

PG_MAJOR="${1:-${PG_MAJOR:-15}}"
CONTROL="/usr/share/postgresql/${PG_MAJOR}/extension/vector.control"
SRC_LIST="/etc/apt/sources.list.d/zhiwen-trixie-src.sources"
LOG="$(mktemp -t install-pgvector.XXXXXX.log)"
WORK=""

die() {
    echo "install-pgvector: FAILED: $*" >&2
    echo "install-pgvector: last lines of ${LOG}:" >&2
    tail -n 25 "${LOG}" >&2 || true
    exit 1
}

cleanup() {
    # the trixie source entry is only needed for `apt-get source`; do not leave it behind
    rm -f "${SRC_LIST}"
    if [[ -n "${WORK}" ]]; then rm -rf "${WORK}"; fi
}

if [[ -f "${CONTROL}" ]]; then
    echo "install-pgvector: pgvector already installed for PostgreSQL ${PG_MAJOR} (${CONTROL})"
    exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
    echo "install-pgvector: FAILED: must run as root (apt-get install, make install)" >&2
    exit 1
fi
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive

echo "install-pgvector: building pgvector for PostgreSQL ${PG_MAJOR} from Debian trixie sources (log: ${LOG})"
cat >"${SRC_LIST}" <<'EOF'
# added by zhiwen scripts/install-pgvector.sh: source packages only (removed after the build)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF

apt-get update -qq >>"${LOG}" 2>&1 || die "apt-get update (is a Debian mirror reachable?)"
apt-get install -y -qq --no-install-recommends \
    "postgresql-server-dev-${PG_MAJOR}" build-essential dpkg-dev >>"${LOG}" 2>&1 \
    || die "apt-get install postgresql-server-dev-${PG_MAJOR} build-essential dpkg-dev"

WORK="$(mktemp -d -t pgvector-src.XXXXXX)"
chmod 755 "${WORK}"
(cd "${WORK}" && apt-get source -qq pgvector) >>"${LOG}" 2>&1 || die "apt-get source pgvector"
SRC_DIR="$(find "${WORK}" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
[[ -n "${SRC_DIR}" ]] || die "no pgvector-* directory after apt-get source"

PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
[[ -x "${PG_CONFIG}" ]] || PG_CONFIG="$(command -v pg_config || true)"
[[ -n "${PG_CONFIG}" ]] || die "pg_config not found"
make -C "${SRC_DIR}" -j"$(nproc)" PG_CONFIG="${PG_CONFIG}" >>"${LOG}" 2>&1 || die "make"
make -C "${SRC_DIR}" install PG_CONFIG="${PG_CONFIG}" >>"${LOG}" 2>&1 || die "make install"

[[ -f "${CONTROL}" ]] || die "built, but ${CONTROL} is missing (PostgreSQL major mismatch?)"
echo "install-pgvector: installed pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "${CONTROL}") for PostgreSQL ${PG_MAJOR}"
rm -f "${LOG}"
