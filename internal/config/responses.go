package config

import (
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
)

// Response signing modes.
const (
	// ResponseBuffered reads the whole response and adds a standard
	// WS-Security header that stock stacks (WSS4J/CXF) verify. An MTOM
	// response is signed too: its root part buffered, the Body digested
	// over the XOP infoset, the attachments spooled and sent on unchanged
	// (issue 15); an SwA response gets one cid: Reference per part.
	ResponseBuffered = "buffered"
	// ResponseStreaming signs MTOM/SwA responses while they pass through:
	// the ds:Signature content is the last MIME part (DESIGN.md §6). Other
	// responses on such a route are signed buffered.
	ResponseStreaming = "streaming"
)

// How streaming mode signs an MTOM/SwA response (responses.streamFormat;
// issue 15, docs/decisions.md "Streaming defaults").
const (
	// StreamAuto is the default: a standard form a stock stack verifies.
	// With the requester's certificate known (an RSA key from the verified
	// request signature) the response streams as StreamStrictXOP; without
	// it, where no standard streaming form exists, it is signed as in
	// buffered mode (root held, attachments spooled, a standard header).
	StreamAuto = "auto"
	// StreamStrictXOP streams with the ds:Signature encrypted for the
	// requester, its CipherValue the last part (base64Binary, so XOP 1.0
	// §3 holds and WSS4J/CXF verify it). A response without a requester
	// to encrypt for gets a 502 fault.
	StreamStrictXOP = "strict-xop"
	// StreamTrailing streams with the ds:Signature's children as the last
	// part (DESIGN.md §6): not XOP (ds:Signature is not base64Binary), so
	// only a receiver that puts the part back first verifies it (wssgw
	// verify, egress). Used only when configured.
	StreamTrailing = "trailing"
)

// Ways streaming mode digests attachments.
const (
	// AttachXOP digests the Body as its XOP infoset: each xop:Include
	// replaced by the base64 of its part (XOP 1.0 §3).
	AttachXOP = "xop"
	// AttachSwAContent adds one SwA Reference per attachment with the
	// Attachment-Content-Signature-Transform (SwA Profile 1.1 §5.2); one
	// that an xop:Include of the Body names is signed through the Body's
	// XOP infoset only, as WSS4J/CXF can verify it (issue 15).
	AttachSwAContent = "swa-content"
	// AttachSwAComplete is the same with the
	// Attachment-Complete-Signature-Transform: MIME headers included.
	AttachSwAComplete = "swa-complete"
)

// Key reference kinds of a response signature (X.509 Token Profile 1.1
// §3.3).
const (
	KeyRefBST          = "bst"
	KeyRefIssuerSerial = "issuer-serial"
	KeyRefSKI          = "ski"
	KeyRefThumbprint   = "thumbprint"
)

// Responses says how the backend's responses on a policy's routes are
// secured on their way back to the partner.
type Responses struct {
	// Sign turns response signing on. Off, responses pass untouched.
	Sign bool `mapstructure:"sign"`
	// CertFile and KeyFile are the PEM signing certificate (chain, leaf
	// first) and private key.
	CertFile string `mapstructure:"certFile"`
	KeyFile  string `mapstructure:"keyFile"`
	// Mode is buffered (default) or streaming.
	Mode string `mapstructure:"mode"`
	// KeyReference is how KeyInfo names the signing certificate: bst
	// (default), issuer-serial, ski or thumbprint.
	KeyReference string `mapstructure:"keyReference"`
	// SignatureConfirmation adds a signed wsse11:SignatureConfirmation per
	// verified request signature (WSS 1.1 §8.5).
	SignatureConfirmation bool `mapstructure:"signatureConfirmation"`
	// EncryptForRequester encrypts the response Body content for the
	// certificate that signed the request (RSA-OAEP, AES-256-GCM).
	EncryptForRequester bool `mapstructure:"encryptForRequester"`
	// Attachments is how streaming mode digests attachments: xop
	// (default), swa-content or swa-complete.
	Attachments string `mapstructure:"attachments"`
	// StreamFormat is how streaming mode signs an MTOM/SwA response:
	// auto (default), strict-xop or trailing.
	StreamFormat string `mapstructure:"streamFormat"`
	// StrictXOP is the older spelling of streamFormat strict-xop, kept
	// for configurations that set it: the trailing ds:Signature encrypted
	// for the requester so that the last part is the content of an
	// xenc:CipherValue (base64Binary), as XOP 1.0 strictly requires.
	StrictXOP bool `mapstructure:"strictXOP"`
	// TimestampTTL is the response Timestamp's lifetime (Expires -
	// Created). Default 5m.
	TimestampTTL time.Duration `mapstructure:"timestampTTL"`
	// MaxBufferedSize bounds a response signed in buffered mode; a larger
	// one gets a 502 fault. Default 10MiB.
	MaxBufferedSize ByteSize `mapstructure:"maxBufferedSize"`
}

