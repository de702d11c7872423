package xmlscan

import "bytes"

// growAt is the number of elements (or attributes) past which a full
// array is grown once to an upper bound of what the rest of the input can
// hold, instead of by append's factor. Below it append's doubling is cheap;
// above it, append grows a slice by a quarter at a time, so a 1 MiB
// markup-dense message (some 20,000 elements of 144 bytes) used to copy
// and allocate its arrays about five times over whenever the pooled
// Document had lost them (a sync.Pool is emptied by the garbage collector;
// issue 14: 4.3 MB/op at 1 MiB on every engine).
const growAt = 1024

// growElements makes room in d.Elements, when it is full, for every start
// tag the input from offset p on can still hold: a '<' that does not begin
// an end tag (comments and CDATA sections counted too). That is the bound
// the DOM engine reserves for the message's arrays before it scans it
// (dom.scratchBytes), so the one allocation stays within what was
// reserved, and MaxElements bounds it too.
func (st *state) growElements(p int) {
	d := st.d
	if len(d.Elements) < cap(d.Elements) || len(d.Elements) < growAt {
		return
	}
	rest := st.data[p:]
	n := bytes.Count(rest, []byte{'<'}) - bytes.Count(rest, []byte("</"))
	n = min(n, st.lim.MaxElements-len(d.Elements))
	if n > cap(d.Elements)-len(d.Elements) {
		grown := make([]Element, len(d.Elements), len(d.Elements)+n)
		copy(grown, d.Elements)
		d.Elements = grown
	}
}

// growAttrs makes room in d.Attrs, when it is full, for every attribute
// the input from offset p on can still hold: each needs a '=' and two
// quotes (dom.scratchBytes counts the same).
func (st *state) growAttrs(p int) {
	d := st.d
	if len(d.Attrs) < cap(d.Attrs) || len(d.Attrs) < growAt {
		return
	}
	rest := st.data[p:]
	quotes := bytes.Count(rest, []byte{'"'}) + bytes.Count(rest, []byte{'\''})
	n := min(bytes.Count(rest, []byte{'='}), quotes/2)
	if n > cap(d.Attrs)-len(d.Attrs) {
		grown := make([]Attr, len(d.Attrs), len(d.Attrs)+n)
		copy(grown, d.Attrs)
		d.Attrs = grown
	}
}
