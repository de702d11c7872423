package config

import "time"

// The security requirements a policy may list under require.
const (
	RequireSignature     = "signature"
	RequireEncryption    = "encryption"
	RequireTimestamp     = "timestamp"
	RequireUsernameToken = "usernameToken"
)

// Parts a policy may list under signedParts or encryptedParts, besides
// header block QNames written as "{namespace}local".
const (
	PartBody          = "Body"
	PartTimestamp     = "Timestamp"
	PartUsernameToken = "UsernameToken"
	PartToken         = "BinarySecurityToken"
)

// Values of a policy's unsignedHeaders: what happens to the header blocks
// and the Envelope and Header attributes that no trusted signature covers.
const (
	UnsignedStrip   = "strip"   // removed before forwarding (the default)
	UnsignedReject  = "reject"  // the message is rejected
	UnsignedForward = "forward" // forwarded as received
)

// Policy is what a route requires of the WS-Security header of a request.
// The result of the engines is a list of verified facts; a request passes
// only when those facts meet every requirement here (DESIGN.md §5).
type Policy struct {
	// Require lists what must be present and verified: signature,
	// encryption, timestamp, usernameToken. Empty means no requirement:
	// messages without a Security header are forwarded as they are, and a
	// Security header that is present is still verified in full.
	Require []string `mapstructure:"require"`
	// SignedParts must each be covered by a verified signature from a
	// trusted signer: Body, Timestamp, UsernameToken, BinarySecurityToken, or
	// a header block "{namespace}local" (every such block present must be
	// signed, as WS-SecurityPolicy SignedParts/Header says). Empty while
	// signature is required means Body and Timestamp.
	SignedParts []string `mapstructure:"signedParts"`
	// EncryptedParts must each have arrived encrypted: Body (its content) or
	// a header block "{namespace}local".
	EncryptedParts []string `mapstructure:"encryptedParts"`
	// Trust decides which signing certificates are accepted.
	Trust Trust `mapstructure:"trust"`
	// DecryptionKeys are the key pairs whose certificates partners encrypt
	// for; the EncryptedKey's reference picks one.
	DecryptionKeys []KeyFiles `mapstructure:"decryptionKeys"`
	// Algorithms is the exact allow-list checked before any key is used.
	Algorithms Algorithms `mapstructure:"algorithms"`
	// Timestamp bounds the wsu:Timestamp window.
	Timestamp TimestampPolicy `mapstructure:"timestamp"`
	// UsernameToken configures wsse:UsernameToken checking.
	UsernameToken UsernameTokenPolicy `mapstructure:"usernameToken"`
	// Replay is on or off: whether verified signatures and UsernameToken
	// nonces are recorded in the replay store and repeats rejected.
	Replay string `mapstructure:"replay"`
	// KeepSecurityHeader forwards the wsse:Security header to the backend
	// (decrypted); by default it is removed.
	KeepSecurityHeader bool `mapstructure:"keepSecurityHeader"`
	// UnsignedHeaders decides on the header blocks (other than the
	// Security header addressed to wssgw) and the attributes of Envelope
	// and Header (other than namespace declarations) that no trusted X.509
	// signature covers: strip, reject or forward. A backend must never act
	// on what nobody signed (WS-Addressing, tenant, routing headers), so
	// strip is the default.
	UnsignedHeaders string `mapstructure:"unsignedHeaders"`
	// UnsignedAllow lists the header block and attribute QNames,
	// "{namespace}local", that may reach the backend unsigned whatever
	// UnsignedHeaders says.
	UnsignedAllow []string `mapstructure:"unsignedAllow"`
	// DetailedFaults sends the specific WS-Security fault code
	// (wsse:FailedCheck, wsse:MessageExpired ...) instead of the uniform
	// wsse:InvalidSecurity. For debugging with a partner only: specific
	// codes help an attacker (security.md D1).
	DetailedFaults bool `mapstructure:"detailedFaults"`
	// Role is the SOAP 1.2 role (SOAP 1.1 actor) of the Security header
	// addressed to wssgw; empty means the header without role or actor.
	Role string `mapstructure:"role"`
	// Responses says how the backend's responses are signed (and
	// encrypted) on the way back.
	Responses Responses `mapstructure:"responses"`
}

