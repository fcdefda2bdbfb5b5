#!/usr/bin/env bash
# Build and install pgvector for the local PostgreSQL from Debian's trixie *source* package.
#
# Debian bookworm ships no pgvector package, so we add a deb-src-only entry for trixie (never a
# binary "deb" one, so no trixie package can be installed by accident), fetch the source with
# `apt-get source pgvector` and build it against postgresql-server-dev-<major>. Idempotent: exits
# at once when the extension is already installed. Needs root (apt, make install).
#
# The trixie entry is derived from this machine's own apt configuration; no host is written
# here. The entry of the running release's main suite (VERSION_CODENAME of /etc/os-release,
# e.g. "bookworm"; not -updates or -security) is taken from the files apt reads
# (Dir::Etc::sourcelist and Dir::Etc::sourceparts: one-line *.list and deb822 *.sources), its
# URIs and options (Signed-By, Trusted, ...) are kept, and only the type (deb-src), the suite
# (trixie) and the components (main) change. A machine behind a local mirror keeps using it.
#
# Usage: sudo bash scripts/install-pgvector.sh [PG_MAJOR]       (default: 15)
#        bash scripts/install-pgvector.sh --print-source        (print the derived entry, change nothing)
# Env:   ZHIWEN_APT_BASE_SUITE overrides the release codename; apt-config honours APT_CONFIG.
set -euo pipefail

PRINT_ONLY=0
if [[ "${1:-}" == "--print-source" ]]; then
    PRINT_ONLY=1
    shift
fi
PG_MAJOR="${1:-${PG_MAJOR:-15}}"
CONTROL="/usr/share/postgresql/${PG_MAJOR}/extension/vector.control"
SOURCE_SUITE="trixie"
SOURCELIST="/etc/apt/sources.list"
SOURCEPARTS="/etc/apt/sources.list.d/"
if command -v apt-config >/dev/null 2>&1; then
    eval "$(apt-config shell SOURCELIST Dir::Etc::sourcelist/f SOURCEPARTS Dir::Etc::sourceparts/d)"
fi
SOURCEPARTS="${SOURCEPARTS%/}"
OUR_NAME="zhiwen-${SOURCE_SUITE}-src"
SRC_LIST=""       # set by derive_source: ${SOURCEPARTS}/${OUR_NAME}.sources or .list
DERIVED_ENTRY=""  # set by derive_source
LOG=""
WORK=""

base_suite() {
    if [[ -n "${ZHIWEN_APT_BASE_SUITE:-}" ]]; then
        echo "${ZHIWEN_APT_BASE_SUITE}"
    elif [[ -r /etc/os-release ]]; then
        (. /etc/os-release && echo "${VERSION_CODENAME:-}")
    fi
}

