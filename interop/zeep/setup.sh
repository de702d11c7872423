#!/usr/bin/env bash
# Creates (or refreshes) the Python venv of the zeep interop peer and prints its python on stdout.
#
#   interop/zeep/setup.sh             # install if stale, print the venv's python path
#   PY=$(interop/zeep/setup.sh)       # typical use from a test; then "$PY" interop/zeep/sign.py ...
#
# Venv: $REPO_ROOT/.cache/venv-zeep (git-ignored). Packages come from PyPI as wheels only
# (requirements.txt). A stamp file in the venv holds a hash of requirements.txt and this script;
# while it matches and the venv's interpreter still resolves, nothing is done (a few ms, no lock,
# no Python started). Otherwise the venv is rebuilt from scratch under flock on
# $REPO_ROOT/.cache/venv-zeep.lock, so parallel test processes can call this safely.
# Environment: REPO_ROOT (default: two levels above this script), PYTHON (base interpreter, default
# python3), ZEEP_PEER_FORCE=1 to rebuild unconditionally. pip's log goes to stderr only on failure.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="${REPO_ROOT:-$(cd "$HERE/../.." && pwd)}"
PYTHON="${PYTHON:-python3}"
CACHE="$REPO_ROOT/.cache"
VENV="$CACHE/venv-zeep"
VPY="$VENV/bin/python"
STAMP="$VENV/.wssgw-stamp"

WANT="$(cat "$HERE/requirements.txt" "$HERE/setup.sh" | sha256sum | cut -d' ' -f1)"
stale() {
  [[ "${ZEEP_PEER_FORCE:-}" == 1 ]] && return 0
  # -x follows the venv's symlink: a removed or moved base interpreter makes the venv stale.
  [[ -x "$VPY" && -f "$STAMP" ]] || return 0
  [[ "$(<"$STAMP")" != "$WANT" ]]
}

if stale; then
  mkdir -p "$CACHE"
  # Serialise concurrent installs; re-check after taking the lock (another process may have done it).
  exec 9>"$CACHE/venv-zeep.lock"
  flock 9
  if stale; then
    log="$CACHE/venv-zeep.log"
    command -v "$PYTHON" >/dev/null || { echo "setup.sh: $PYTHON not found (Python 3.9+ needed)" >&2; exit 1; }
    rm -rf "$VENV"
    if ! {
      "$PYTHON" -m venv "$VENV" &&
        "$VPY" -m pip install -q --disable-pip-version-check --no-input --only-binary=:all: \
          -r "$HERE/requirements.txt" &&
        "$VPY" -c 'import zeep.wsse.signature, xmlsec, lxml.etree; xmlsec.Transform.RSA_SHA256'
    } >"$log" 2>&1; then
      cat "$log" >&2
      echo "setup.sh: creating the zeep venv at $VENV failed (log: $log)" >&2
      rm -rf "$VENV"
      exit 1
    fi
    printf '%s\n' "$WANT" >"$STAMP"
  fi
  exec 9>&-
fi
echo "$VPY"
