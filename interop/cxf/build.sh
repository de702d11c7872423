#!/usr/bin/env bash
# Builds the CXF interop peer into one runnable jar and prints its absolute path on stdout.
#
#   interop/cxf/build.sh            # build if stale, print jar path
#   JAR=$(interop/cxf/build.sh)     # typical use from a test
#
# Maven local repository: $REPO_ROOT/.cache/m2; build output: $REPO_ROOT/.cache/cxf/
# (both git-ignored). The first build resolves from Maven Central; later builds run offline (-o)
# and are skipped entirely while the jar is newer than pom.xml, src/ and this script.
# Environment: REPO_ROOT (default: two levels above this script), MVN (default: mvn),
# CXF_PEER_FORCE=1 to rebuild unconditionally. Build logs go to stderr only on failure.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="${REPO_ROOT:-$(cd "$HERE/../.." && pwd)}"
MVN="${MVN:-mvn}"
CACHE="$REPO_ROOT/.cache"
M2="$CACHE/m2"
OUT="$CACHE/cxf"
JAR="$OUT/target/cxf-peer.jar"

stale() {
  [[ "${CXF_PEER_FORCE:-}" == 1 ]] && return 0
  [[ -s "$JAR" ]] || return 0
  [[ -n "$(find "$HERE/pom.xml" "$HERE/build.sh" "$HERE/src" -newer "$JAR" -print -quit)" ]]
}

if stale; then
  mkdir -p "$M2" "$OUT"
  # Serialise concurrent builds (parallel go test packages); re-check after taking the lock.
  exec 9>"$OUT/build.lock"
  flock 9
  if stale; then
    command -v "$MVN" >/dev/null || { echo "build.sh: $MVN not found (apt-get install maven)" >&2; exit 1; }
    command -v java >/dev/null || { echo "build.sh: java not found (JDK 17+ needed)" >&2; exit 1; }
    log="$OUT/build.log"
    args=(-B -ntp -Dstyle.color=never -f "$HERE/pom.xml" "-Dmaven.repo.local=$M2" "-Dpeer.build.dir=$OUT/target" package)
    # Offline first (no network checks once everything is cached); online if something is missing.
    if ! "$MVN" -o "${args[@]}" >"$log" 2>&1; then
      if ! "$MVN" "${args[@]}" >"$log" 2>&1; then
        cat "$log" >&2
        echo "build.sh: maven build failed (log: $log)" >&2
        exit 1
      fi
    fi
    [[ -s "$JAR" ]] || { echo "build.sh: $JAR missing after build" >&2; exit 1; }
    touch "$JAR"
  fi
  exec 9>&-
fi
echo "$JAR"