# The first enabled deb822 stanza with "deb" among its Types and suite $1 among its Suites,
# rewritten to Types: deb-src / Suites: $2 / Components: main; every other field verbatim
# (URIs, Signed-By including an inline key's continuation lines, Trusted, ...).
deb822_entry() {
    local files=() f
    for f in "${SOURCEPARTS}"/*.sources; do
        [[ -f "${f}" && "$(basename "${f}")" != "${OUR_NAME}.sources" ]] && files+=("${f}")
    done
    [[ ${#files[@]} -gt 0 ]] || return 0
    awk -v base="$1" -v target="$2" '
        function reset() { n = 0; types = ""; suites = ""; enabled = "yes"; has_uris = 0; cont = 0 }
        function flush(   i) {
            if (!done && n && has_uris && enabled != "no" \
                && (" " types " ") ~ /[ \t]deb[ \t]/ && (" " suites " ") ~ ("[ \t]" base "[ \t]")) {
                print "Types: deb-src"
                for (i = 1; i <= n; i++) print keep[i]
                print "Suites: " target
                print "Components: main"
                done = 1
            }
            reset()
        }
        BEGIN { reset() }
        FNR == 1 && NR > 1 { flush() }
        /^#/ { next }
        /^[ \t]*$/ { flush(); next }
        /^[ \t]/ { if (cont) keep[n] = keep[n] "\n" $0; next }
        {
            key = tolower(substr($0, 1, index($0, ":") - 1))
            value = substr($0, index($0, ":") + 1)
            gsub(/^[ \t]+|[ \t]+$/, "", value)
            cont = 0
            if (key == "types") types = value
            else if (key == "suites") suites = value
            else if (key == "enabled") enabled = tolower(value)
            else if (key != "components") { keep[++n] = $0; cont = 1; if (key == "uris") has_uris = 1 }
        }
        END { flush() }
    ' "${files[@]}"
}

# The first one-line "deb [options] URI $1 COMPONENTS..." entry, as "deb-src [options] URI $2 main".
oneline_entry() {
    local files=() f
    if [[ -f "${SOURCELIST}" ]]; then files+=("${SOURCELIST}"); fi
    for f in "${SOURCEPARTS}"/*.list; do
        [[ -f "${f}" && "$(basename "${f}")" != "${OUR_NAME}.list" ]] && files+=("${f}")
    done
    [[ ${#files[@]} -gt 0 ]] || return 0
    awk -v base="$1" -v target="$2" '
        $1 != "deb" { next }
        {
            i = 2; opts = ""
            if ($i ~ /^\[/) {
                while (i <= NF) { opts = opts $i " "; if ($(i++) ~ /\]$/) break }
            }
            if ($(i + 1) == base) { print "deb-src " opts $i " " target " main"; exit }
        }
    ' "${files[@]}"
}

# Sets DERIVED_ENTRY and SRC_LIST; fails when apt has no entry to derive them from.
derive_source() {
    local base entry
    base="$(base_suite)"
    if [[ -z "${base}" ]]; then
        echo "install-pgvector: FAILED: unknown release codename (set ZHIWEN_APT_BASE_SUITE)" >&2
        return 1
    fi
    entry="$(deb822_entry "${base}" "${SOURCE_SUITE}")"
    SRC_LIST="${SOURCEPARTS}/${OUR_NAME}.sources"
    if [[ -z "${entry}" ]]; then
        entry="$(oneline_entry "${base}" "${SOURCE_SUITE}")"
        SRC_LIST="${SOURCEPARTS}/${OUR_NAME}.list"
    fi
    if [[ -z "${entry}" ]]; then
        echo "install-pgvector: FAILED: no enabled 'deb' entry for suite ${base} in ${SOURCELIST}" \
            "or ${SOURCEPARTS}/ to derive the ${SOURCE_SUITE} source entry from" >&2
        SRC_LIST=""
        return 1
    fi
    DERIVED_ENTRY="# added by zhiwen scripts/install-pgvector.sh: source packages only (removed after the build)
${entry}"
}

if [[ "${PRINT_ONLY}" == 1 ]]; then
    derive_source
    echo "# would write ${SRC_LIST}:"
    echo "${DERIVED_ENTRY}"
    exit 0
fi

die() {
    echo "install-pgvector: FAILED: $*" >&2
    echo "install-pgvector: last lines of ${LOG}:" >&2
    tail -n 25 "${LOG}" >&2 || true
    exit 1
}

cleanup() {
    # the trixie source entry is only needed for `apt-get source`; do not leave it behind
    if [[ -n "${SRC_LIST}" ]]; then rm -f "${SRC_LIST}"; fi
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
derive_source
LOG="$(mktemp -t install-pgvector.XXXXXX.log)"
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive

echo "install-pgvector: building pgvector for PostgreSQL ${PG_MAJOR} from Debian ${SOURCE_SUITE} sources (log: ${LOG})"
echo "install-pgvector: adding ${SRC_LIST}, derived from this machine's apt sources"
printf '%s\n' "${DERIVED_ENTRY}" >"${SRC_LIST}"

apt-get update -qq >>"${LOG}" 2>&1 || die "apt-get update (are the configured apt mirrors reachable?)"
apt-get install -y -qq --no-install-recommends \
    "postgresql-server-dev-${PG_MAJOR}" build-essential dpkg-dev >>"${LOG}" 2>&1 \
    || die "apt-get install postgresql-server-dev-${PG_MAJOR} build-essential dpkg-dev"

WORK="$(mktemp -d -t pgvector-src.XXXXXX)"
chmod 755 "${WORK}"
(cd "${WORK}" && apt-get source -qq pgvector) >>"${LOG}" 2>&1 \
    || die "apt-get source pgvector (does the mirror in ${SRC_LIST} carry ${SOURCE_SUITE} sources?)"
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
