package gateway

import (
	"net/http"
	"net/http/pprof"

	"github.com/wssgw/wssgw/internal/config"
)

// adminHandler serves the admin listener. It never shares a port with the
// data plane: metrics and profiles are not for partners. The templates API
// and pprof are mounted only when the configuration enables them: unmounted,
// they answer 404 like any unknown path.
func (s *Server) adminHandler(cfg config.Admin) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	if cfg.Templates {
		mux.HandleFunc("GET /templates", s.templatesHandler)
		mux.HandleFunc("GET /templates/export", s.exportHandler)
		mux.HandleFunc("POST /templates/import", s.importHandler)
		mux.HandleFunc("GET /templates/{id}", s.templatesHandler)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if s.Ready() {
			writeText(w, http.StatusOK, "ready\n")
			return
		}
		writeText(w, http.StatusServiceUnavailable, "not ready\n")
	})
	if cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
