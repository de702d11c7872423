// Package testmime holds MIME attachments in memory for tests: Part is a
// wss.Attachment and Parts a wss.Attachments whose contents a test can
// read, tamper with, add to or copy, so that the DOM engine, the template
// engine and the signer are tested against one fake package. File builds
// a small MTOM package as a backend sends it, and RawParts feeds a package
// to the streaming signer. It is imported by tests only.
package testmime