// DefaultResponses returns the response defaults: signing off, buffered,
// bst, xop, a 5 minute Timestamp and a 10 MiB buffer.
func DefaultResponses() Responses {
	return Responses{
		Mode:            ResponseBuffered,
		KeyReference:    KeyRefBST,
		Attachments:     AttachXOP,
		StreamFormat:    StreamAuto,
		TimestampTTL:    5 * time.Minute,
		MaxBufferedSize: 10 << 20,
	}
}

// Format is the streaming format in effect: strictXOP: true is
// strict-xop.
func (r Responses) Format() string {
	if r.StrictXOP {
		return StreamStrictXOP
	}
	return r.StreamFormat
}

// KeyOptions converts the key files for the crypto package.
func (r Responses) KeyOptions() crypto.KeyFileOptions {
	return crypto.KeyFileOptions{CertFile: r.CertFile, KeyFile: r.KeyFile}
}

func (r *Responses) applyDefaults() {
	d := DefaultResponses()
	setDefault(&r.Mode, d.Mode)
	setDefault(&r.KeyReference, d.KeyReference)
	setDefault(&r.Attachments, d.Attachments)
	setDefault(&r.StreamFormat, d.StreamFormat)
	setDefault(&r.TimestampTTL, d.TimestampTTL)
	setDefault(&r.MaxBufferedSize, d.MaxBufferedSize)
}

// validate checks the section as a whole; p is the enclosing policy, since
// what the response can do depends on what the request proved.
func (r Responses) validate(ps *Problems, key string, p Policy) {
	checkOneOf(ps, key+".mode", r.Mode, ResponseBuffered, ResponseStreaming)
	checkOneOf(ps, key+".keyReference", r.KeyReference, KeyRefBST, KeyRefIssuerSerial, KeyRefSKI, KeyRefThumbprint)
	checkOneOf(ps, key+".attachments", r.Attachments, AttachXOP, AttachSwAContent, AttachSwAComplete)
	checkOneOf(ps, key+".streamFormat", r.StreamFormat, StreamAuto, StreamStrictXOP, StreamTrailing)
	if r.StrictXOP && r.StreamFormat != StreamAuto && r.StreamFormat != StreamStrictXOP {
		ps.add(key+".strictXOP", "is true but streamFormat is %q (strictXOP: true is streamFormat %s)", r.StreamFormat, StreamStrictXOP)
	}
	checkPositive(ps, key+".timestampTTL", r.TimestampTTL)
	if r.MaxBufferedSize <= 0 {
		ps.add(key+".maxBufferedSize", "must be positive, got %d", int64(r.MaxBufferedSize))
	}
	if !r.Sign {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"certFile", r.CertFile != ""}, {"keyFile", r.KeyFile != ""},
			{"signatureConfirmation", r.SignatureConfirmation},
			{"encryptForRequester", r.EncryptForRequester}, {"strictXOP", r.StrictXOP},
		} {
			if f.set {
				ps.add(key+"."+f.name, "is set but responses.sign is false")
			}
		}
		return
	}
	r.validateKey(ps, key)
	// The requester's certificate is known only from a verified request
	// signature: without one there is no one to encrypt for.
	signed := p.Has(RequireSignature)
	if r.EncryptForRequester && !signed {
		ps.add(key+".encryptForRequester", "needs %q in the policy's require: the requester's certificate comes from its verified signature", RequireSignature)
	}
	strictKey := key + ".streamFormat"
	if r.StrictXOP {
		strictKey = key + ".strictXOP"
	}
	if r.Format() == StreamStrictXOP && !signed {
		ps.add(strictKey, "needs %q in the policy's require: the trailing signature is encrypted for the requester's certificate", RequireSignature)
	}
	if f := r.Format(); (f == StreamStrictXOP || f == StreamTrailing) && r.Mode != ResponseStreaming {
		ps.add(strictKey, "%s only applies to mode %s", r.Format(), ResponseStreaming)
	}
	if r.EncryptForRequester && r.Mode == ResponseStreaming {
		// Encrypting the Body of an MTOM response would hide its
		// xop:Include elements inside the EncryptedData, away from the
		// parts they name; strictXOP protects the streamed signature.
		ps.add(key+".encryptForRequester", "is not supported with mode %s (use strictXOP, or mode %s)", ResponseStreaming, ResponseBuffered)
	}
}

func (r Responses) validateKey(ps *Problems, key string) {
	switch {
	case r.CertFile == "":
		ps.add(key+".certFile", "is required when responses.sign is true")
		return
	case r.KeyFile == "":
		ps.add(key+".keyFile", "is required when responses.sign is true")
		return
	}
	if _, err := crypto.LoadKeyPair(r.KeyOptions()); err != nil {
		ps.add(key+".certFile", "cannot load the signing key pair: %v", err)
	}
}
