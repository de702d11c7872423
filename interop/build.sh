#!/usr/bin/env bash
# Builds one interop peer into a runnable jar and prints its absolute path on stdout.
#
#   interop/build.sh wss4j            # build if stale, print the WSS4J peer's jar path
#   JAR=$(interop/build.sh cxf)       # typical use from a test
#
# PEER is a module of interop/pom.xml (wss4j, cxf); the reactor builds peer-common with it.
# Maven local repository: $REPO_ROOT/.cache/m2; build output: $REPO_ROOT/.cache/peers/<artifactId>/
# (both git-ignored). The first build resolves from Maven Central; later builds run offline (-o)
# and are skipped entirely while the jar is newer than the reactor POM, peer-common, the peer's
# module and this script.
# Environment: REPO_ROOT (default: one level above this script), MVN (default: mvn),
# PEER_FORCE=1 to rebuild unconditionally. Build logs go to stderr only on failure.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEER="${1:-}"
[[ -n "$PEER" && -f "$HERE/$PEER/pom.xml" && "$PEER" != peer-common ]] ||
  { echo "usage: build.sh PEER (a peer module of $HERE: wss4j, cxf)" >&2; exit 2; }
REPO_ROOT="${REPO_ROOT:-$(cd "$HERE/.." && pwd)}"
MVN="${MVN:-mvn}"
CACHE="$REPO_ROOT/.cache"
M2="$CACHE/m2"
OUT="$CACHE/peers"
JAR="$OUT/$PEER-peer/$PEER-peer.jar"

stale() {
  [[ "${PEER_FORCE:-}" == 1 ]] && return 0
  [[ -s "$JAR" ]] || return 0
  [[ -n "$(find "$HERE/pom.xml" "$HERE/build.sh" "$HERE/peer-common" "$HERE/$PEER/pom.xml" "$HERE/$PEER/src" \
    -newer "$JAR" -print -quit)" ]]
}

if stale; then
  mkdir -p "$M2" "$OUT"
  # Serialise concurrent builds (parallel go test packages; both peers compile peer-common into
  # the same directory); re-check after taking the lock.
  exec 9>"$OUT/build.lock"
  flock 9
  if stale; then
    command -v "$MVN" >/dev/null || { echo "build.sh: $MVN not found (apt-get install maven)" >&2; exit 1; }
    command -v java >/dev/null || { echo "build.sh: java not found (JDK 17+ needed)" >&2; exit 1; }
    log="$OUT/$PEER-build.log"
    args=(-B -ntp -Dstyle.color=never -f "$HERE/pom.xml" "-Dmaven.repo.local=$M2" "-Dpeer.cache=$OUT"
      -pl ":$PEER-peer" -am package)
    # Offline first (no network checks once everything is cached); online if something is missing.
    if ! "$MVN" -o "${args[@]}" >"$log" 2>&1; then
      if ! "$MVN" "${args[@]}" >"$log" 2>&1; then
        cat "$log" >&2
        echo "build.sh: maven build of the $PEER peer failed (log: $log)" >&2
        exit 1
      fi
    fi
    [[ -s "$JAR" ]] || { echo "build.sh: $JAR missing after build" >&2; exit 1; }
    touch "$JAR"
  fi
  exec 9>&-
fi
echo "$JAR"
