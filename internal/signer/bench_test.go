package signer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkSecure measures a 4 KiB envelope: four gate scans (input and
// three passes), exc-c14n of Body, Timestamp and SignedInfo, and one
// private-key operation, which dominates for RSA.
func BenchmarkSecure(b *testing.B) {
	p := testPKI(b)
	env := soapEnv(false, 4096, "")
	for _, bc := range []struct {
		name string
		o    func() Options
	}{
		{"rsa2048", func() Options { return opts(p.rsa) }},
		{"ecdsa-p256", func() Options { return opts(p.ec) }},
		{"rsa2048-encrypt", func() Options { o := opts(p.rsa); o.EncryptFor = p.server.Cert; return o }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := bc.o()
			b.SetBytes(int64(len(env)))
			b.ReportAllocs()
			for b.Loop() {
				_, err := Secure(env, o)
				require.NoError(b, err)
			}
		})
	}
}
