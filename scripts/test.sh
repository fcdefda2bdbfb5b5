#!/usr/bin/env bash
# The project's one test command (README "Running the tests", and exactly what .ci/run calls).
#
#   bash scripts/test.sh [--with EXTRA[,EXTRA]]... [--system] [--dry-run] [--] [PYTEST ARGS...]
#
# Makes ./.venv if there is none, installs zhiwen with its test extras into it (dev, qdrant, ocr:
# nothing outside ./.venv, no torch), then runs ruff, mypy and pytest. Tests that need something
# absent are skipped with the reason, which names the flag below that brings it.
#
#   --with rerank   also the [rerank] extra (sentence-transformers + torch) for the real
#                   cross-encoder tests; torch comes from a local CPU wheel (/opt/wheels) when
#                   there is one, else from the package index (large). Env: ZHIWEN_TEST_EXTRAS.
#   --system        install system pieces too (as root, Debian): chromium + CJK fonts via apt
#                   (PDF fixtures, web UI tests) and PostgreSQL's pgvector, built from source
#                   (scripts/ensure-postgres.sh). Env: ZHIWEN_TEST_SYSTEM=1.
#   --dry-run       print what would be installed, run and skipped; change nothing.
#
# CI=true (what .ci/run sets) means --system plus rerank where a local torch CPU wheel exists,
# so CI runs everything. The first argument that is none of these, and all after it (or all
# after `--`), go to pytest, e.g. `bash scripts/test.sh -k store -x`.
#
# pytest runs one worker per core (pytest-xdist; `auto` stops at 4, ZHIWEN_TEST_WORKERS=N sets N,
# 0 runs everything in one process): the suite is ~3,000 tests and 2 cores halve its time.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "scripts/test.sh: $*" >&2; exit 2; }

KNOWN_EXTRAS="rerank ocr qdrant dev"
extras="${ZHIWEN_TEST_EXTRAS:-}"
system="${ZHIWEN_TEST_SYSTEM:-0}"
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --with) [ $# -ge 2 ] || die "--with needs an extra, e.g. --with rerank"; extras="$extras,$2"; shift 2 ;;
    --with=*) extras="$extras,${1#--with=}"; shift ;;
    --system) system=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done

ci=0
case "${CI:-}" in true|1|yes) ci=1 ;; esac
[ "$ci" = 1 ] && system=1

want_rerank=0  # 1: asked for; auto: CI, only with a local CPU wheel
for extra in ${extras//,/ }; do
  case " $KNOWN_EXTRAS " in *" $extra "*) ;; *) die "unknown extra '$extra' (known: ${KNOWN_EXTRAS// /, })" ;; esac
  [ "$extra" = rerank ] && want_rerank=1
done
[ "$ci" = 1 ] && [ "$want_rerank" = 0 ] && want_rerank=auto

torch_wheel=$(ls /opt/wheels/torch-*+cpu-cp311-*.whl 2>/dev/null | head -n 1 || true)
is_root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && is_root=1

# -- the plan, said before anything happens --------------------------------------------------
plan_pip=".[dev,qdrant,ocr]"
plan_torch=""
skips=()
if [ "$want_rerank" = 1 ] || { [ "$want_rerank" = auto ] && [ -n "$torch_wheel" ]; }; then
  plan_pip=".[dev,qdrant,ocr,rerank]"
  plan_torch=${torch_wheel:-"torch from the package index (no local CPU wheel in /opt/wheels)"}
elif ! { [ -x .venv/bin/python ] && .venv/bin/python -c 'import importlib.util as u, sys
sys.exit(not (u.find_spec("sentence_transformers") and u.find_spec("torch")))' 2>/dev/null; }; then
  skips+=("real cross-encoder tests (no torch)   enable: --with rerank")
fi
plan_system=()
if [ "$system" = 1 ] && [ "$is_root" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || plan_system+=("apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji")
  [ -f scripts/ensure-postgres.sh ] && plan_system+=("scripts/ensure-postgres.sh (start PostgreSQL, build pgvector)")
elif [ "$system" = 1 ]; then
  echo "warning: --system needs root and apt-get; installing no system packages" >&2
fi
if [ "$system" != 1 ] || [ "$is_root" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || [ -n "${ZHIWEN_CHROMIUM:-}" ] \
    || skips+=("PDF fixture and web UI (browser) tests (no chromium)   enable: --system")
  skips+=("PostgreSQL store tests unless a PostgreSQL with pgvector runs   enable: --system")
fi

echo "== plan"
echo "  install into ./.venv: pip install -e '$plan_pip'${plan_torch:+ (torch: $plan_torch)}"
if [ ${#plan_system[@]} -gt 0 ]; then
  for step in "${plan_system[@]}"; do echo "  install into the system: $step"; done
else
  echo "  install into the system: nothing"
fi
# a test file's tests run on one worker, and so does each directory that shares a costly session
# fixture (tests/conftest.py: pytest_xdist_make_scheduler)
workers="${ZHIWEN_TEST_WORKERS:-auto}"
pytest_cmd=(python -m pytest -q -p no:cacheprovider)
[ "$workers" = 0 ] || pytest_cmd+=(-n "$workers" --maxprocesses 4 --dist loadfile)
echo "  run: ruff check src tests bench; mypy; ${pytest_cmd[*]} $*"
for s in "${skips[@]}"; do echo "  skip: $s"; done
[ -d ../shared/data ] || [ -n "${ZHIWEN_SHARED_DATA:-}" ] \
  || echo "  skip: tests on ../shared/data (not here)   enable: set ZHIWEN_SHARED_DATA"
[ "$dry_run" = 1 ] && exit 0

# -- install ---------------------------------------------------------------------------------
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# bytecode is cached (in ./.venv and the __pycache__ folders git ignores): with
# PYTHONDONTWRITEBYTECODE set, every pytest worker and every server a test starts compiles all it
# imports again, and pytest rewrites the asserts of all 800 test modules again (collection: 26 s of
# CPU instead of 12)
unset PYTHONDONTWRITEBYTECODE
# no bytecode for all ~19,000 installed modules at install (~70 s of CPU, most of it torch and
# transformers, which the tests barely import): Python compiles what is imported, once, on import
pip_install=(python -m pip install -q --no-compile)
if [ "$plan_pip" != ".[dev,qdrant,ocr]" ] && ! python -c 'import sentence_transformers, torch' 2>/dev/null; then
  # a plain `pip install torch` would pull GBs of CUDA: the local CPU wheel first, where there is one
  [ -n "$torch_wheel" ] && "${pip_install[@]}" "$torch_wheel"
fi
# OCR is the [ocr] extra (RapidOCR, its models ship inside the wheel); without it OCR tests skip
"${pip_install[@]}" -e "$plan_pip" \
  || { echo "warning: '$plan_pip' did not install; retrying without ocr (OCR tests will be skipped)" >&2
       "${pip_install[@]}" -e "${plan_pip/,ocr/}"; }

if [ ${#plan_system[@]} -gt 0 ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk fonts-noto-color-emoji >/dev/null; } \
      || echo "warning: chromium/fonts-noto-cjk install failed; PDF fixture and browser (web UI) tests will be skipped" >&2
  fi
  if [ -f scripts/ensure-postgres.sh ]; then
    bash scripts/ensure-postgres.sh || echo "warning: PostgreSQL/pgvector setup failed; PG tests will be skipped" >&2
  fi
fi

echo "== ruff"; ruff check src tests bench
echo "== mypy"; mypy
echo "== pytest"; exec "${pytest_cmd[@]}" "$@"
