// Package demo is the embedded SOAP backend that `wssgw demo` (make run)
// puts behind the gateway: a tiny order service that answers SOAP 1.1 and
// 1.2 requests in kind, so a newcomer sees wssgw working without a service
// of their own. It is not used by the gateway itself.
package demo
