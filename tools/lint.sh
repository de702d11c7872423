#!/usr/bin/env bash
# make lint: staticcheck (its default checks, unused code included),
# deadcode from the wssgw binary against tools/deadcode-allow.txt, and
# govulncheck, with the tools tools/lint-tools.sh put in .cache/tools.
# Without the tools it skips locally and fails under CI=true, like
# deploy/check.sh. govulncheck reads the vulnerability database that
# lint-tools.sh built from the pinned golang.org/x/vulndb module
# (.cache/tools/vulndb), or GOVULNDB (a URL or file:///path) when set.
set -euo pipefail
cd "$(dirname "$0")/.."
# govulncheck judges the standard library of the go it runs: the toolchain
# go.mod names, fetched if need be (see Makefile).
export GOTOOLCHAIN=auto

T=$PWD/.cache/tools/bin
ALLOW=tools/deadcode-allow.txt
MODULE=$(go list -m)

if ! why=$(bash tools/lint-tools.sh --check); then
  if [ "${CI:-}" = "true" ]; then
    echo "lint: $why (run tools/lint-tools.sh)" >&2
    exit 1
  fi
  echo "lint: skip: $why (run tools/lint-tools.sh)"
  exit 0
fi

# Every step runs, so one run shows every finding; the exit status is the
# worst of them.
failed=""

echo "== staticcheck ./..."
"$T/staticcheck" ./... || failed="$failed staticcheck"
# The OpenSSL backend's files (issue 18) build only with the tag.
echo "== staticcheck -tags openssl ./..."
CGO_ENABLED=1 "$T/staticcheck" -tags openssl ./... || failed="$failed staticcheck-openssl"

# deadcode lists functions cmd/wssgw cannot reach; each one left must be
# in the allow-list with its reason, and each allow-list entry must still
# be dead, so the list never outlives what it explains.
echo "== deadcode ./cmd/wssgw (allowed: $ALLOW)"
dead=$("$T/deadcode" -f '{{range .Funcs}}{{$.Path}}.{{.Name}}{{"\n"}}{{end}}' ./cmd/wssgw |
  sed "s|^$MODULE/||" | sort -u)
allowed=$(grep -v '^#' "$ALLOW" | awk 'NF {print $1}' | sort -u)
unexplained=$(comm -23 <(echo "$dead") <(echo "$allowed") | sed '/^$/d')
stale=$(comm -13 <(echo "$dead") <(echo "$allowed") | sed '/^$/d')
if [ -n "$unexplained" ] || [ -n "$stale" ]; then
  [ -z "$unexplained" ] || printf 'unreachable from cmd/wssgw (delete it, or add it to %s with a reason):\n%s\n' "$ALLOW" "$unexplained"
  [ -z "$stale" ] || printf 'in %s but no longer dead (remove the entry):\n%s\n' "$ALLOW" "$stale"
  failed="$failed deadcode"
else
  echo "$(echo "$dead" | sed '/^$/d' | wc -l) unreachable, each in the allow-list with its reason"
fi

echo "== govulncheck ./..."
GOVULNDB=${GOVULNDB:-file://$PWD/.cache/tools/vulndb}
db=(-db "$GOVULNDB")
echo "database: $GOVULNDB"
set +e
out=$("$T/govulncheck" "${db[@]}" ./... 2>&1)
rc=$?
set -e
# rc 3 means vulnerabilities were found; any other failure (a database
# that cannot be read) fails too: an unchecked build is not a clean one.
echo "$out"
[ $rc -eq 0 ] || failed="$failed govulncheck"

if [ -n "$failed" ]; then
  echo "lint failed:$failed" >&2
  exit 1
fi
