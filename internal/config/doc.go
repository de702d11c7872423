// Package config holds wssgw's typed configuration: the structs a YAML file,
// WSSGW_* environment variables and flags are decoded into, their defaults,
// and one Validate that reports every problem at once, each named by its key
// path. It knows nothing of how the values were loaded (that is cmd/wssgw's
// job), so the same checks run for `wssgw validate` and `wssgw serve`.
package config
