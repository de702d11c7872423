package wss

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseDateTimeRef is ParseDateTime by way of time.Parse: the reference
// the hand-written parser must agree with.
func parseDateTimeRef(s string) (time.Time, bool) {
	const base = len("2006-01-02T15:04:05")
	if len(s) < base+1 || len(s) > base+11 || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	for k, c := range []byte(s[:base]) {
		want := "dddd-dd-ddTdd:dd:dd"[k]
		if (want == 'd' && (c < '0' || c > '9')) || (want != 'd' && c != want) {
			return time.Time{}, false
		}
	}
	layout := "2006-01-02T15:04:05"
	if frac := s[base : len(s)-1]; frac != "" {
		if len(frac) < 2 || frac[0] != '.' || strings.Trim(frac[1:], "0123456789") != "" {
			return time.Time{}, false
		}
		layout += "." + strings.Repeat("9", len(frac)-1)
	}
	t, err := time.Parse(layout+"Z07:00", s)
	return t.UTC(), err == nil
}

func TestParseDateTime(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     time.Time
	}{
		{"ok/seconds", "2026-11-21T08:37:05Z", time.Date(2026, 11, 21, 8, 37, 5, 0, time.UTC)},
		{"ok/millis", "2026-11-21T08:37:05.123Z", time.Date(2026, 11, 21, 8, 37, 5, 123e6, time.UTC)},
		{"ok/nanos", "2026-11-21T08:37:05.123456789Z", time.Date(2026, 11, 21, 8, 37, 5, 123456789, time.UTC)},
		{"ok/leap-day", "2024-02-29T00:00:00Z", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"ok/year-2000-leap", "2000-02-29T23:59:59Z", time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC)},
		{"fail/1900-not-leap", "1900-02-29T00:00:00Z", time.Time{}},
		{"fail/april-31", "2026-04-31T00:00:00Z", time.Time{}},
		{"fail/month-13", "2026-13-01T00:00:00Z", time.Time{}},
		{"fail/day-0", "2026-01-00T00:00:00Z", time.Time{}},
		{"fail/hour-24", "2026-01-01T24:00:00Z", time.Time{}},
		{"fail/leap-second", "2016-12-31T23:59:60Z", time.Time{}},
		{"fail/offset", "2026-11-21T08:37:05+00:00", time.Time{}},
		{"fail/no-zone", "2026-11-21T08:37:05", time.Time{}},
		{"fail/empty-fraction", "2026-11-21T08:37:05.Z", time.Time{}},
		{"fail/ten-digit-fraction", "2026-11-21T08:37:05.1234567890Z", time.Time{}},
		{"fail/sign", "+2026-11-21T08:37:05Z", time.Time{}},
		{"fail/letter", "2026-11-2xT08:37:05Z", time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseDateTime(c.in)
			ref, ok := parseDateTimeRef(c.in)
			assert.Equal(t, ok, err == nil, "agrees with time.Parse")
			if c.want.IsZero() {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.True(t, c.want.Equal(got), "%v", got)
			assert.True(t, ref.Equal(got))
		})
	}
}

func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"2026-11-21T08:37:05Z", "2024-02-29T00:00:00.5Z", "2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDateTime(s)
		ref, ok := parseDateTimeRef(s)
		if ok != (err == nil) || ok && !ref.Equal(got) {
			t.Fatalf("%q: got %v, %v; time.Parse %v, %v", s, got, err, ref, ok)
		}
		if b, errB := ParseDateTime([]byte(s)); (errB == nil) != (err == nil) || !b.Equal(got) {
			t.Fatalf("%q: []byte and string disagree", s)
		}
	})
}

func BenchmarkParseDateTime(b *testing.B) {
	v := []byte("2026-11-21T08:37:05.123Z")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDateTime(v); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodeBase64 holds the []byte fast path (the decoder skipping line
// ends itself) to the string path (white space stripped first).
func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"QUJD", "QU\nJD", "QU JD", "QUI=", "QUJ=", "\n", "", "QQ==\r\n", "QQ=\n=", "Q\tQ=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, errA := DecodeBase64([]byte(s))
		b, errB := DecodeBase64(s)
		if (errA == nil) != (errB == nil) || string(a) != string(b) {
			t.Fatalf("%q: []byte %q %v, string %q %v", s, a, errA, b, errB)
		}
		// AppendBase64 decodes the same after what dst holds, in room it
		// has or not.
		for _, dst := range [][]byte{nil, []byte("x"), make([]byte, 1, 256)} {
			c, errC := AppendBase64(dst, []byte(s))
			if (errC == nil) != (errA == nil) || (errC == nil && string(c) != string(dst)+string(a)) {
				t.Fatalf("%q: AppendBase64(%q) %q %v, DecodeBase64 %q %v", s, dst, c, errC, a, errA)
			}
		}
	})
}

