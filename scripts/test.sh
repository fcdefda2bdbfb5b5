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
python -m pip install -q -e '.[dev,qdrant]'

# The rerank tests run a real (tiny, built on disk) cross-encoder through sentence-transformers.
# It needs torch; only a CPU wheel is acceptable (a plain `pip install torch` pulls GBs of CUDA),
# so it is installed only where a local CPU wheel exists (this project's CI machines).
torch_wheel=$(ls /opt/wheels/torch-*+cpu-cp311-*.whl 2>/dev/null | head -n 1 || true)
if ! python -c 'import sentence_transformers' 2>/dev/null; then
  if [ -n "$torch_wheel" ]; then
    python -m pip install -q "$torch_wheel" && python -m pip install -q -e '.[dev,qdrant,rerank]'
  else
    echo "note: sentence-transformers not installed; real cross-encoder tests will be skipped (install a CPU torch wheel, then pip install -e '.[rerank]')" >&2
  fi
fi

# Document fixtures (tests/ingest/doc_fixtures.py) print statutes to PDF with headless Chromium and
# real CJK fonts; OCR is the [ocr] extra (RapidOCR, its models ship inside the wheel). Without them
# the PDF/OCR tests are skipped with the reason.
python -m pip install -q -e '.[dev,qdrant,ocr]' || echo "warning: the [ocr] extra did not install; OCR tests will be skipped" >&2
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! command -v chromium >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk fonts-noto-color-emoji >/dev/null; } \
    || echo "warning: chromium/fonts-noto-cjk install failed; PDF fixture and browser (web UI) tests will be skipped" >&2
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -f scripts/ensure-postgres.sh ]; then
  bash scripts/ensure-postgres.sh || echo "warning: PostgreSQL/pgvector setup failed; PG tests will be skipped" >&2
fi

echo "== ruff"; ruff check src tests bench
echo "== mypy"; mypy
echo "== pytest"; exec python -m pytest -q -p no:cacheprovider "$@"
