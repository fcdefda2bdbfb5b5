#!/usr/bin/env bash
# The project's one test command (README "Quickstart", and exactly what .ci/run calls).
#
# Installs zhiwen with its test extras into ./.venv, makes sure PostgreSQL + pgvector are
# available when this machine allows it (root + Debian: CI), then runs ruff, mypy and pytest.
# Without PostgreSQL the PG conformance cases are skipped with the reason; everything else runs.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k store -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q -e '.[dev]'

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -f scripts/ensure-postgres.sh ]; then
  bash scripts/ensure-postgres.sh || echo "warning: PostgreSQL/pgvector setup failed; PG tests will be skipped" >&2
fi

echo "== ruff"; ruff check src tests bench
echo "== mypy"; mypy
echo "== pytest"; exec python -m pytest -q -p no:cacheprovider "$@"
