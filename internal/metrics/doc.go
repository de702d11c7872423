// Package metrics owns wssgw's private Prometheus registry and defines every
// metric name, label set and bucket layout once. Hot-path handles are
// resolved per route at start-up (RouteMetrics) so a request never does a
// label lookup. Label values come only from closed sets: route names from the
// config, outcomes from this package.
package metrics
