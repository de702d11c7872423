package egress

import (
	"context"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Client secures the requests of one egress route and verifies the
// partner's responses. It is safe for concurrent use.
type Client struct {
	cfg     config.Egress
	key     *reload.Reloader[crypto.KeyPair]
	partner *reload.Reloader[x509.Certificate] // nil without encryption
	headers []xml.Name                         // header blocks to sign
	ttl     time.Duration                      // <0: no Timestamp
	policy  *wss.Policy
	engine  *dom.Engine
	gate    *xmlscan.Scanner // the legacy client's requests
	// responseGate gates responses before anything looks at them, and
	// the plaintext the legacy client gets.
	responseGate *xmlscan.Scanner
	mime         mime.Limits
}

// Limits bound what the client parses.
type Limits struct {
	// Request is the gate of the legacy client's request (the route's
	// request limits).
	Request xmlscan.Config
	// Response is the gate of the partner's response and of the
	// DOM engine that verifies it.
	Response xmlscan.Config
	// MIME bounds an MTOM/SwA response.
	MIME mime.Limits
}

// New loads the route's keys and starts keeping them fresh until ctx ends
// (Secret rotation, as response signing keys). p is the compiled
// egress.response.policy.
func New(ctx context.Context, route string, cfg config.Egress, p *wss.Policy, lim Limits, ro reload.Options) (*Client, error) {
	if p == nil {
		return nil, fmt.Errorf("egress: route %s: no response policy", route)
	}
	c := &Client{cfg: cfg, policy: p, mime: lim.MIME, ttl: -1}
	for _, part := range cfg.Sign.Parts {
		switch part {
		case config.PartBody:
		case config.PartTimestamp:
			c.ttl = cfg.Sign.TimestampTTL
		default:
			space, local, ok := config.ParseQName(part)
			if !ok {
				return nil, fmt.Errorf("egress: route %s: sign.parts: %q is not Body, Timestamp or {namespace}local", route, part)
			}
			c.headers = append(c.headers, xml.Name{Space: space, Local: local})
		}
	}
	var err error
	name := "routes." + route + ".egress"
	if c.key, err = reload.NewKeySource(name+".sign", cfg.Sign.SigningKeyOptions(), ro); err != nil {
		return nil, fmt.Errorf("egress: route %s: %w", route, err)
	}
	if f := cfg.Encrypt.PartnerCertFile; f != "" {
		load := func() (*x509.Certificate, error) {
			certs, err := crypto.LoadCertificates(f)
			if err != nil {
				return nil, err
			}
			if len(certs) == 0 {
				return nil, fmt.Errorf("%s: no certificate", f)
			}
			return certs[0], nil
		}
		if c.partner, err = reload.New(name+".encrypt", []string{f}, load, ro); err != nil {
			return nil, fmt.Errorf("egress: route %s: %w", route, err)
		}
		go c.partner.Run(ctx)
	}
	go c.key.Run(ctx)
	if c.gate, err = xmlscan.NewScanner(lim.Request); err != nil {
		return nil, fmt.Errorf("egress: route %s: %w", route, err)
	}
	if c.responseGate, err = xmlscan.NewScanner(lim.Response); err != nil {
		return nil, fmt.Errorf("egress: route %s: %w", route, err)
	}
	if c.engine, err = dom.New(lim.Response); err != nil {
		return nil, fmt.Errorf("egress: route %s: %w", route, err)
	}
	return c, nil
}

// LimitWorkers makes response verification take a DOM-engine worker of w
// first, as ingress verification does (the gateway's memory budget): a
// refusal is w's own error, not a verdict on the response.
func (c *Client) LimitWorkers(w dom.Workers) { c.engine.LimitWorkers(w) }

// Certificates returns the certificates the client holds now: its
// signing certificate, and the partner's (nil without encryption), for
// the certificate expiry metric.
func (c *Client) Certificates() (signing, partner *x509.Certificate) {
	if k := c.key.Current(); k != nil {
		signing = k.Certificate
	}
	if c.partner != nil {
		partner = c.partner.Current()
	}
	return signing, partner
}

// Request is a secured outbound request.
type Request struct {
	// Body is the envelope to send to the partner.
	Body []byte
	// SignatureValue is the request's signature value, which the
	// partner's SignatureConfirmation must echo (WSS 1.1 §8.5).
	SignatureValue []byte
}

// Errors of Secure; each error wraps one of them.
var (
	// ErrRequest: the legacy client's request cannot be secured (not a
	// SOAP envelope that passes the gate, or already secured).
	ErrRequest = errors.New("egress: the request cannot be secured")
	// ErrKeys: the route's key material is not loaded.
	ErrKeys = errors.New("egress: key material unavailable")
)

// Secure gates the legacy client's envelope and returns it secured per the
// route's egress policy.
func (c *Client) Secure(envelope []byte) (*Request, error) {
	var d xmlscan.Document
	if err := c.gate.Scan(envelope, &d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRequest, err)
	}
	o, err := c.options()
	if err != nil {
		return nil, err
	}
	out, err := signer.Secure(envelope, o)
	switch {
	case errors.Is(err, signer.ErrEnvelope) || errors.Is(err, signer.ErrSecured):
		return nil, fmt.Errorf("%w: %w", ErrRequest, err)
	case err != nil:
		return nil, fmt.Errorf("egress: secure: %w", err)
	}
	sv, err := c.signatureValue(out)
	if err != nil {
		return nil, err
	}
	return &Request{Body: out, SignatureValue: sv}, nil
}

// options are the signer's options for one request.
func (c *Client) options() (signer.Options, error) {
	k := c.key.Current()
	if k == nil {
		return signer.Options{}, fmt.Errorf("%w: no signing key loaded", ErrKeys)
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.Chain = k.Signer, k.Certificate, k.Chain
	o.KeyReference = c.cfg.Sign.KeyReference
	o.SignatureAlgorithm = c.cfg.Sign.SignatureAlgorithm
	o.DigestAlgorithm = c.cfg.Sign.DigestAlgorithm
	o.SignHeaders = c.headers
	o.TTL = c.ttl
	o.Gate = c.gate
	if c.partner != nil {
		p := c.partner.Current()
		if p == nil {
			return o, fmt.Errorf("%w: no partner certificate loaded", ErrKeys)
		}
		o.EncryptFor = p
		o.KeyTransport = c.cfg.Encrypt.KeyTransport
		o.DataAlgorithm = c.cfg.Encrypt.DataEncryption
		o.EncryptKeyReference = c.cfg.Encrypt.KeyReference
	}
	return o, nil
}

// signatureValue returns the decoded ds:SignatureValue of a message the
// signer produced (one signature).
func (c *Client) signatureValue(msg []byte) ([]byte, error) {
	var d xmlscan.Document
	if err := c.gate.Scan(msg, &d); err != nil {
		return nil, fmt.Errorf("egress: secured request: %w", err)
	}
	for i := range d.Elements {
		if el := &d.Elements[i]; el.Space == nsDS && el.Local == "SignatureValue" {
			return wss.DecodeBase64(d.Text(i, nil))
		}
	}
	return nil, errors.New("egress: secured request has no SignatureValue")
}

const nsDS = "http://www.w3.org/2000/09/xmldsig#"
