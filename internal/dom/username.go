package dom

import (
	"github.com/wssgw/wssgw/internal/wss"
)

// usernameToken checks a wsse:UsernameToken against the policy's
// credentials (UsernameToken Profile 1.1): PasswordDigest needs a Nonce
// and a Created (§3.1, BSP R4220-R4225); PasswordText only by opt-in.
func (m *message) usernameToken(u int) error {
	if m.res.Username != nil {
		return wss.Failf(wss.ReasonStructure, "two UsernameTokens")
	}
	users := m.p.Users()
	if users == nil {
		return wss.Failf(wss.ReasonAuthentication, "policy has no credentials")
	}
	var name, pw, nonce, created = -1, -1, -1, -1
	for k, c := range m.children(u) {
		switch {
		case k == 0 && m.is(c, nsWSSE, "Username"):
			name = c
		case k > 0 && m.is(c, nsWSSE, "Password") && pw < 0:
			pw = c
		case k > 0 && m.is(c, nsWSSE, "Nonce") && nonce < 0:
			nonce = c
		case k > 0 && m.is(c, nsWSU, "Created") && created < 0:
			created = c
		default:
			return wss.Failf(wss.ReasonStructure, "unexpected %s in UsernameToken", m.name(c))
		}
	}
	if name < 0 || pw < 0 {
		return wss.Failf(wss.ReasonAuthentication, "UsernameToken without Username and Password")
	}
	tok := &wss.UsernameToken{Start: m.start(u), Username: m.text(name)}
	if nonce >= 0 {
		// Read for both password types: the policy records every nonce in
		// the replay store (UsernameToken Profile 1.1 §3.1: "a nonce ... to
		// detect replay"), and WSS4J sends one with PasswordText too. A
		// PasswordText token without a Nonce has no replay protection of
		// its own (only a signature's).
		if enc, ok := m.attr(nonce, "", "EncodingType"); ok && enc != encBase64 {
			return wss.Failf(wss.ReasonAuthentication, "Nonce EncodingType is not Base64Binary")
		}
		n, err := b64(m.text(nonce))
		if err != nil {
			return err
		}
		tok.Nonce = n
	}
	typ, ok := m.attr(pw, "", "Type")
	if !ok {
		typ = pwText
	}
	up := m.p.Config.UsernameToken
	switch typ {
	case pwText:
		if !up.AllowPasswordText {
			return wss.Failf(wss.ReasonAuthentication, "PasswordText not allowed")
		}
		if !users.CheckText(tok.Username, []byte(m.text(pw))) {
			return wss.Failf(wss.ReasonAuthentication, "wrong username or password")
		}
	case pwDigest:
		if nonce < 0 || created < 0 {
			return wss.Failf(wss.ReasonAuthentication, "PasswordDigest without Nonce and Created")
		}
		tok.Digest = true
		if !users.CheckDigest(tok.Username, tok.Nonce, []byte(m.text(created)), m.text(pw)) {
			return wss.Failf(wss.ReasonAuthentication, "wrong username or password")
		}
	default:
		return wss.Failf(wss.ReasonAuthentication, "unsupported password type")
	}
	if created >= 0 {
		t, err := parseDateTime(m.text(created))
		if err != nil {
			return err
		}
		if err := m.p.CheckUsernameCreated(t, m.now); err != nil {
			return err
		}
		tok.Created = t
	}
	m.res.Username = tok
	return nil
}
