#!/usr/bin/env bash
# Installs the linters tools/lint.sh runs into .cache/tools/bin (gitignored):
# staticcheck, govulncheck and deadcode, each at a pinned version from Go
# modules and stamped with it, so a second run does nothing (and needs no
# network). Bump a version here and the next run reinstalls that tool.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2 # honnef.co/go/tools (staticcheck 2026.2.2), built for go 1.26
GOVULNCHECK_VERSION=v1.9.0 # golang.org/x/vuln
DEADCODE_VERSION=v0.52.0   # golang.org/x/tools
# The Go vulnerability database, as the OSV files of the golang.org/x/vulndb
# module indexed by its own cmd/indexdb: govulncheck's network database is
# not reachable everywhere (CI here reaches package registries only), the
# module is. Bump this to the module's latest version to refresh the data.
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018

T=$PWD/.cache/tools
mkdir -p "$T/bin" "$T/stamps"

fresh() { [ "$(cat "$T/stamps/$1" 2>/dev/null)" = "$2" ] && [ -x "$T/bin/$1" ]; }

# With --check nothing is installed: the status says whether every tool is
# there at its pinned version (tools/lint.sh asks, so the versions live here
# only).
check=false
[ "${1:-}" != "--check" ] || check=true
stale=""

# install NAME PACKAGE VERSION
install() {
  if fresh "$1" "$3"; then return; fi
  if $check; then
    stale="$stale $1@$3"
    return
  fi
  local s=$SECONDS
  echo "== $1 $3"
  GOBIN=$T/bin go install -trimpath "$2@$3"
  echo "$3" >"$T/stamps/$1"
  echo "  $1 ($((SECONDS - s)) s)"
}

install staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION"
install govulncheck golang.org/x/vuln/cmd/govulncheck "$GOVULNCHECK_VERSION"
install deadcode golang.org/x/tools/cmd/deadcode "$DEADCODE_VERSION"

# vulndb: .cache/tools/vulndb, a file:// database for govulncheck -db.
if ! { [ "$(cat "$T/stamps/vulndb" 2>/dev/null)" = "$VULNDB_VERSION" ] && [ -f "$T/vulndb/index/db.json" ]; }; then
  if $check; then
    stale="$stale vulndb@$VULNDB_VERSION"
  else
    s=$SECONDS
    echo "== vulndb $VULNDB_VERSION"
    src=$(GOFLAGS=-mod=mod go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    rm -rf "$T/vulndb"
    GOFLAGS=-mod=mod go run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$T/vulndb"
    echo "$VULNDB_VERSION" >"$T/stamps/vulndb"
    echo "  vulndb ($((SECONDS - s)) s)"
  fi
fi

if $check; then
  [ -z "$stale" ] || { echo "lint tools missing or not at the pinned version:$stale"; exit 1; }
  exit 0
fi
echo "lint tools in .cache/tools: staticcheck $STATICCHECK_VERSION, govulncheck $GOVULNCHECK_VERSION, deadcode $DEADCODE_VERSION, vulndb $VULNDB_VERSION"
