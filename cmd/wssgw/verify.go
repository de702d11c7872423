package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// verifyFlags are the options of `wssgw verify`.
type verifyFlags struct {
	config    string
	policy    string
	now       string
	plaintext string
	json      bool
	// contentType, when set, reads MSG as an MTOM/SwA package of that
	// type; key decrypts a strict trailing signature.
	contentType string
	key         string
	// expect are the request SignatureValues (base64, "" for an unsigned
	// request) the response must confirm (WSS 1.1 §8.5).
	expect []string
}

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify --config FILE --policy NAME [--now RFC3339] [--plaintext FILE] [--json] [flags] MSG.xml",
		Short: "Verify a secured message offline as the gateway would, and explain the verdict",
		Long: "verify runs one message through the same gate, engine and policy check as the\n" +
			"gateway (the configuration's xml limits and the policy's trust, decryption keys\n" +
			"and algorithm allow-list; the replay store is not consulted) and prints the\n" +
			"verified facts, then the plaintext the backend would receive (or writes it to\n" +
			"--plaintext FILE). A rejected message prints\n\n" +
			"  rejected: <reason>: <detail>\n\n" +
			"on standard error with the precise reason the gateway's uniform fault hides,\n" +
			"and exits with status 1. MSG.xml may be - for standard input.",
		Example: "  wssgw verify -c config.example.yaml --policy partner-a secured.xml\n" +
			"  wssgw verify -c config.example.yaml --now 2026-01-02T03:04:05Z --json old.xml\n" +
			"  wssgw verify -c client.yaml --content-type \"$(cat response.ct)\" [--key partner.key] response.mime\n" +
			"  wssgw verify -c client.yaml --expect-confirmation \"$REQUEST_SIGNATURE_VALUE\" response.xml",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, &f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.config, "config", "c", "wssgw.yaml", "configuration file (YAML); its policies are enough, routes are not needed")
	fl.StringVar(&f.policy, "policy", "", "policy to verify against (may be left out when the configuration has one)")
	fl.StringVar(&f.now, "now", "", "verify as at this time (RFC 3339) instead of the current time")
	fl.StringVar(&f.plaintext, "plaintext", "", "write the plaintext to this file instead of standard output")
	fl.BoolVar(&f.json, "json", false, "print the facts as one JSON object (with the plaintext, unless --plaintext)")
	fl.StringVar(&f.contentType, "content-type", "", "MSG is a MIME package (MTOM/SwA) with this multipart/related Content-Type; a streamed response's trailing signature is put back first")
	fl.StringVar(&f.key, "key", "", "PEM private key of the requester, to decrypt a strict-XOP trailing signature")
	fl.StringArrayVar(&f.expect, "expect-confirmation", nil, "a response must carry signed SignatureConfirmations of exactly these request SignatureValues (base64; \"\" for an unsigned request); repeat for each")
	return cmd
}

func runVerify(cmd *cobra.Command, f *verifyFlags, in string) error {
	cfg, err := loadClientConfig(f.config, cmd.Flags())
	if err != nil {
		return err
	}
	name, _, err := pickPolicy(cfg, f.policy)
	if err != nil {
		return err
	}
	now := time.Now()
	if f.now != "" {
		if now, err = time.Parse(time.RFC3339, f.now); err != nil {
			return fmt.Errorf("--now: want RFC 3339 (2006-01-02T15:04:05Z): %w", err)
		}
	}
	expect, err := decodeExpected(f.expect)
	if err != nil {
		return err
	}
	msg, err := readInput(cmd, in)
	if err != nil {
		return err
	}
	v, err := newVerifier(cfg, name)
	if err != nil {
		return err
	}
	var (
		res   *wss.Result
		plain []byte
		rerr  *wss.Error
	)
	if f.contentType != "" {
		key, err := loadDecrypter(f.key)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		if res, plain, rerr, err = v.verifyPackage(ctx, msg, f.contentType, key, now); err != nil {
			return err
		}
	} else {
		res, plain, rerr = v.verify(cmd.Context(), msg, now)
	}
	if rerr == nil && cmd.Flags().Changed("expect-confirmation") {
		rerr = checkConfirmations(res, expect)
	}
	out := cmd.OutOrStdout()
	if rerr != nil {
		detail := rerr.Detail
		if rerr.Err != nil {
			detail += ": " + rerr.Err.Error()
		}
		if f.json {
			if err := writeJSON(out, &verifyReport{Verified: false, Policy: name, Reason: rerr.Reason.String(), Detail: detail}); err != nil {
				return err
			}
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "rejected: %s: %s\n", rerr.Reason, detail)
		return exitError{}
	}
	rep := report(name, res)
	rep.PlaintextBytes = len(plain)
	if f.plaintext != "" {
		if err := writeOutput(cmd, f.plaintext, plain, 0o600); err != nil {
			return err
		}
		rep.PlaintextFile = f.plaintext
	}
	if f.json {
		if f.plaintext == "" {
			rep.Plaintext = string(plain)
		}
		return writeJSON(out, rep)
	}
	if err := rep.writeText(out); err != nil {
		return err
	}
	if f.plaintext == "" {
		fmt.Fprintf(out, "\n")
		if _, err := out.Write(plain); err != nil {
			return err
		}
		if !bytes.HasSuffix(plain, []byte("\n")) {
			fmt.Fprintln(out)
		}
	}
	return nil
}

