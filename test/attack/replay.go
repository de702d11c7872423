package attack

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Replays returns variants of msg that a verifier without a replay cache
// accepts but that must be rejected once msg itself has been accepted
// (security.md E1: same signed content, re-encoded where it is not signed).
// The first is msg itself. Their family is FamilyReplay.
func Replays(msg []byte) ([]Mutant, error) {
	m, err := parse(msg)
	if err != nil {
		return nil, err
	}
	out := []Mutant{{Name: "replay/identical", Family: FamilyReplay, Data: append([]byte(nil), msg...)}}
	add := func(name string, data []byte) {
		out = append(out, Mutant{Name: name, Family: FamilyReplay, Data: data})
	}
	lines := func(i int) string {
		s := strings.Join(strings.Fields(m.text(i)), "")
		var b strings.Builder
		for len(s) > 64 {
			b.WriteString(s[:64] + "\n")
			s = s[64:]
		}
		b.WriteString(s)
		return b.String()
	}
	// The SignatureValue is not in SignedInfo: line breaks keep it valid.
	add("replay/signaturevalue-line-breaks", m.apply(m.setContent(m.sigValue, lines(m.sigValue))))
	add("replay/signaturevalue-crlf", m.apply(m.setContent(m.sigValue, strings.ReplaceAll(lines(m.sigValue), "\n", "\r\n"))))
	if m.bst >= 0 {
		add("replay/bst-line-breaks", m.apply(m.setContent(m.bst, lines(m.bst))))
	}
	// White space between the Security header's children.
	var edits []edit
	for c := m.doc.FirstChild(m.security); c >= 0; c = m.doc.NextSibling(c) {
		edits = append(edits, m.before(c, "\n  "))
	}
	add("replay/security-whitespace", m.apply(edits...))
	if m.doc.Decl.Len() > 0 {
		add("replay/no-xml-declaration", m.apply(edit{m.doc.Decl.Start, m.doc.Decl.End, ""}))
	}
	return out, nil
}

// TokenSwaps returns msg with the certificate in its BinarySecurityToken
// replaced by each of certs (DER), the rest byte for byte. The token is not
// signed (BSP lets it be, few stacks do): with a certificate for the same
// key, a same-key renewal, the signature still verifies and the chain
// still validates, so each is a replay once msg was accepted (issue 13 item
// 3: the replay key is what was signed, never the token). Their family is
// FamilyReplay.
func TokenSwaps(msg []byte, certs ...[]byte) ([]Mutant, error) {
	m, err := parse(msg)
	if err != nil {
		return nil, err
	}
	if m.bst < 0 {
		return nil, fmt.Errorf("%w: no BinarySecurityToken", ErrNotSecured)
	}
	var out []Mutant
	for i, c := range certs {
		b64 := base64.StdEncoding.EncodeToString(c)
		out = append(out, Mutant{Name: "replay/bst-swapped-" + itoa(i), Family: FamilyReplay, Data: m.apply(m.setContent(m.bst, b64))})
	}
	return out, nil
}
