// Command peers measures wssgw against Apache WSS4J and libxmlsec1 as
// receivers of the same WS-Security messages (issue 18): WSS4J (through
// the project's peer, interop/wss4j) secures N orders per profile, then
// each receiver verifies (and for sign+encrypt first decrypts) all of them
// for some rounds after a warm-up:
//
//   - wssgw: its template path in this process (internal/template, keys
//     loaded as the gateway loads them), once with this build's crypto
//     backend and, with -openssl, once more in a copy of this command built
//     with -tags openssl;
//   - WSS4J: the peer's bench command (interop/wss4j Bench.java), keys
//     loaded once, processSecurityHeader per message, in one JVM;
//   - libxmlsec1: python-xmlsec on lxml (receive.py beside this file), in
//     the zeep peer's venv (interop/zeep).
//
// "Per core" is CPU time per message: user + system time of the receiver's
// process, every thread (GC, JIT), over the measured rounds only, each
// receiver timing itself after its warm-up rounds (JIT, template
// learning). CPU time, unlike wall time, is what one core
// spends, even on a machine shared with other work. It prints the table
// and the ratios against the goals (sign+encrypt: wssgw >= 3.5x WSS4J,
// >= 2x libxmlsec1).
//
//	go run ./bench/peers                      # N=64, 3 rounds, + the openssl build
//	go run ./bench/peers -repeat 3            # each receiver 3 times in turn, medians
//	go run ./bench/peers -n 16 -rounds 1      # quick
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/template"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

type options struct {
	n, rounds, warmup int
	jvmWarmup, repeat int
	keys, dir         string
	openssl           bool
	measure           string // internal: measure wssgw on the files in this directory, print JSON
	signedAt          string // the messages' wsu:Created (RFC 3339): wssgw's clock is 1 s after it
}

// profiles are the WSS4J peer's profiles measured: sign-only and
// sign-then-encrypt (Body content AES-256-GCM, key RSA-OAEP mgf1p).
var profiles = []string{"sign-bst", "sign-encrypt"}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 64, "messages per profile (distinct orders, WSS4J-secured)")
	flag.IntVar(&o.rounds, "rounds", 3, "measured rounds over all messages")
	flag.IntVar(&o.warmup, "warmup", 10, "unmeasured rounds before (JIT, template learning)")
	flag.IntVar(&o.repeat, "repeat", 1, "measure every receiver this many times, in turn, and report the median (load on a shared host moves between receivers)")
	flag.IntVar(&o.jvmWarmup, "jvm-warmup", 8000, "at least this many unmeasured messages for WSS4J (its JIT keeps speeding up for thousands)")
	flag.StringVar(&o.keys, "keys", "testdata/wss4j/keys", "ca.crt, client.{crt,key} (signer), server.{crt,key} (recipient)")
	flag.StringVar(&o.dir, "dir", "", "keep the messages here (default: a temporary directory, removed)")
	flag.BoolVar(&o.openssl, "openssl", true, "also measure wssgw built with -tags openssl (needs cgo, libssl-dev)")
	flag.StringVar(&o.measure, "measure", "", "internal: measure wssgw on DIR/<profile>/*.xml and print JSON")
	flag.StringVar(&o.signedAt, "signed-at", "", "internal, with -measure: the messages' wsu:Created")
	flag.Parse()
	var err error
	if o.measure != "" {
		err = measureMode(o)
	} else {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(1)
	}
}

// result is one receiver on one profile.
type result struct {
	Profile   string  `json:"profile"`
	Receiver  string  `json:"receiver"`
	CPUus     float64 `json:"cpu_us_per_msg"`
	Messages  int     `json:"messages"`
	MeanBytes int     `json:"mean_bytes"`
	Runs      string  `json:"-"` // each repetition's cpu-µs/msg, with -repeat
}

func run(o options) error {
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "wssgw-peers-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	keys, err := filepath.Abs(o.keys)
	if err != nil {
		return err
	}
	jar, err := script("interop/build.sh", "wss4j")
	if err != nil {
		return fmt.Errorf("WSS4J peer: %w", err)
	}
	py, err := script("interop/zeep/setup.sh")
	if err != nil {
		return fmt.Errorf("python-xmlsec venv: %w", err)
	}
	fmt.Printf("securing %d orders per profile with WSS4J...\n", o.n)
	o.signedAt = time.Now().UTC().Format(time.RFC3339)
	files, err := secure(jar, keys, dir, o.n, o.signedAt)
	if err != nil {
		return err
	}
	var all [][]result
	for range max(o.repeat, 1) {
		rs, err := measureAll(o, jar, py, keys, dir, files)
		if err != nil {
			return err
		}
		all = append(all, rs)
	}
	rs := median(all)
	report(o, rs)
	return nil
}