// verifier is the security stage of a route, built the way the gateway
// builds it, without a replay store.
type verifier struct {
	policy *wss.Policy
	engine *dom.Engine
	// gate is the gateway's gate for what the policy forwards unparsed.
	gate *xmlscan.Scanner
}

func newVerifier(cfg *config.Config, name string) (*verifier, error) {
	p, err := wss.Compile(name, cfg.Policies[name], nil, reload.Options{})
	if err != nil {
		return nil, err
	}
	sc := xmlscan.DefaultConfig()
	sc.Limits = cfg.XML.Limits(policyMaxBody(cfg, name))
	e, err := dom.New(sc)
	if err != nil {
		return nil, err
	}
	gate, err := xmlscan.NewScanner(sc)
	if err != nil {
		return nil, err
	}
	return &verifier{policy: p, engine: e, gate: gate}, nil
}

// policyMaxBody is the largest maxBodyBytes of the routes using the policy
// (the gate's byte limit), or the default when no route uses it.
func policyMaxBody(cfg *config.Config, name string) config.ByteSize {
	var limit config.ByteSize
	for _, r := range cfg.Routes {
		if r.Policy == name && r.MaxBodyBytes > limit {
			limit = r.MaxBodyBytes
		}
	}
	if limit == 0 {
		limit = config.DefaultRoute().MaxBodyBytes
	}
	return limit
}

// verify processes msg as the gateway's security stage does. res is nil
// when the message was forwarded without parsing (a policy requiring
// nothing and no WS-Security in the message).
func (v *verifier) verify(ctx context.Context, msg []byte, now time.Time) (res *wss.Result, plain []byte, rejected *wss.Error) {
	if ctx == nil {
		ctx = context.Background()
	}
	res, plain, err := v.policy.Verify(ctx, v.engine, msg, now)
	if err == nil && res == nil {
		err = v.gateUnparsed(plain)
	}
	if err != nil {
		var we *wss.Error
		errors.As(err, &we)
		return nil, nil, we
	}
	return res, plain, nil
}

// gateUnparsed gates what a policy requiring nothing forwards unparsed, as
// the gateway does (issue 13).
func (v *verifier) gateUnparsed(msg []byte) error {
	var d xmlscan.Document
	if err := v.gate.Scan(msg, &d); err != nil {
		return wss.Wrap(wss.ReasonMalformed, err, "gate")
	}
	return nil
}

// verifyReport is what verify prints: the verified facts.
type verifyReport struct {
	Verified    bool             `json:"verified"`
	Policy      string           `json:"policy"`
	Reason      string           `json:"reason,omitempty"`
	Detail      string           `json:"detail,omitempty"`
	Secured     bool             `json:"secured"`
	SOAPVersion string           `json:"soapVersion,omitempty"`
	Signatures  []signatureFacts `json:"signatures,omitempty"`
	Digests     []string         `json:"digestAlgorithms,omitempty"`
	Decrypted   []decryptedFacts `json:"decrypted,omitempty"`
	Timestamp   *timestampFacts  `json:"timestamp,omitempty"`
	Username    *usernameFacts   `json:"username,omitempty"`
	// Confirmations are the response's SignatureConfirmations.
	Confirmations []confirmationFacts `json:"signatureConfirmations,omitempty"`
	// Stripped is the unsigned content the policy left out of the
	// plaintext: "header {namespace}local", "attribute {namespace}local"
	// (unsignedHeaders: strip) or "comment".
	Stripped       []string `json:"stripped,omitempty"`
	PlaintextFile  string   `json:"plaintextFile,omitempty"`
	PlaintextBytes int      `json:"plaintextBytes"`
	Plaintext      string   `json:"plaintext,omitempty"`
}

