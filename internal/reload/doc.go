// Package reload keeps key material loaded from files current: a Reloader
// polls its files (stat, then a content hash) and swaps in freshly loaded
// material atomically, so readers never block and never see a half-loaded
// state, and invalid new files keep the previous material.
//
// It is separate from internal/crypto and internal/trust because it serves
// both: NewKeySource reloads a local key pair (crypto.KeyPair), NewTrustSource
// a trust store (trust.Store), and its log lines label failures of either
// with trust.Reason. Watch is the same poll without loading anything: it
// tells the configuration reload (cmd/wssgw) that the configuration file or
// a file it names changed.
package reload
