package gateway

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"slices"

	"github.com/wssgw/wssgw/internal/template"
)

// templatesHandler lists the learned templates (admin API): shapes and
// counters only, never a message's values.
func (s *Server) templatesHandler(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var out []template.Info
	gw := s.current()
	names := make([]string, 0, len(gw.policies.templates))
	for name := range gw.policies.templates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, in := range gw.policies.templates[name].Infos(id != "") {
			if id == "" || in.ID == id {
				out = append(out, in)
			}
		}
	}
	if id != "" && len(out) == 0 {
		http.Error(w, "no template "+id, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

// warmStart learns an export file's messages into each policy's store
// that fresh holds (stores kept over a reload have learned already),
// through the first route of that policy. A file that cannot be read or
// entries the DOM engine no longer accepts are logged, not fatal: the
// gateway then learns from live traffic as usual.
func warmStart(file string, routes []*route, fresh map[*template.Store]bool, log *slog.Logger) {
	f, err := os.Open(file)
	if err != nil {
		log.Warn("templates: warm start skipped", "file", file, "error", err)
		return
	}
	defer f.Close()
	entries, err := template.ReadExport(f)
	if err != nil {
		log.Warn("templates: warm start skipped", "file", file, "error", err)
		return
	}
	done := map[*template.Store]bool{}
	for _, r := range routes {
		e := r.templateEngine()
		if e == nil || done[e.Store()] || !fresh[e.Store()] {
			continue
		}
		done[e.Store()] = true
		n, err := e.Import(entries)
		log.Info("templates: warm start", "policy", e.Store().Policy().Name, "learned", n)
		if err != nil {
			log.Warn("templates: warm start entries skipped", "policy", e.Store().Policy().Name, "error", err)
		}
	}
}

// exportHandler writes every policy's templates as an import file. It holds
// real messages: the admin listener must stay private.
func (s *Server) exportHandler(w http.ResponseWriter, _ *http.Request) {
	out := []template.Exported{}
	for _, st := range s.current().policies.templates {
		x, err := st.Export()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out = append(out, x...)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// importHandler learns an export file posted to it.
func (s *Server) importHandler(w http.ResponseWriter, r *http.Request) {
	entries, err := template.ReadExport(http.MaxBytesReader(w, r.Body, 256<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	total := 0
	var errs []string
	done := map[*template.Store]bool{}
	for _, rt := range s.current().routes {
		e := rt.templateEngine()
		if e == nil || done[e.Store()] {
			continue
		}
		done[e.Store()] = true
		n, err := e.Import(entries)
		total += n
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"learned": total, "skipped": errs})
}

// templateEngine is the route's template automaton, or nil.
func (r *route) templateEngine() *template.Engine {
	if r.security == nil {
		return nil
	}
	e, _ := r.security.engine.(*template.Engine)
	return e
}