func TestDecodeBase64(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"ok/plain", "QUJD", "ABC"},
		{"ok/line-ends", "QU\r\nJD", "ABC"},
		{"ok/spaces-and-tabs", " QU\tJD ", "ABC"},
		{"fail/empty", "", ""},
		{"fail/only-white-space", " \n", ""},
		{"fail/bad-padding-bits", "QUJ=", ""},
		{"fail/bad-padding-bits-two", "QR==", ""},
		{"ok/two-padding", "QQ==", "A"},
		{"fail/padding-inside", "QQ==QUJD", ""},
		{"fail/three-padding", "Q===", ""},
		{"ok/digest", "mf2R15MuHOGyoazfqx3rEjdft+eEL5/QBZqPBUyY9y0=", "\x99\xfd\x91\xd7\x93\x2e\x1c\xe1\xb2\xa1\xac\xdf\xab\x1d\xeb\x12\x37\x5f\xb7\xe7\x84\x2f\x9f\xd0\x05\x9a\x8f\x05\x4c\x98\xf7\x2d"},
		{"fail/not-base64", "QU*D", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeBase64([]byte(c.in))
			scratch := make([]byte, 0, 64)
			app, appErr := AppendBase64(scratch, []byte(c.in))
			if c.want == "" {
				require.Error(t, err)
				require.Error(t, appErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			require.NoError(t, appErr)
			assert.Equal(t, c.want, string(app))
			if len(app) > 0 && &app[0] != &scratch[:1][0] {
				t.Errorf("fail/%s: AppendBase64 allocated although dst had room", c.name)
			}
		})
	}
}

// stdStrict is the decoder strictBase64 must equal.
var stdStrict = base64.StdEncoding.Strict()

// checkDecoder compares strictBase64 with encoding/base64's strict decoder
// on s: the same octets, the same count, an error for the same inputs.
func checkDecoder(t *testing.T, s []byte) {
	t.Helper()
	n := base64.StdEncoding.DecodedLen(len(s))
	a, b := make([]byte, n), make([]byte, n)
	na, errA := strictBase64.Decode(a, s)
	nb, errB := stdStrict.Decode(b, s)
	if (errA == nil) != (errB == nil) || (errA == nil && (na != nb || string(a[:na]) != string(b[:nb]))) {
		t.Fatalf("%q: decoded %q (%d) %v, encoding/base64 %q (%d) %v", s, a[:max(na, 0)], na, errA, b[:max(nb, 0)], nb, errB)
	}
}

// FuzzBase64Decoder holds the vector decoder to encoding/base64's.
func FuzzBase64Decoder(f *testing.F) {
	long := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("signature value octets "), 12))
	for _, s := range []string{long, long[:len(long)-1], long[:100] + "\n" + long[100:], long[:60] + "*" + long[61:], "QUJD", "QUJ="} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) { checkDecoder(t, s) })
}

// TestBase64DecoderVector runs the vector decoder's edges: lengths around
// its 45-character threshold and its 32-character blocks, every byte
// outside the alphabet at every offset of a long value, line ends inside
// blocks, padding with non-zero trailing bits after vector blocks.
func TestBase64DecoderVector(t *testing.T) {
	raw := make([]byte, 400)
	for i := range raw {
		raw[i] = byte(i*37 + 11)
	}
	for n := range 300 {
		enc := []byte(base64.StdEncoding.EncodeToString(raw[:n]))
		t.Run("ok", func(t *testing.T) { checkDecoder(t, enc) })
		if len(enc) < 4 {
			continue
		}
		// Non-zero bits after the padding's last character.
		bad := append([]byte(nil), enc...)
		if bad[len(bad)-1] == '=' {
			k := len(bad) - 2
			if bad[k] == '=' {
				k--
			}
			bad[k] = 'B'
			checkDecoder(t, bad)
		}
	}
	enc := []byte(base64.StdEncoding.EncodeToString(raw[:258]))
	for i := range enc {
		for _, c := range []byte{'\n', '\r', ' ', '\t', '*', '-', '_', '=', 0, 0x80, 0xff, '.'} {
			w := append([]byte(nil), enc...)
			w[i] = c
			checkDecoder(t, w)
			w = append(append(append([]byte(nil), enc[:i]...), c), enc[i:]...)
			checkDecoder(t, w)
		}
	}
}

// TestDaysFromCivil compares ParseDateTime's day count with time.Date on
// every day of the years it admits, 0000 to 9999.
func TestDaysFromCivil(t *testing.T) {
	d := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	for d.Year() <= 9999 {
		y, m, day := d.Date()
		if got, want := daysFromCivil(y, int(m), day), d.Unix()/86400; got != want {
			t.Fatalf("%04d-%02d-%02d: %d days, want %d", y, m, day, got, want)
		}
		d = d.AddDate(0, 0, 1)
	}
}