// Trust decides which certificates sign for a policy. Certificates in
// messages are only lookup hints; they are trusted after chain validation
// against CAFiles or a pin (DESIGN.md §5.5).
type Trust struct {
	CAFiles           []string `mapstructure:"caFiles"`
	IntermediateFiles []string `mapstructure:"intermediateFiles"`
	PinnedCertFiles   []string `mapstructure:"pinnedCertFiles"`
	PinnedSHA256      []string `mapstructure:"pinnedSHA256"`
	// KnownCertFiles are partner certificates indexed for references by
	// IssuerSerial, SKI or thumbprint (messages without a BST); they are
	// not trusted by themselves.
	KnownCertFiles []string `mapstructure:"knownCertFiles"`
	CRLFiles       []string `mapstructure:"crlFiles"`
	SubjectPattern string   `mapstructure:"subjectPattern"`
	SANPatterns    []string `mapstructure:"sanPatterns"`
	MinRSABits     int      `mapstructure:"minRSABits"`
	// OCSP checks the revocation of partner (leaf) certificates with their
	// CA's OCSP responder, from responses fetched in the background.
	OCSP OCSP `mapstructure:"ocsp"`
}

// OCSP is a policy's OCSP revocation checking (ocsp.go).
type OCSP struct {
	Enabled bool `mapstructure:"enabled"`
	// ResponderURL replaces the responder named in the certificates'
	// Authority Information Access (e.g. a local OCSP cache or proxy).
	ResponderURL string `mapstructure:"responderURL"`
	// Refresh is how often each response is fetched again (sooner when
	// its NextUpdate comes first).
	Refresh time.Duration `mapstructure:"refresh"`
	// MaxStaleness is the grace after a response's NextUpdate in which it
	// still counts, for responder outages; 0 = none.
	MaxStaleness time.Duration `mapstructure:"maxStaleness"`
	Timeout      time.Duration `mapstructure:"timeout"` // per fetch
	// OnUnknown decides a certificate the responder does not know, or
	// whose status is not fetched yet (cold cache, responder unreachable
	// since start, no responder): reject or accept.
	OnUnknown string `mapstructure:"onUnknown"`
	// OnStale decides a certificate whose last response is past
	// NextUpdate plus MaxStaleness: reject or accept. Revoked is always
	// rejected.
	OnStale string `mapstructure:"onStale"`
}

// KeyFiles names a key pair in PEM files or one PKCS#12 file.
type KeyFiles struct {
	CertFile     string `mapstructure:"certFile"`
	KeyFile      string `mapstructure:"keyFile"`
	PKCS12File   string `mapstructure:"pkcs12File"`
	PasswordFile string `mapstructure:"passwordFile"`
}

// Algorithms is a policy's algorithm allow-list.
type Algorithms struct {
	// Allow replaces the default modern set (RSA-SHA256+, RSA-PSS, ECDSA,
	// Ed25519, HMAC-SHA256+, SHA-256+, exc-c14n, RSA-OAEP, AES-GCM; no
	// kw-aes key wrap, which nothing unwraps: issue 15) when not empty.
	// Entries are algorithm URIs.
	Allow []string `mapstructure:"allow"`
	// Legacy opts in to algorithms the default refuses.
	Legacy Legacy `mapstructure:"legacy"`
}

// Legacy algorithms, each off by default (DESIGN.md §5.2).
type Legacy struct {
	// SHA1 allows SHA-1 digests and RSA/ECDSA/HMAC-SHA1 signatures.
	SHA1 bool `mapstructure:"sha1"`
	// CBC allows AES-CBC data encryption (padding oracle, Jager and
	// Somorovsky 2011; failures stay uniform).
	CBC bool `mapstructure:"cbc"`
	// RSA15 allows RSA PKCS#1 v1.5 key transport (Bleichenbacher; a failed
	// unwrap yields a random key).
	RSA15 bool `mapstructure:"rsa15"`
	// InclusiveC14N allows inclusive C14N 1.0/1.1 (BSP R5404 requires
	// exclusive C14N).
	InclusiveC14N bool `mapstructure:"inclusiveC14N"`
}

// TimestampPolicy bounds the wsu:Timestamp window (WSS 1.1 §10).
type TimestampPolicy struct {
	// MaxAge rejects a Timestamp whose Created is older than this.
	MaxAge time.Duration `mapstructure:"maxAge"`
	// FutureSkew tolerates a Created this far in the future (clock skew).
	FutureSkew time.Duration `mapstructure:"futureSkew"`
	// RequireExpires rejects a Timestamp without Expires.
	RequireExpires bool `mapstructure:"requireExpires"`
}

