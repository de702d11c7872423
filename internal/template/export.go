package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/wssgw/wssgw/internal/wss"
)

// Exported is one template in an export file: the accepted message it was
// learned from. Import learns it again through the DOM engine, so a file
// can only teach shapes the DOM engine accepts under the importing policy
// (a forged file cannot plant a template). The message holds real values
// (payload included): treat export files like message logs.
type Exported struct {
	Policy  string `json:"policy"`
	ID      string `json:"id"`
	Message []byte `json:"message"`
}

// exemplar rebuilds the learned message from the fragments and the
// learned slot values.
func (t *Template) exemplar() ([]byte, error) {
	var out []byte
	vals, err := t.values()
	if err != nil {
		return nil, fmt.Errorf("template: exemplar: %w", err)
	}
	for k := range t.nfrags() {
		out = append(out, t.frag(k)...)
		if k == len(t.slots) {
			break
		}
		colon := bytes.IndexByte(vals, ':')
		if colon < 0 {
			return nil, errors.New("template: bad exemplar")
		}
		n, err := strconv.Atoi(string(vals[:colon]))
		if err != nil || colon+1+n > len(vals) {
			return nil, errors.New("template: bad exemplar")
		}
		out = append(out, vals[colon+1:colon+1+n]...)
		vals = vals[colon+1+n:]
	}
	return out, nil
}

// Export writes the store's templates.
func (s *Store) Export() ([]Exported, error) {
	var out []Exported
	for _, t := range s.Templates() {
		if t.pkg {
			// A package's root is learned with its parts, which the
			// template does not keep: the partner's next package
			// teaches it again.
			continue
		}
		msg, err := t.exemplar()
		if err != nil {
			return nil, err
		}
		out = append(out, Exported{Policy: s.policy.Name, ID: t.ID, Message: msg})
	}
	return out, nil
}

// ReadExport parses an export file.
func ReadExport(r io.Reader) ([]Exported, error) {
	var out []Exported
	if err := json.NewDecoder(io.LimitReader(r, 1<<30)).Decode(&out); err != nil {
		return nil, fmt.Errorf("template: export file: %w", err)
	}
	return out, nil
}

// Import learns the exported messages of this engine's policy through the
// DOM engine, at the time of each message's Timestamp (an exported message
// is older than any window). It returns how many templates were added.
func (e *Engine) Import(entries []Exported) (int, error) {
	p := e.store.policy
	n := 0
	var errs []error
	for _, x := range entries {
		if x.Policy != p.Name {
			continue
		}
		at := importTime(x.Message)
		res, err := e.dom.Process(x.Message, p, at)
		if err == nil {
			err = p.CheckFacts(res)
		}
		var t *Template
		if err == nil {
			t, err = e.newTemplate(x.Message, nil, res, p, at)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("template %s: %w", x.ID, err))
			continue
		}
		if ok, _ := e.store.add(t); ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// importTime is a second after the message's first wsu:Created, or now.
func importTime(msg []byte) time.Time {
	i := bytes.Index(msg, []byte("Created>"))
	if i < 0 {
		return time.Now()
	}
	rest := msg[i+len("Created>"):]
	j := bytes.IndexByte(rest, '<')
	if j < 0 {
		return time.Now()
	}
	t, err := wss.ParseDateTime(rest[:j])
	if err != nil {
		return time.Now()
	}
	return t.Add(time.Second)
}
