// Package testpeer runs the project's real interop peers (the Maven
// projects under interop/, such as the WSS4J and Apache CXF peers) for
// tests: it builds a peer's jar, or skips the test where Java is missing,
// and runs many jobs in one JVM. It is imported by tests only.
//
// A missing peer skips the test, except in CI (CI=true), where .ci/run
// installs every peer and a missing one is a failure.
package testpeer