// UsernameTokenPolicy configures UsernameToken checking.
type UsernameTokenPolicy struct {
	// CredentialsFile holds one "username:password" per line.
	CredentialsFile string `mapstructure:"credentialsFile"`
	// AllowPasswordText accepts PasswordText (the password in clear);
	// only PasswordDigest is accepted otherwise.
	AllowPasswordText bool `mapstructure:"allowPasswordText"`
	// MaxAge bounds the age of the token's Created.
	MaxAge time.Duration `mapstructure:"maxAge"`
}

// IdentityHeaders name the HTTP request headers in which a route passes the
// verified identity to the backend. Incoming headers of these names are
// always removed first, so a client cannot forge them.
type IdentityHeaders struct {
	Subject    string `mapstructure:"subject"`    // signer subject DN (RFC 4514)
	Thumbprint string `mapstructure:"thumbprint"` // SHA-256 of the signer certificate, hex
	Username   string `mapstructure:"username"`   // verified UsernameToken username
}

// Replay configures the replay store shared by every policy.
type Replay struct {
	// Store is memory (per process) or redis (shared by replicas).
	Store string `mapstructure:"store"`
	// MaxEntries bounds the memory store; when full it fails closed.
	MaxEntries int `mapstructure:"maxEntries"`
	// Redis is used when Store is redis.
	Redis Redis `mapstructure:"redis"`
}

// Redis is the connection to a shared replay store. It fails closed: when
// Redis is unreachable, secured requests are rejected.
type Redis struct {
	Addr         string        `mapstructure:"addr"`
	Username     string        `mapstructure:"username"`
	PasswordFile string        `mapstructure:"passwordFile"`
	DB           int           `mapstructure:"db"`
	KeyPrefix    string        `mapstructure:"keyPrefix"`
	Timeout      time.Duration `mapstructure:"timeout"`
	TLS          bool          `mapstructure:"tls"`
	CAFile       string        `mapstructure:"caFile"`
}

// XMLLimits bound what one message may claim of the strict XML gate
// (DESIGN.md §5.1); the byte limit is each route's maxBodyBytes.
type XMLLimits struct {
	MaxDepth        int      `mapstructure:"maxDepth"`
	MaxAttrs        int      `mapstructure:"maxAttrs"`
	MaxNameLen      int      `mapstructure:"maxNameLen"`
	MaxNSDecls      int      `mapstructure:"maxNSDecls"`
	MaxElements     int      `mapstructure:"maxElements"`
	MaxTextBytes    ByteSize `mapstructure:"maxTextBytes"`
	MaxBase64Bytes  ByteSize `mapstructure:"maxBase64Bytes"`
	MaxReferences   int      `mapstructure:"maxReferences"`
	MaxTransforms   int      `mapstructure:"maxTransforms"`
	MaxSignatures   int      `mapstructure:"maxSignatures"`
	MaxAttrValueLen ByteSize `mapstructure:"maxAttrValueBytes"`
	// MaxEncryptedKeys and MaxEncryptedData bound the XML Encryption
	// elements of a message: each EncryptedKey may cost a private-key
	// operation, each EncryptedData a decryption and a pass of the whole
	// message through the gate (xmlscan.Limits).
	MaxEncryptedKeys int `mapstructure:"maxEncryptedKeys"`
	MaxEncryptedData int `mapstructure:"maxEncryptedData"`
}

// RequiredSignedParts returns SignedParts, or Body and Timestamp when a
// signature is required and none are listed.
func (p Policy) RequiredSignedParts() []string {
	if len(p.SignedParts) == 0 && p.Has(RequireSignature) {
		return []string{PartBody, PartTimestamp}
	}
	return p.SignedParts
}

// Has reports whether p requires r.
func (p Policy) Has(r string) bool {
	for _, x := range p.Require {
		if x == r {
			return true
		}
	}
	return false
}

// DefaultPolicy returns a policy with every default set: a signed Body and
// Timestamp from a trusted signer, modern algorithms, replay checks on.
func DefaultPolicy() Policy {
	return Policy{
		Require: []string{RequireSignature, RequireTimestamp},
		Timestamp: TimestampPolicy{
			MaxAge:     5 * time.Minute,
			FutureSkew: time.Minute,
		},
		UsernameToken:   UsernameTokenPolicy{MaxAge: 5 * time.Minute},
		Trust:           Trust{OCSP: DefaultOCSP()},
		Replay:          "on",
		UnsignedHeaders: UnsignedStrip,
		Responses:       DefaultResponses(),
	}
}
