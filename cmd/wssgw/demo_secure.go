package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/demo"
	"github.com/wssgw/wssgw/internal/signer"
)

// demoWalkthrough shows the security pipeline on the first secured route:
// a request signed and encrypted with the demo partner key goes through, the
// same request with one ciphertext byte changed is rejected. Then it prints
// a command line that signs the example afresh and sends it: a saved
// message could not be sent again (replay, then an expired Timestamp).
func demoWalkthrough(out io.Writer, cfg *config.Config, configFile, exe, base string) error {
	route := firstSecuredRoute(cfg)
	if route == nil {
		return nil
	}
	d := newDemoPartner(cfg, configFile, route)
	partner, err := crypto.LoadKeyPair(crypto.KeyFileOptions{CertFile: d.cert, KeyFile: d.key})
	if err != nil {
		fmt.Fprintf(out, "(no demo partner key in %s: skipping the secured walkthrough)\n", filepath.Dir(d.key))
		return nil
	}
	env, err := os.ReadFile(d.envelope)
	if err != nil {
		return err
	}
	opts := signer.DefaultOptions()
	opts.Signer, opts.Certificate = partner.Signer, partner.Certificate
	if p := cfg.Policies[route.Policy]; len(p.DecryptionKeys) > 0 {
		kp, err := crypto.LoadKeyPair(p.DecryptionKeys[0].Options())
		if err != nil {
			return err
		}
		opts.EncryptFor = kp.Certificate
	}
	secured, err := signer.Secure(env, opts)
	if err != nil {
		return err
	}
	url := base + route.Path
	fmt.Fprintf(out, "Route %s uses policy %q. The demo partner signed (and encrypted) %s:\n\n", route.Name, route.Policy, d.envelope)
	for _, m := range []struct {
		name string
		body []byte
	}{{"secured.xml", secured}, {"tampered.xml", tamperCipherValue(secured)}} {
		status, summary := demoPost(url, m.body)
		fmt.Fprintf(out, "  %-13s -> HTTP %d  %s\n", m.name, status, summary)
	}
	fmt.Fprintf(out, "\nSign a fresh one and send it (each run makes a new Timestamp and signature;\n"+
		"wssgw verify explains a rejection):\n\n%s\n\n", d.resendCommand(exe, url))
	return nil
}

func firstSecuredRoute(cfg *config.Config) *config.Route {
	for i := range cfg.Routes {
		if cfg.Routes[i].Policy != config.PolicyNone {
			return &cfg.Routes[i]
		}
	}
	return nil
}

// demoPartner is what the demo partner signs with: the files beside the
// configuration (examples/keys, examples/orders-soap11.xml).
type demoPartner struct {
	configFile, policy string
	key, cert          string
	encryptFor         string // the policy's first decryption certificate, if any
	envelope           string
}

func newDemoPartner(cfg *config.Config, configFile string, route *config.Route) demoPartner {
	dir := filepath.Dir(configFile)
	keys := filepath.Join(dir, "examples", "keys")
	d := demoPartner{
		configFile: configFile, policy: route.Policy,
		key: filepath.Join(keys, "partner.key"), cert: filepath.Join(keys, "partner.crt"),
		envelope: filepath.Join(dir, "examples", "orders-soap11.xml"),
	}
	if p := cfg.Policies[route.Policy]; len(p.DecryptionKeys) > 0 {
		d.encryptFor = p.DecryptionKeys[0].CertFile
	}
	return d
}

// signArgs are the arguments of the wssgw sign command that secures the
// example for the route's policy.
func (d demoPartner) signArgs() []string {
	args := []string{"sign", "--config", d.configFile, "--policy", d.policy, "--key", d.key, "--cert", d.cert}
	if d.encryptFor != "" {
		args = append(args, "--encrypt-for", d.encryptFor)
	}
	return append(args, d.envelope)
}

// resendCommand is a shell pipeline: exe signs the example afresh, curl
// posts it to url.
func (d demoPartner) resendCommand(exe, url string) string {
	return "  " + shellJoin(append([]string{exe}, d.signArgs()...)) + " \\\n" +
		"    | curl -sS -H 'Content-Type: text/xml; charset=utf-8' -H " +
		shellQuote("SOAPAction: \""+demo.NS+"/PlaceOrder\"") + " --data-binary @- " + shellQuote(url)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

var cipherValue = regexp.MustCompile(`<xenc:CipherValue>([A-Za-z0-9+/])`)

// tamperCipherValue flips one base64 character of the last CipherValue (the
// Body), or of the message when nothing is encrypted.
func tamperCipherValue(msg []byte) []byte {
	out := bytes.Clone(msg)
	locs := cipherValue.FindAllSubmatchIndex(out, -1)
	i := len(out) / 2
	if len(locs) > 0 {
		i = locs[len(locs)-1][2] + 40
	}
	if out[i] == 'A' {
		out[i] = 'B'
	} else {
		out[i] = 'A'
	}
	return out
}

var faultString = regexp.MustCompile(`<(?:faultstring|[a-z0-9]+:Text)[^>]*>([^<]*)<`)

func demoPost(url string, body []byte) (int, string) {
	client := &http.Client{Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"`+demo.NS+`/PlaceOrder"`)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if m := faultString.FindSubmatch(b); m != nil {
		return resp.StatusCode, "fault: " + string(m[1])
	}
	if bytes.Contains(b, []byte("PlaceOrderResponse")) {
		return resp.StatusCode, "accepted: the backend received the verified plaintext and answered PlaceOrderResponse"
	}
	return resp.StatusCode, string(b)
}