// measureAll measures every receiver once, on both profiles.
func measureAll(o options, jar, py, keys, dir string, files map[string][]string) ([]result, error) {
	var rs []result
	own, err := measureWSSGW(o, keys, files)
	if err != nil {
		return nil, fmt.Errorf("wssgw (%s): %w", crypto.Backend(), err)
	}
	rs = append(rs, own...)
	if o.openssl && crypto.Backend() != "openssl" {
		ors, err := measureOpenSSLBuild(o, keys, dir)
		if err != nil {
			return nil, fmt.Errorf("wssgw (openssl build): %w", err)
		}
		rs = append(rs, ors...)
	}
	for _, p := range profiles {
		r, err := measureWSS4J(o, jar, keys, p, files[p])
		if err != nil {
			return nil, fmt.Errorf("WSS4J %s: %w", p, err)
		}
		rs = append(rs, r)
		r, err = measureXMLSec(o, py, keys, p, files[p])
		if err != nil {
			return nil, fmt.Errorf("libxmlsec1 %s: %w", p, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// median is, per profile and receiver, the result with the median CPU
// time over the repetitions (all in the same order).
func median(all [][]result) []result {
	out := make([]result, len(all[0]))
	for i := range out {
		vs := make([]result, len(all))
		for j, rs := range all {
			vs[j] = rs[i]
		}
		sort.Slice(vs, func(a, b int) bool { return vs[a].CPUus < vs[b].CPUus })
		out[i] = vs[len(vs)/2]
		if len(all) > 1 {
			var each []string
			for _, rs := range all {
				each = append(each, fmt.Sprintf("%.0f", rs[i].CPUus))
			}
			out[i].Runs = strings.Join(each, " / ")
		}
	}
	return out
}

// script runs a repository script that prints a path (the peer's jar, the
// venv's python).
func script(path string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("bash", append([]string{path}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", path, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// order is a plain SOAP 1.1 envelope of about 1.3 KiB, an order with 6
// items: about 4.7 KiB signed by WSS4J and 7 KiB signed and encrypted,
// the sizes of issue 18's table.
func order(n int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header/><soapenv:Body>`)
	fmt.Fprintf(&b, `<ns1:placeOrder xmlns:ns1="urn:example:orders"><ns1:orderId>%d</ns1:orderId><ns1:customer type="retail">Customer &amp; Co %d</ns1:customer>`, 100000+n, n)
	for i := range 6 {
		fmt.Fprintf(&b, `<ns1:item qty="%d" sku="SKU-%d-%d"><ns1:name>Widget %d for order %d</ns1:name><ns1:price currency="EUR">%d.%d</ns1:price></ns1:item>`, i+n%5+1, i, n, i, n, 10+i*3, n%10)
	}
	b.WriteString(`</ns1:placeOrder></soapenv:Body></soapenv:Envelope>`)
	return []byte(b.String())
}

// secure has WSS4J secure n orders per profile in one JVM; it returns the
// files by profile.
func secure(jar, keys, dir string, n int, now string) (map[string][]string, error) {
	var jobs bytes.Buffer
	enc := json.NewEncoder(&jobs)
	files := map[string][]string{}
	for _, p := range profiles {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			return nil, err
		}
		for i := range n {
			in := filepath.Join(dir, fmt.Sprintf("order-%04d.xml", i))
			if err := os.WriteFile(in, order(i), 0o600); err != nil {
				return nil, err
			}
			out := filepath.Join(dir, p, fmt.Sprintf("%04d.xml", i))
			args := []string{"sign", "--profile", p, "--in", in, "--out", out, "--now", now, "--ttl", "3600",
				"--key", filepath.Join(keys, "client.key"), "--cert", filepath.Join(keys, "client.crt")}
			if p == "sign-encrypt" {
				args = append(args, "--encrypt-cert", filepath.Join(keys, "server.crt"))
			}
			if err := enc.Encode(map[string]any{"id": out, "args": args}); err != nil {
				return nil, err
			}
			files[p] = append(files[p], out)
		}
	}
	if err := batch(jar, jobs.Bytes()); err != nil {
		return nil, err
	}
	return files, nil
}

// batch runs the WSS4J peer's batch mode on jobs; every job must succeed.
func batch(jar string, jobs []byte) error {
	var stderr bytes.Buffer
	cmd := exec.Command("java", "-jar", jar, "batch", "--parallel", "1")
	cmd.Stdin, cmd.Stderr = bytes.NewReader(jobs), &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || !r.OK {
			return fmt.Errorf("WSS4J job failed: %s", sc.Text())
		}
	}
	return nil
}

// measureWSS4J runs the peer's bench command: WSS4J as a server runs it
// (keys and trust loaded once; per message a DOM parse and
// processSecurityHeader: decryption, signature, Timestamp), which times
// its own measured rounds.
func measureWSS4J(o options, jar, keys, profile string, files []string) (result, error) {
	warm := max(o.warmup, (o.jvmWarmup+len(files)-1)/len(files))
	args := []string{"-jar", jar, "bench", "--ca", filepath.Join(keys, "ca.crt"),
		"--rounds", fmt.Sprint(o.rounds), "--warmup", fmt.Sprint(warm)}
	if profile == "sign-encrypt" {
		args = append(args, "--key", filepath.Join(keys, "server.key"), "--cert", filepath.Join(keys, "server.crt"))
	}
	for _, f := range files {
		args = append(args, "--in", f)
	}
	var r struct {
		OK    bool    `json:"ok"`
		Error string  `json:"error"`
		CPUus float64 `json:"cpu_us_per_msg"`
	}
	if err := runJSON(exec.Command("java", args...), &r); err != nil {
		return result{}, err
	}
	if !r.OK {
		return result{}, errors.New(r.Error)
	}
	return result{Profile: profile, Receiver: "Apache WSS4J 4.0.0", CPUus: r.CPUus, Messages: len(files), MeanBytes: meanSize(files)}, nil
}

// runJSON runs cmd and decodes its stdout into v.
func runJSON(cmd *exec.Cmd, v any) error {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%q: %v: %s", out, err, stderr.String())
	}
	return nil
}

// measureXMLSec runs receive.py (python-xmlsec on libxmlsec1), which
// times its own measured rounds.
func measureXMLSec(o options, py, keys, profile string, files []string) (result, error) {
	args := []string{"bench/peers/receive.py", "--cert", filepath.Join(keys, "client.crt"),
		"--rounds", fmt.Sprint(o.rounds), "--warmup", fmt.Sprint(o.warmup)}
	if profile == "sign-encrypt" {
		args = append(args, "--key", filepath.Join(keys, "server.key"))
	}
	var r struct {
		CPUus      float64 `json:"cpu_us_per_msg"`
		LibXMLSec1 []int   `json:"libxmlsec1"`
	}
	if err := runJSON(exec.Command(py, append(args, files...)...), &r); err != nil {
		return result{}, fmt.Errorf("receive.py: %w", err)
	}
	v := strings.Trim(strings.ReplaceAll(fmt.Sprint(r.LibXMLSec1), " ", "."), "[]")
	return result{Profile: profile, Receiver: "libxmlsec1 " + v + " (python-xmlsec)", CPUus: r.CPUus, Messages: len(files), MeanBytes: meanSize(files)}, nil
}

// measureOpenSSLBuild measures wssgw again in this command built with
// -tags openssl.
func measureOpenSSLBuild(o options, keys, dir string) ([]result, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", "run", "-tags", "openssl", "./bench/peers", "-measure", dir, "-keys", keys, "-signed-at", o.signedAt,
		"-rounds", fmt.Sprint(o.rounds), "-warmup", fmt.Sprint(o.warmup))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	var rs []result
	if err := json.Unmarshal(out, &rs); err != nil {
		return nil, fmt.Errorf("%q: %v", out, err)
	}
	return rs, nil
}

// measureMode is -measure: wssgw on the files another run made.
func measureMode(o options) error {
	files := map[string][]string{}
	for _, p := range profiles {
		fs, err := filepath.Glob(filepath.Join(o.measure, p, "*.xml"))
		if err != nil || len(fs) == 0 {
			return fmt.Errorf("no messages in %s/%s", o.measure, p)
		}
		files[p] = fs
	}
	rs, err := measureWSSGW(o, o.keys, files)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(rs)
}

// measureWSSGW runs wssgw's template path (the gateway's request path
// without HTTP) over the files: warm-up rounds (the first message of a
// shape is learned on the DOM engine), then the measured rounds, which
// must all be template hits.
func measureWSSGW(o options, keys string, files map[string][]string) ([]result, error) {
	p := config.DefaultPolicy()
	p.Replay = "off" // the same messages come round again
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: filepath.Join(keys, "server.crt"), KeyFile: filepath.Join(keys, "server.key")}}
	pol, err := wss.Compile("bench", p, nil, reload.Options{})
	if err != nil {
		return nil, err
	}
	d, err := dom.New(xmlscan.DefaultConfig())
	if err != nil {
		return nil, err
	}
	var rs []result
	for _, prof := range profiles {
		store := template.NewStore(pol, template.Options{MaxTemplates: 1000, MaxBytes: 64 << 20, LearnPerSecond: 1e9, LearnBurst: 1e9}, nil)
		eng, err := template.New(d, xmlscan.DefaultConfig(), store, nil)
		if err != nil {
			return nil, err
		}
		msgs := make([][]byte, len(files[prof]))
		for i, f := range files[prof] {
			if msgs[i], err = os.ReadFile(f); err != nil {
				return nil, err
			}
		}
		// The gateway's clock 1 s after the messages were made: a long
		// run (-repeat) must not see them expire.
		signed, err := time.Parse(time.RFC3339, o.signedAt)
		if err != nil {
			return nil, fmt.Errorf("-signed-at: %w", err)
		}
		now := signed.Add(time.Second)
		for range o.warmup {
			for i, m := range msgs {
				if _, err := eng.Process(m, pol, now); err != nil {
					return nil, fmt.Errorf("%s: %w", files[prof][i], err)
				}
			}
		}
		start := proc.SelfCPU()
		for range o.rounds {
			for i, m := range msgs {
				res, err := eng.Process(m, pol, now)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", files[prof][i], err)
				}
				if res.Lookup != metrics.LookupHit {
					return nil, errors.New(files[prof][i] + ": not a template hit after warm-up: " + res.Lookup)
				}
			}
		}
		cpu := proc.SelfCPU() - start
		rs = append(rs, result{Profile: prof, Receiver: "wssgw template path, crypto " + crypto.Backend(),
			CPUus: float64(cpu.Microseconds()) / float64(o.rounds*len(msgs)), Messages: len(msgs), MeanBytes: meanSize(files[prof])})
	}
	return rs, nil
}

func meanSize(files []string) int {
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return int(n / int64(max(len(files), 1)))
}

// report prints one table per profile: CPU µs per message, messages per
// core-second, and how many times faster the fastest wssgw build is than
// each peer, against the goals for sign+encrypt.
func report(o options, rs []result) {
	fmt.Printf("\n%d messages per profile, %d measured rounds after %d warm-up (WSS4J: at least %d messages); CPU time per message (one core), median of %d\n",
		o.n, o.rounds, o.warmup, o.jvmWarmup, max(o.repeat, 1))
	for _, p := range profiles {
		var best float64
		for _, r := range rs {
			if r.Profile == p && strings.HasPrefix(r.Receiver, "wssgw") && (best == 0 || r.CPUus < best) {
				best = r.CPUus
			}
		}
		fmt.Printf("\n%s\n", p)
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "receiver\tbytes\tcpu-µs/msg\tmsgs/core-s\t÷ fastest wssgw\trepetitions\t")
		for _, r := range rs {
			if r.Profile != p {
				continue
			}
			fmt.Fprintf(w, "%s\t%d\t%.1f\t%.0f\t%.2f×\t%s\t\n", r.Receiver, r.MeanBytes, r.CPUus, 1e6/r.CPUus, r.CPUus/best, r.Runs)
		}
		_ = w.Flush()
		if p == "sign-encrypt" {
			for _, r := range rs {
				switch {
				case r.Profile != p:
				case strings.HasPrefix(r.Receiver, "Apache WSS4J"):
					fmt.Printf("goal wssgw >= 3.5x WSS4J per core: %.2fx %s\n", r.CPUus/best, verdict(r.CPUus/best >= 3.5))
				case strings.HasPrefix(r.Receiver, "libxmlsec1"):
					fmt.Printf("goal wssgw >= 2x libxmlsec1 per core: %.2fx %s\n", r.CPUus/best, verdict(r.CPUus/best >= 2))
				}
			}
		}
	}
}

func verdict(ok bool) string {
	if ok {
		return "(met)"
	}
	return "(NOT met)"
}