type signatureFacts struct {
	Signer       *signerFacts `json:"signer,omitempty"`
	KeyReference string       `json:"keyReference"`
	Algorithm    string       `json:"algorithm"`
	C14N         string       `json:"c14n"`
	KeyBits      int          `json:"keyBits,omitempty"`
	Covers       []string     `json:"covers"`
}

type signerFacts struct {
	Subject  string    `json:"subject"`
	Issuer   string    `json:"issuer"`
	Serial   string    `json:"serial"`
	SHA256   string    `json:"sha256"`
	NotAfter time.Time `json:"notAfter"`
	Pinned   bool      `json:"pinned,omitempty"`
}

type decryptedFacts struct {
	Part         string `json:"part"`
	Content      bool   `json:"content"`
	Algorithm    string `json:"algorithm"`
	KeyTransport string `json:"keyTransport,omitempty"`
}

type timestampFacts struct {
	Created time.Time  `json:"created"`
	Expires *time.Time `json:"expires,omitempty"`
}

type usernameFacts struct {
	Username string    `json:"username"`
	Password string    `json:"password"` // "digest" or "text"
	Created  time.Time `json:"created,omitzero"`
}

func report(policy string, r *wss.Result) *verifyReport {
	rep := &verifyReport{Verified: true, Policy: policy}
	if r == nil {
		return rep
	}
	rep.Secured = r.Security[0] >= 0
	rep.SOAPVersion = r.Version.String()
	for _, s := range r.Signatures {
		sf := signatureFacts{KeyReference: s.KeyReference, Algorithm: s.Method, C14N: s.C14N, KeyBits: s.KeyBits, Covers: []string{}}
		if id := s.Signer; id != nil {
			sf.Signer = &signerFacts{Subject: id.Subject, Issuer: id.Issuer, Serial: id.SerialNumber, SHA256: id.SHA256, NotAfter: id.NotAfter.UTC(), Pinned: id.Pinned}
		}
		for _, c := range s.Covered {
			sf.Covers = append(sf.Covers, partName(r, c))
		}
		rep.Signatures = append(rep.Signatures, sf)
	}
	for _, u := range r.Algorithms {
		if u.Kind == wss.UseDigest && !contains(rep.Digests, u.Value) {
			rep.Digests = append(rep.Digests, u.Value)
		}
	}
	for _, d := range r.Decrypted {
		rep.Decrypted = append(rep.Decrypted, decryptedFacts{Part: partName(r, d.Start), Content: d.Content, Algorithm: d.Algorithm, KeyTransport: d.KeyTransport})
	}
	if ts := r.Timestamp; ts != nil {
		rep.Timestamp = &timestampFacts{Created: ts.Created.UTC()}
		if !ts.Expires.IsZero() {
			e := ts.Expires.UTC()
			rep.Timestamp.Expires = &e
		}
	}
	rep.Confirmations = confirmationReport(r)
	for _, u := range r.Stripped {
		what := u.Kind
		if u.Kind != wss.UnsignedComment {
			what += " {" + u.Name.Space + "}" + u.Name.Local
		}
		rep.Stripped = append(rep.Stripped, what)
	}
	if u := r.Username; u != nil {
		rep.Username = &usernameFacts{Username: u.Username, Password: "text", Created: u.Created.UTC()}
		if u.Digest {
			rep.Username.Password = "digest"
		}
	}
	return rep
}

