package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateResponses(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeKeyPair(t, dir)
	const k = "policies.p.responses"
	signing := func(r *Responses) { r.Sign, r.CertFile, r.KeyFile = true, cert, key }
	tests := map[string]struct {
		require []string // the policy's require; nil = [signature, timestamp]
		mutate  func(r *Responses)
		want    []string
	}{
		"ok/off":      {mutate: func(*Responses) {}},
		"ok/buffered": {mutate: signing},
		"ok/buffered-everything": {mutate: func(r *Responses) {
			signing(r)
			r.KeyReference, r.SignatureConfirmation, r.EncryptForRequester = KeyRefIssuerSerial, true, true
		}},
		"ok/streaming-strict": {mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.Attachments, r.StrictXOP = ResponseStreaming, AttachSwAComplete, true
		}},
		"ok/streaming-auto-without-request-signature": {require: []string{}, mutate: func(r *Responses) {
			signing(r)
			r.Mode = ResponseStreaming // auto: signed as buffered without a requester to encrypt for
		}},
		"ok/streaming-trailing": {require: []string{}, mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.StreamFormat = ResponseStreaming, StreamTrailing
		}},
		"ok/streaming-strict-both-spellings": {mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.StreamFormat, r.StrictXOP = ResponseStreaming, StreamStrictXOP, true
		}},
		"ok/confirmation-without-request-signature": {require: []string{}, mutate: func(r *Responses) {
			signing(r)
			r.SignatureConfirmation = true // WSS 1.1 §8.5: one element without Value
		}},
		"fail/sign-without-cert": {mutate: func(r *Responses) { r.Sign = true }, want: []string{k + ".certFile"}},
		"fail/sign-without-key": {mutate: func(r *Responses) { r.Sign, r.CertFile = true, cert },
			want: []string{k + ".keyFile"}},
		"fail/key-mismatch": {mutate: func(r *Responses) { r.Sign, r.CertFile, r.KeyFile = true, key, cert },
			want: []string{k + ".certFile"}},
		"fail/missing-file": {mutate: func(r *Responses) { signing(r); r.KeyFile = filepath.Join(dir, "none") },
			want: []string{k + ".certFile"}},
		"fail/enums": {mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.KeyReference, r.Attachments, r.StreamFormat = "chunked", "x509", "dime", "strictXOP"
		}, want: []string{k + ".mode", k + ".keyReference", k + ".attachments", k + ".streamFormat"}},
		"fail/strict-and-trailing": {mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.StreamFormat, r.StrictXOP = ResponseStreaming, StreamTrailing, true
		}, want: []string{k + ".strictXOP"}},
		"fail/strict-format-without-request-signature": {require: []string{}, mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.StreamFormat = ResponseStreaming, StreamStrictXOP
		}, want: []string{k + ".streamFormat"}},
		"fail/trailing-buffered": {mutate: func(r *Responses) { signing(r); r.StreamFormat = StreamTrailing },
			want: []string{k + ".streamFormat"}},
		"fail/limits": {mutate: func(r *Responses) { signing(r); r.TimestampTTL, r.MaxBufferedSize = 0, 0 },
			want: []string{k + ".timestampTTL", k + ".maxBufferedSize"}},
		"fail/options-without-sign": {mutate: func(r *Responses) {
			r.CertFile, r.SignatureConfirmation, r.EncryptForRequester, r.StrictXOP = cert, true, true, true
		}, want: []string{k + ".certFile", k + ".signatureConfirmation", k + ".encryptForRequester", k + ".strictXOP"}},
		"fail/encrypt-without-request-signature": {require: []string{RequireTimestamp}, mutate: func(r *Responses) {
			signing(r)
			r.EncryptForRequester = true
		}, want: []string{k + ".encryptForRequester"}},
		"fail/strict-without-request-signature": {require: []string{}, mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.StrictXOP = ResponseStreaming, true
		}, want: []string{k + ".strictXOP"}},
		"fail/strict-buffered": {mutate: func(r *Responses) { signing(r); r.StrictXOP = true },
			want: []string{k + ".strictXOP"}},
		"fail/encrypt-streaming": {mutate: func(r *Responses) {
			signing(r)
			r.Mode, r.EncryptForRequester = ResponseStreaming, true
		}, want: []string{k + ".encryptForRequester"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			p := DefaultPolicy()
			p.Trust.CAFiles = []string{cert}
			if tc.require != nil {
				p.Require = tc.require
			}
			tc.mutate(&p.Responses)
			c.Policies = map[string]Policy{"p": p}
			c.Routes[0].Policy = "p"
			assert.ElementsMatch(t, tc.want, problemKeys(t, c))
		})
	}
}

func TestApplyDefaultsResponses(t *testing.T) {
	c := valid()
	c.Policies = map[string]Policy{"p": {Responses: Responses{Mode: ResponseStreaming}}}
	c.ApplyDefaults()
	r := c.Policies["p"].Responses
	assert.Equal(t, ResponseStreaming, r.Mode, "a set value is kept")
	d := DefaultResponses()
	assert.Equal(t, d.KeyReference, r.KeyReference)
	assert.Equal(t, d.Attachments, r.Attachments)
	assert.Equal(t, d.TimestampTTL, r.TimestampTTL)
	assert.Equal(t, d.MaxBufferedSize, r.MaxBufferedSize)
}
