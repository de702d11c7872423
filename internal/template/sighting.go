package template

import (
	"bytes"
	"hash/maphash"
	"math"
	"sync"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Learning a shape only when it is seen again (issue 14). Every message
// the DOM engine accepts and no template describes used to be learned at
// once: a stream of one-off shapes (an attacker with a trusted key, or a
// partner whose every message carries a unique header block) cost about
// 3 ms of learning each, filled the store with templates that never hit
// again and made every later learn dearer. A shape is now learned when a
// cheap key of it has been seen Options.LearnAfter times.
//
// The key only decides WHEN to learn, never WHAT is accepted: two
// messages with equal keys may learn different templates, and a template
// learned after a key collision still decides every message by its own
// checks (the matcher, the digests, the signature, the shadow).

// sightingsMax bounds the keys held per policy: two generations of half
// of it. A flood of distinct keys pushes a key out after sightingsMax/2
// newer ones, so a legitimate shape is learned if it comes back within
// that many other unknown shapes (at 30 fresh shapes a second, over a
// minute).
const sightingsMax = 4096

// sightings counts unknown shape keys, in two bounded generations: keys
// go into cur; when cur holds sightingsMax/2 keys it becomes old and the
// former old is dropped. Only an accepted message records a key; a miss
// looks one up before the DOM engine runs (first-sight lanes,
// firstsight.go). Hits never touch it, so a mutex costs nothing a hit
// pays.
type sightings struct {
	mu       sync.Mutex
	cur, old map[uint64]uint8
}

// see records one sighting of key and reports whether it has now been
// seen at least n times. n ≤ 1 is always true and records nothing.
func (s *sightings) see(key uint64, n int) bool {
	if n <= 1 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cur[key]
	if !ok {
		if c, ok = s.old[key]; ok {
			delete(s.old, key)
		}
	}
	if int(c) < n {
		c++
	}
	if !ok && len(s.cur) >= sightingsMax/2 {
		s.old, s.cur = s.cur, make(map[uint64]uint8, sightingsMax/2)
	}
	if s.cur == nil {
		s.cur = make(map[uint64]uint8)
	}
	s.cur[key] = c
	return int(c) >= n
}

var shapeSeed = maphash.MakeSeed()

// shapeKey is a cheap key of what makes a message's template: the names
// of its elements and of their attributes, in document order, outside the
// Body's content, the values of the attributes shapeValue names, and
// whether it is an MTOM package's root. Other values are left out (ids,
// timestamps, digests, the certificate vary per message); the
// Body's content is left out because a generic Body (generic.go) takes any
// payload, so a payload's structure is no reason to wait. A Body the
// learner cannot make generic (an encrypted one, say) then learns a new
// template for each payload structure once its envelope was seen again:
// today's behaviour for those, not worse.
func shapeKey(data []byte, pkg bool) uint64 {
	key, _ := walkShape(data, pkg)
	return key
}

// walkShape is shapeKey's walk, which also finds the signer the message
// claims (claim, firstsight.go) in the same pass.
//
// It runs before the DOM engine on a template miss (first-sight lanes),
// so data is anything a sender wrote: malformed, truncated, hostile. The
// walk stays in bounds, allocates nothing and is linear in len(data):
// every step moves forward, and the one jump over the Body's content
// (bytes.LastIndex) is taken once per message, not once per Body-named
// element (many "<Body></x>" pairs with an early "</Body" would otherwise
// rescan the message each). On a well-formed message the key is the one
// the walk computed when it ran after acceptance only (FuzzShapeKey), so
// learning is unchanged.
func walkShape(data []byte, pkg bool) (key, signer uint64) {
	key, signer, _ = walkSight(data, pkg, nil)
	return key, signer
}

// walkSight is walkShape telling also whether the claim is a token's text
// (signerLane). With lim, the walk stops where the gate refuses the
// message (deeper than MaxDepth, more than MaxElements elements or
// MaxAttrs+MaxNSDeclsPerElement attributes on one): the DOM engine that
// follows refuses such bytes in microseconds, and walking megabytes of
// them first made a refused message cost up to 1,000x that
// (BenchmarkLaneWalkCost). It claims nothing then (lane 0); an accepted
// message is within the limits, so its key is walkShape's.
func walkSight(data []byte, pkg bool, lim *xmlscan.Limits) (key, signer uint64, token bool) {
	maxDepth, maxElems, maxAttrs := math.MaxInt, math.MaxInt, math.MaxInt
	if lim != nil {
		maxDepth, maxElems, maxAttrs = lim.MaxDepth, lim.MaxElements, lim.MaxAttrs+lim.MaxNSDeclsPerElement
	}
	elems := 0
	var h maphash.Hash
	h.SetSeed(shapeSeed)
	if pkg {
		h.WriteByte(1)
	}
	var c claim
	c.reset()
	depth, skipFrom := 0, -1 // skipFrom: depth of the Body whose content is skipped
	jumped := false          // the Body's content was jumped over
	for i := 0; i < len(data); {
		j := indexByte(data, i, '<')
		if c.capture >= 0 {
			end := j
			if end < 0 {
				end = len(data)
			}
			c.text(data[i:end])
		}
		if j < 0 || j+1 >= len(data) {
			break
		}
		i = j + 1
		switch data[i] {
		case '/':
			depth--
			if depth == skipFrom {
				skipFrom = -1
			}
			c.end(depth)
			i = indexAfter(data, i, '>')
			continue
		case '?':
			i = indexEnd(data, i, "?>")
			continue
		case '!':
			if hasAt(data, i, "!--") {
				i = indexEnd(data, i, "-->")
			} else if hasAt(data, i, "![CDATA[") {
				from := i + len("![CDATA[")
				k := indexEnd(data, from, "]]>")
				if c.capture >= 0 {
					c.text(data[from:max(from, k-len("]]>"))]) // a token's text may be a CDATA section
				}
				i = k
			} else {
				i = indexAfter(data, i, '>')
			}
			continue
		}
		// A start tag: its name, then its attributes' names.
		if elems++; elems > maxElems {
			return h.Sum64(), 0, false
		}
		attrs := 0
		n := nameEnd(data, i)
		name := data[i:n]
		record := skipFrom < 0
		if record {
			h.WriteByte('<')
			h.WriteByte(byte(depth)) // nesting, not just order
			h.Write(name)
		}
		role := roleNone
		if record {
			role = c.role(localName(name), depth)
		}
		i = n
		closed, value, noted := false, false, false
	attrs:
		for i < len(data) {
			ch := data[i]
			switch {
			case ch == '>':
				i++
				break attrs
			case ch == '/':
				closed = true
				i++
			case ch == '"' || ch == '\'':
				end := indexAfter(data, i+1, ch)
				v := data[i+1 : max(i+1, end-1)]
				if value {
					h.WriteByte('=')
					h.Write(v)
				}
				if noted {
					c.attr(role, i+1, i+1+len(v))
				}
				i, value, noted = end, false, false
			case isSpace(ch) || ch == '=':
				i++
			default:
				if attrs++; attrs > maxAttrs {
					return h.Sum64(), 0, false
				}
				n := nameEnd(data, i)
				if n == i { // not a name byte: never in accepted XML
					n++
				}
				if record {
					h.WriteByte(' ')
					h.Write(data[i:n])
					value = shapeValue(data[i:n])
				}
				noted = role != roleNone && c.notes(role, localName(data[i:n]))
				i = n
			}
		}
		if record {
			h.WriteByte('>')
		}
		if closed {
			continue
		}
		if record {
			c.open(role, depth)
		}
		if depth++; depth > maxDepth {
			return h.Sum64(), 0, false
		}
		if record && depth == 2 && isBody(name) {
			skipFrom = depth - 1 // skip until the Body's end tag
			if !jumped {
				// Straight to it: the last "</Body" of the message is the
				// Body's (the Envelope has one Body and the payload ends
				// before it), so the payload is not scanned at all. Once:
				// a second Body is no SOAP message, its content is
				// scanned (not keyed).
				jumped = true
				var buf [64]byte
				if len(name)+2 <= len(buf) {
					if k := bytes.LastIndex(data, append(append(buf[:0], "</"...), name...)); k >= i {
						i = k
					}
				}
			}
		}
	}
	signer, token = c.signer(data)
	return h.Sum64(), signer, token
}

func indexByte(data []byte, from int, c byte) int {
	if i := bytes.IndexByte(data[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// indexAfter is the offset after the first c from from, or len(data):
// indexEnd for one byte, without a string made of it.
func indexAfter(data []byte, from int, c byte) int {
	if from >= len(data) {
		return len(data)
	}
	if i := bytes.IndexByte(data[from:], c); i >= 0 {
		return from + i + 1
	}
	return len(data)
}

// indexEnd is the offset after the first end from from, or len(data).
func indexEnd(data []byte, from int, end string) int {
	if from >= len(data) {
		return len(data)
	}
	if i := bytes.Index(data[from:], []byte(end)); i >= 0 {
		return from + i + len(end)
	}
	return len(data)
}

func hasAt(data []byte, i int, s string) bool {
	return len(data)-i >= len(s) && string(data[i:i+len(s)]) == s
}

// nameEnd is the end of the XML name starting at i.
func nameEnd(data []byte, i int) int {
	for i < len(data) {
		switch c := data[i]; {
		case isSpace(c) || c == '>' || c == '/' || c == '=' || c == '"' || c == '\'' || c == '<':
			return i
		}
		i++
	}
	return i
}

// shapeValue reports whether the value of the attribute named qname is
// part of the shape key: namespace declarations and the attributes a
// partner's stack writes the same in every message (algorithms, token and
// encoding types, mustUnderstand), which tell its key reference forms and
// algorithms apart (WSS4J's thumbprint and SKI references differ only in
// a ValueType). Ids, URIs and PrefixLists are left out: they may vary per
// message.
func shapeValue(qname []byte) bool {
	if string(qname) == "xmlns" || bytes.HasPrefix(qname, []byte("xmlns:")) {
		return true
	}
	for i := len(qname) - 1; i >= 0; i-- {
		if qname[i] == ':' {
			qname = qname[i+1:]
			break
		}
	}
	switch string(qname) {
	case "Algorithm", "ValueType", "EncodingType", "Type", "mustUnderstand", "TokenType":
		return true
	}
	return false
}

// isBody reports whether the qualified name's local part is Body (the
// Envelope's child; its namespace is not checked: the key only decides
// when to learn and which lane a miss takes).
func isBody(qname []byte) bool { return string(localName(qname)) == "Body" }

// localName is the part of a qualified name after its prefix.
func localName(qname []byte) []byte {
	if i := bytes.LastIndexByte(qname, ':'); i >= 0 {
		return qname[i+1:]
	}
	return qname
}
