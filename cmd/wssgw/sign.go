package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
)

// signFlags are the options of `wssgw sign`.
type signFlags struct {
	config       string
	policy       string
	key, cert    string
	encryptFor   string
	keyReference string
	ttl          time.Duration
	out          string
}

func newSignCmd() *cobra.Command {
	var f signFlags
	cmd := &cobra.Command{
		Use:   "sign --config FILE --policy NAME --key KEY.pem --cert CERT.pem [flags] IN.xml",
		Short: "Secure a plain SOAP envelope as a partner would (client-side test tool)",
		Long: "sign adds a WS-Security header to a plain SOAP 1.1/1.2 envelope the way a\n" +
			"partner's stack would: a wsu:Timestamp, the signing certificate's token\n" +
			"reference, an XML Signature over the Body, the Timestamp and the header blocks\n" +
			"the policy wants signed, and, with --encrypt-for, the Body content encrypted\n" +
			"for a recipient certificate (sign-then-encrypt).\n\n" +
			"--key and --cert are the partner's key pair, never the gateway's. The policy\n" +
			"named by --policy is used to check that the message fits it: algorithms on its\n" +
			"allow-list, the parts it wants signed or encrypted. When it requires encryption\n" +
			"and --encrypt-for is not given, the certificate of its first decryptionKeys\n" +
			"entry is used. IN.xml may be - for standard input.",
		Example: "  wssgw sign -c config.example.yaml --policy partner-a \\\n" +
			"    --key examples/keys/partner.key --cert examples/keys/partner.crt \\\n" +
			"    --encrypt-for examples/keys/gateway.crt examples/orders-soap11.xml > secured.xml",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSign(cmd, &f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.config, "config", "c", "wssgw.yaml", "configuration file (YAML); its policies are enough, routes are not needed")
	fl.StringVar(&f.policy, "policy", "", "policy the message is meant for (may be left out when the configuration has one)")
	fl.StringVar(&f.key, "key", "", "signing private key, PEM (required)")
	fl.StringVar(&f.cert, "cert", "", "signing certificate (chain), PEM (required)")
	fl.StringVar(&f.encryptFor, "encrypt-for", "", "encrypt the Body content for this RSA certificate, PEM")
	fl.StringVar(&f.keyReference, "key-reference", signer.RefBST, "how the signature names its certificate: bst, issuer-serial, ski or thumbprint")
	fl.DurationVar(&f.ttl, "ttl", 5*time.Minute, "Timestamp lifetime; 0 leaves the Timestamp out")
	fl.StringVarP(&f.out, "out", "o", "-", "output file; - is standard output")
	_ = cmd.MarkFlagRequired("key")
	_ = cmd.MarkFlagRequired("cert")
	return cmd
}

func runSign(cmd *cobra.Command, f *signFlags, in string) error {
	cfg, err := loadClientConfig(f.config, cmd.Flags())
	if err != nil {
		return err
	}
	name, pol, err := pickPolicy(cfg, f.policy)
	if err != nil {
		return err
	}
	if f.ttl < 0 {
		return fmt.Errorf("--ttl must not be negative, got %s", f.ttl)
	}
	kp, err := crypto.LoadKeyPair(crypto.KeyFileOptions{CertFile: f.cert, KeyFile: f.key, MinRSABits: pol.Trust.MinRSABits})
	if err != nil {
		return fmt.Errorf("--key/--cert: %w", err)
	}
	envelope, err := readInput(cmd, in)
	if err != nil {
		return err
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.Chain = kp.Signer, kp.Certificate, kp.Chain
	o.KeyReference = f.keyReference
	o.TTL = f.ttl
	if f.ttl == 0 {
		o.TTL = -1
	}
	stderr := cmd.ErrOrStderr()
	if f.encryptFor == "" && needsBodyEncryption(pol) {
		cert, file, err := policyEncryptionCert(pol)
		if err != nil {
			return fmt.Errorf("policy %s requires encryption: %w", name, err)
		}
		fmt.Fprintf(stderr, "sign: policy %s requires encryption: encrypting for %s (%s)\n", name, cert.Subject, file)
		o.EncryptFor = cert
	} else if f.encryptFor != "" {
		certs, err := crypto.LoadCertificates(f.encryptFor)
		if err != nil {
			return fmt.Errorf("--encrypt-for: %w", err)
		}
		o.EncryptFor = certs[0]
	}
	if err := fitPolicy(name, pol, &o, stderr); err != nil {
		return err
	}
	out, err := signer.Secure(envelope, o)
	if err != nil {
		return err
	}
	return writeOutput(cmd, f.out, out, 0o644)
}

// pickPolicy returns the named policy, or the only one when name is empty.
func pickPolicy(cfg *config.Config, name string) (string, config.Policy, error) {
	names := make([]string, 0, len(cfg.Policies))
	for n := range cfg.Policies {
		names = append(names, n)
	}
	sort.Strings(names)
	if name == "" {
		if len(names) != 1 {
			return "", config.Policy{}, fmt.Errorf("--policy is required: the configuration has %d policies (%s)", len(names), strings.Join(names, ", "))
		}
		name = names[0]
	}
	p, ok := cfg.Policies[name]
	if !ok {
		return "", config.Policy{}, fmt.Errorf("--policy %s: no such policy in the configuration (have: %s)", name, strings.Join(names, ", "))
	}
	return name, p, nil
}

// needsBodyEncryption reports whether the policy wants an encrypted Body.
func needsBodyEncryption(p config.Policy) bool {
	if p.Has(config.RequireEncryption) {
		return true
	}
	for _, part := range p.EncryptedParts {
		if part == config.PartBody {
			return true
		}
	}
	return false
}

// policyEncryptionCert returns the certificate of the policy's first
// decryption key: the one partners encrypt for.
func policyEncryptionCert(p config.Policy) (*x509.Certificate, string, error) {
	if len(p.DecryptionKeys) == 0 {
		return nil, "", errors.New("give --encrypt-for: the policy has no decryptionKeys")
	}
	k := p.DecryptionKeys[0]
	if k.CertFile != "" {
		certs, err := crypto.LoadCertificates(k.CertFile)
		if err != nil {
			return nil, "", err
		}
		return certs[0], k.CertFile, nil
	}
	kp, err := crypto.LoadKeyPair(k.Options())
	if err != nil {
		return nil, "", err
	}
	return kp.Certificate, k.PKCS12File, nil
}

// fitPolicy checks the signing choices against the policy. What would make
// the gateway reject the message for certain is an error; what depends on
// the gateway's key material (trust, certificate indexes) is a note on
// stderr, so that a deliberately unacceptable message can still be made.
func fitPolicy(name string, p config.Policy, o *signer.Options, stderr io.Writer) error {
	var ps []string
	bad := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	note := func(format string, args ...any) { fmt.Fprintf(stderr, "sign: note: "+format+"\n", args...) }

	if p.Role != "" {
		bad("the policy expects the Security header for role %q; sign writes one without role", p.Role)
	}
	if p.Has(config.RequireUsernameToken) {
		bad("the policy requires a UsernameToken, which sign does not write")
	}
	if o.TTL < 0 && p.Has(config.RequireTimestamp) {
		bad("the policy requires a Timestamp: --ttl must not be 0")
	}
	for _, part := range p.RequiredSignedParts() {
		switch part {
		case config.PartBody:
		case config.PartTimestamp:
			if o.TTL < 0 {
				bad("the policy wants the Timestamp signed: --ttl must not be 0")
			}
		case config.PartUsernameToken, config.PartToken:
			bad("the policy wants %s signed, which sign does not do", part)
		default:
			if space, local, ok := config.ParseQName(part); ok {
				o.SignHeaders = append(o.SignHeaders, xml.Name{Space: space, Local: local})
			}
		}
	}
	for _, part := range p.EncryptedParts {
		if part != config.PartBody {
			bad("the policy wants header %s encrypted; sign encrypts the Body only", part)
		}
	}

	// The algorithm allow-list, from the policy without its key material.
	shell := p
	shell.Trust, shell.DecryptionKeys, shell.UsernameToken.CredentialsFile = config.Trust{}, nil, ""
	cp, err := wss.Compile(name, shell, nil, crypto.ReloadOptions{})
	if err != nil {
		return err
	}
	o.SignatureAlgorithm = firstAllowed(cp, wss.UseSignature, signatureAlgorithms(o.Signer.Public())...)
	if o.SignatureAlgorithm == "" {
		bad("the policy allows no signature algorithm for a %s key", keyKind(o.Signer.Public()))
	}
	o.DigestAlgorithm = firstAllowed(cp, wss.UseDigest, crypto.AlgDigestSHA256, crypto.AlgDigestSHA384, crypto.AlgDigestSHA512)
	if o.DigestAlgorithm == "" {
		bad("the policy allows none of the digests sign offers (SHA-256/384/512)")
	}
	if o.EncryptFor != nil {
		if _, ok := o.EncryptFor.PublicKey.(*rsa.PublicKey); !ok {
			bad("--encrypt-for needs an RSA certificate, got a %s key", keyKind(o.EncryptFor.PublicKey))
		}
		o.DataAlgorithm = firstAllowed(cp, wss.UseData, crypto.AlgAES256GCM, crypto.AlgAES128GCM, crypto.AlgAES192GCM)
		if o.DataAlgorithm == "" {
			bad("the policy allows none of the data encryption algorithms sign offers (AES-GCM)")
		}
		o.KeyTransport = crypto.AlgRSAOAEPMGF1P
		if !cp.Allows(wss.UseKeyTransport, o.KeyTransport) {
			bad("the policy does not allow key transport %s, the only one sign offers", o.KeyTransport)
		}
		checkRecipient(p, o.EncryptFor, note)
	}
	if len(ps) > 0 {
		return fmt.Errorf("the message would not fit policy %s:\n  %s", name, strings.Join(ps, "\n  "))
	}
	checkSignerTrust(p, o, note)
	return nil
}

// checkRecipient notes when no decryption key of the policy belongs to the
// certificate the Body is encrypted for.
func checkRecipient(p config.Policy, c *x509.Certificate, note func(string, ...any)) {
	for _, k := range p.DecryptionKeys {
		if k.CertFile == "" {
			return // PKCS#12: not read without need
		}
		certs, err := crypto.LoadCertificates(k.CertFile)
		if err == nil && len(certs) > 0 && certs[0].Equal(c) {
			return
		}
	}
	note("no decryptionKeys entry of the policy is for %s: the gateway will not decrypt", c.Subject)
}

// checkSignerTrust notes when the policy's trust settings would not accept
// the signing certificate or resolve its reference.
func checkSignerTrust(p config.Policy, o *signer.Options, note func(string, ...any)) {
	t := p.Trust
	if len(t.CAFiles)+len(t.PinnedCertFiles)+len(t.PinnedSHA256)+len(t.KnownCertFiles) == 0 {
		if p.Has(config.RequireSignature) {
			note("the policy trusts no certificate: the signature will not be accepted")
		}
		return
	}
	ts, err := crypto.NewTrustStore(t.TrustOptions())
	if err != nil {
		note("cannot load the policy's trust settings: %v", err)
		return
	}
	var inter []*x509.Certificate
	if len(o.Chain) > 1 {
		inter = o.Chain[1:]
	}
	if _, err := ts.Verify(o.Certificate, inter, time.Now(), crypto.PurposeSigning); err != nil {
		note("the policy does not trust the signing certificate %s: %v", o.Certificate.Subject, err)
	}
	if o.KeyReference != signer.RefBST {
		tp := sha1.Sum(o.Certificate.Raw)
		if _, err := ts.Index().ByThumbprintSHA1(tp[:]); err != nil {
			note("--key-reference %s: the signing certificate is not in the policy's knownCertFiles or pinnedCertFiles, so the gateway cannot resolve the reference", o.KeyReference)
		}
	}
}

// signatureAlgorithms lists the methods sign can use with a key, preferred
// first.
func signatureAlgorithms(pub any) []string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return []string{crypto.AlgRSASHA256, crypto.AlgRSASHA384, crypto.AlgRSASHA512}
	case *ecdsa.PublicKey:
		// The hash matching the curve strength first (FIPS 186-5 §6.4).
		if k.Curve.Params().BitSize == 384 {
			return []string{crypto.AlgECDSASHA384, crypto.AlgECDSASHA512, crypto.AlgECDSASHA256}
		}
		return []string{crypto.AlgECDSASHA256, crypto.AlgECDSASHA384, crypto.AlgECDSASHA512}
	case ed25519.PublicKey:
		return []string{crypto.AlgEd25519}
	}
	return nil
}

func keyKind(pub any) string {
	switch pub.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "ECDSA"
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", pub)
}

func firstAllowed(p *wss.Policy, kind string, uris ...string) string {
	for _, u := range uris {
		if p.Allows(kind, u) {
			return u
		}
	}
	return ""
}

// readInput reads a file, or standard input for "-".
func readInput(cmd *cobra.Command, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(cmd.InOrStdin())
	}
	return os.ReadFile(name)
}

// writeOutput writes a file, or standard output for "" and "-".
func writeOutput(cmd *cobra.Command, name string, data []byte, perm os.FileMode) error {
	if name == "" || name == "-" {
		_, err := cmd.OutOrStdout().Write(data)
		return err
	}
	return os.WriteFile(name, data, perm)
}
