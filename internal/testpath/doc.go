// Package testpath is what a lenient servlet container makes of a
// request-target before it maps it, for the tests that check wssgw routes
// a request where the backend will (issue 13 item 2): the gateway's path
// fuzzing and the end-to-end bypass backend use the one rule. It is
// imported by tests only.
package testpath
