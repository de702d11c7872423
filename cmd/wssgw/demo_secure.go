package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/demo"
	"github.com/wssgw/wssgw/internal/signer"
)

// demoWalkthrough shows the security pipeline on the first secured route:
// a request signed and encrypted with the demo partner key goes through, the
// same request with one ciphertext byte changed is rejected. It writes both
// messages to dir so the user can send them again with curl.
func demoWalkthrough(out io.Writer, cfg *config.Config, configDir, base, dir string) error {
	var route *config.Route
	for i := range cfg.Routes {
		if cfg.Routes[i].Policy != config.PolicyNone {
			route = &cfg.Routes[i]
			break
		}
	}
	if route == nil {
		return nil
	}
	keys := filepath.Join(configDir, "examples", "keys")
	partner, err := crypto.LoadKeyPair(crypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		fmt.Fprintf(out, "(no demo partner key in %s: skipping the secured walkthrough)\n", keys)
		return nil
	}
	env, err := os.ReadFile(filepath.Join(configDir, "examples", "orders-soap11.xml"))
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
	tampered := tamperCipherValue(secured)
	files := map[string][]byte{"secured.xml": secured, "tampered.xml": tampered}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	url := base + route.Path
	fmt.Fprintf(out, "Route %s uses policy %q. The demo partner signed (and encrypted) examples/orders-soap11.xml:\n\n", route.Name, route.Policy)
	for _, name := range []string{"secured.xml", "tampered.xml"} {
		status, summary := demoPost(url, files[name])
		fmt.Fprintf(out, "  %-13s -> HTTP %d  %s\n", name, status, summary)
	}
	fmt.Fprintf(out, "\nSend them yourself (wssgw sign makes more; wssgw verify explains a rejection):\n\n")
	fmt.Fprintf(out, "  curl -sS -H 'Content-Type: text/xml; charset=utf-8' --data-binary @%s %s\n\n", filepath.Join(dir, "secured.xml"), url)
	return nil
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
