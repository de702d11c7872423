package template

import (
	"strings"
	"time"
)

// Info describes a template for `wssgw templates list|show`. It holds the
// shape only: constant markup and slot classes, never a slot's value.
type Info struct {
	Policy    string    `json:"policy"`
	ID        string    `json:"id"`
	Slots     int       `json:"slots"`
	Bytes     int       `json:"bytes"`
	Hits      uint64    `json:"hits"`
	LearnedAt time.Time `json:"learnedAt"`
	LastHit   time.Time `json:"lastHit,omitzero"`
	// Shape is the message with each slot written as {class}; only in show.
	Shape string `json:"shape,omitempty"`
}

// Info describes t; with shape, its markup too.
func (t *Template) Info(policy string, shape bool) Info {
	in := Info{Policy: policy, ID: t.ID, Slots: len(t.slots), Bytes: t.size, Hits: t.hits.Load(),
		LearnedAt: time.Unix(0, t.learnedAt).UTC()}
	if h := t.lastHit.Load(); h > 0 {
		in.LastHit = time.Unix(0, h).UTC()
	}
	if shape {
		var b strings.Builder
		for k := range t.nfrags() {
			b.Write(t.frag(k))
			if k < len(t.slots) {
				b.WriteString("{" + t.slots[k].class.String() + "}")
			}
		}
		in.Shape = b.String()
	}
	return in
}

// Infos describes the store's templates, oldest first.
func (s *Store) Infos(shape bool) []Info {
	var out []Info
	for _, t := range s.Templates() {
		out = append(out, t.Info(s.policy.Name, shape))
	}
	return out
}
