// Package e2e holds end-to-end tests that build the real wssgw binary and run
// it on loopback in front of real HTTP backends.
package e2e