// partName names the element starting at offset start of the plaintext
// document: Body, Timestamp, UsernameToken, BinarySecurityToken, a header
// block's {namespace}local, or else its tag and offset.
func partName(r *wss.Result, start int) string {
	switch {
	case start == r.Body:
		return config.PartBody
	case r.Timestamp != nil && start == r.Timestamp.Start:
		return config.PartTimestamp
	case r.Username != nil && start == r.Username.Start:
		return config.PartUsernameToken
	case r.Token >= 0 && start == r.Token:
		return config.PartToken
	}
	for _, h := range r.Headers {
		if h.Start == start {
			return "{" + h.Name.Space + "}" + h.Name.Local
		}
	}
	return tagAt(r.Document, start) + "@" + strconv.Itoa(start)
}

// tagAt returns the qualified name of the start tag at offset i.
func tagAt(doc []byte, i int) string {
	if i < 0 || i >= len(doc) || doc[i] != '<' {
		return "element"
	}
	end := i + 1
	for end < len(doc) && !strings.ContainsRune(" \t\r\n/>", rune(doc[end])) {
		end++
	}
	return string(doc[i+1 : end])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// algorithm shows a URI with its short label when it has one.
func algorithm(uri string) string {
	if l := crypto.AlgorithmLabel(uri); l != crypto.LabelOther {
		return l + " (" + uri + ")"
	}
	return uri
}

// writeText prints the facts as aligned "name  value" lines.
func (rep *verifyReport) writeText(w io.Writer) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("verified", "yes, policy %s", rep.Policy)
	if rep.SOAPVersion == "" {
		row("security", "none: forwarded as received (the policy requires nothing)")
	} else {
		row("soap", "%s", rep.SOAPVersion)
		if !rep.Secured {
			row("security", "no Security header")
		}
	}
	for i, s := range rep.Signatures {
		row(fmt.Sprintf("signature %d", i+1), "")
		if id := s.Signer; id != nil {
			row("  subject", "%s", id.Subject)
			row("  issuer", "%s", id.Issuer)
			row("  serial", "%s", id.Serial)
			row("  sha256", "%s", id.SHA256)
			row("  not after", "%s", id.NotAfter.Format(time.RFC3339))
			if id.Pinned {
				row("  trusted", "pinned")
			}
		} else {
			row("  signer", "none (HMAC with a key from an EncryptedKey)")
		}
		row("  key reference", "%s", s.KeyReference)
		row("  algorithm", "%s", algorithm(s.Algorithm))
		row("  c14n", "%s", algorithm(s.C14N))
		if s.KeyBits > 0 {
			row("  key bits", "%d", s.KeyBits)
		}
		row("  covers", "%s", strings.Join(s.Covers, ", "))
	}
	for _, d := range rep.Digests {
		row("digest", "%s", algorithm(d))
	}
	for i, d := range rep.Decrypted {
		what := "element"
		if d.Content {
			what = "content"
		}
		row(fmt.Sprintf("decrypted %d", i+1), "%s (%s)", d.Part, what)
		row("  algorithm", "%s", algorithm(d.Algorithm))
		if d.KeyTransport != "" {
			row("  key transport", "%s", algorithm(d.KeyTransport))
		}
	}
	if ts := rep.Timestamp; ts != nil {
		row("timestamp", "created %s", ts.Created.Format(time.RFC3339Nano))
		if ts.Expires != nil {
			row("", "expires %s", ts.Expires.Format(time.RFC3339Nano))
		}
	}
	for i, c := range rep.Confirmations {
		v, signed := c.Value, "signed"
		if v == "" {
			v = "no Value (the request was not signed)"
		}
		if !c.Signed {
			signed = "NOT signed"
		}
		row(fmt.Sprintf("confirmation %d", i+1), "%s (%s)", v, signed)
	}
	if u := rep.Username; u != nil {
		row("username", "%s (password %s)", u.Username, u.Password)
	}
	for _, u := range rep.Stripped {
		row("not forwarded", "%s (no trusted signature covers it)", u)
	}
	if rep.PlaintextFile != "" {
		row("plaintext", "%d bytes written to %s", rep.PlaintextBytes, rep.PlaintextFile)
	} else {
		row("plaintext", "%d bytes follow", rep.PlaintextBytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Rows without a value leave the padding of the name column behind.
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \n")
		if strings.HasSuffix(l, "\n") {
			lines[i] += "\n"
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, ""))
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
