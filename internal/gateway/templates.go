package gateway

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/wssgw/wssgw/internal/template"
)

// templatesHandler lists the learned templates (admin API): shapes and
// counters only, never a message's values.
func (s *Server) templatesHandler(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var out []template.Info
	names := make([]string, 0, len(s.gateway.policies.templates))
	for name := range s.gateway.policies.templates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, in := range s.gateway.policies.templates[name].Infos(id != "") {
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
