//go:build openssl

package crypto

/*
#cgo pkg-config: libcrypto
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#if OPENSSL_VERSION_MAJOR < 3
#error "the openssl backend needs OpenSSL 3 (libssl-dev 3.x)"
#endif

// Each function does one whole operation, so a Go call crosses cgo once,
// and clears the calling thread's error queue on every path: OpenSSL's
// error strings never reach wssgw's errors or faults, and a stale entry
// never shows up in another goroutine's call on the same thread.

static EVP_PKEY *wssgw_rsa_load(const unsigned char *der, long len) {
	const unsigned char *p = der;
	EVP_PKEY *k = d2i_PrivateKey(EVP_PKEY_RSA, NULL, &p, len);
	ERR_clear_error();
	return k;
}

static const EVP_MD *wssgw_md(const char *name) {
	const EVP_MD *md = EVP_MD_fetch(NULL, name, NULL);
	ERR_clear_error();
	return md;
}

// padding is RSA_PKCS1_OAEP_PADDING (md, mgf and label used) or
// RSA_NO_PADDING (the raw RSADP of RSA 1.5 with implicit rejection done
// in Go).
static int wssgw_rsa_decrypt(EVP_PKEY *k, int padding, const EVP_MD *md, const EVP_MD *mgf,
		const unsigned char *label, size_t labellen,
		unsigned char *out, size_t *outlen, const unsigned char *in, size_t inlen) {
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL);
	int ok = c != NULL && EVP_PKEY_decrypt_init(c) > 0 && EVP_PKEY_CTX_set_rsa_padding(c, padding) > 0;
	if (ok && padding == RSA_PKCS1_OAEP_PADDING) {
		ok = EVP_PKEY_CTX_set_rsa_oaep_md(c, md) > 0 && EVP_PKEY_CTX_set_rsa_mgf1_md(c, mgf) > 0;
		if (ok && labellen > 0) {
			unsigned char *l = OPENSSL_memdup(label, labellen);
			ok = l != NULL && EVP_PKEY_CTX_set0_rsa_oaep_label(c, l, (int)labellen) > 0;
			if (!ok) {
				OPENSSL_free(l);
			}
		}
	}
	ok = ok && EVP_PKEY_decrypt(c, out, outlen, in, inlen) > 0;
	EVP_PKEY_CTX_free(c);
	ERR_clear_error();
	return ok;
}

// padding is RSA_PKCS1_PADDING or RSA_PKCS1_PSS_PADDING (MGF1 with md).
static int wssgw_rsa_sign(EVP_PKEY *k, int padding, const EVP_MD *md, int saltlen,
		unsigned char *sig, size_t *siglen, const unsigned char *tbs, size_t tbslen) {
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL);
	int ok = c != NULL && EVP_PKEY_sign_init(c) > 0 && EVP_PKEY_CTX_set_rsa_padding(c, padding) > 0 &&
		EVP_PKEY_CTX_set_signature_md(c, md) > 0;
	if (ok && padding == RSA_PKCS1_PSS_PADDING) {
		ok = EVP_PKEY_CTX_set_rsa_pss_saltlen(c, saltlen) > 0 && EVP_PKEY_CTX_set_rsa_mgf1_md(c, md) > 0;
	}
	ok = ok && EVP_PKEY_sign(c, sig, siglen, tbs, tbslen) > 0;
	EVP_PKEY_CTX_free(c);
	ERR_clear_error();
	return ok;
}
*/
import "C"

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"unsafe"
)

const backend = "openssl"

func backendVersion() string { return C.GoString(C.OpenSSL_version(C.OPENSSL_VERSION)) }

// Errors of the OpenSSL keys' own Sign and Decrypt. They say nothing of
// OpenSSL's reason (its queue is cleared, never read): DecryptKey maps
// every decryption failure to ErrDecrypt as it does crypto/rsa's, and Sign
// wraps a signing failure in ErrAlgorithmKey.
var (
	errOpenSSLDecrypt = errors.New("crypto/openssl: decryption error")
	errOpenSSLSign    = errors.New("crypto/openssl: signing failed")
	errOpenSSLOpts    = errors.New("crypto/openssl: unsupported options")
)

// opensslKeysFreed counts the EVP_PKEYs freed after their key pair
// became unreachable (a reload replaced it), for the tests.
var opensslKeysFreed atomic.Int64

// mds are the digests fetched once from the default provider: an implicit
// fetch by name on every operation is a known OpenSSL 3 cost.
var mds = map[crypto.Hash]*C.EVP_MD{}

func init() {
	for h, name := range map[crypto.Hash]string{crypto.SHA1: "SHA1", crypto.SHA224: "SHA2-224",
		crypto.SHA256: "SHA2-256", crypto.SHA384: "SHA2-384", crypto.SHA512: "SHA2-512"} {
		cs := C.CString(name)
		if md := C.wssgw_md(cs); md != nil {
			mds[h] = md
		}
		C.free(unsafe.Pointer(cs))
	}
}

// opensslRSAKey is an RSA private key held by OpenSSL: a crypto.Signer
// and crypto.Decrypter, so the engines and the response signer use it as
// they use *rsa.PrivateKey, and a sessionKeyDecrypter for RSA 1.5. The
// EVP_PKEY is made once when the key is loaded (and on every reload) and
// freed when the key is unreachable; it is only read after that, which
// OpenSSL allows from many threads at once.
type opensslRSAKey struct {
	pub  *rsa.PublicKey
	pkey *C.EVP_PKEY
}

// backendKey moves an RSA private key into OpenSSL; other keys stay with
// crypto/* (not faster in OpenSSL, docs/decisions.md).
func backendKey(s crypto.Signer) (crypto.Signer, error) {
	k, ok := s.(*rsa.PrivateKey)
	if !ok || fipsEnabled() { // FIPS mode: the Go Cryptographic Module only (Backend)
		return s, nil
	}
	der := x509.MarshalPKCS1PrivateKey(k)
	p := C.wssgw_rsa_load((*C.uchar)(unsafe.Pointer(&der[0])), C.long(len(der)))
	clear(der)
	if p == nil {
		return nil, fmt.Errorf("crypto: OpenSSL refused the RSA private key: %w", ErrLoad)
	}
	o := &opensslRSAKey{pub: &k.PublicKey, pkey: p}
	runtime.AddCleanup(o, func(p *C.EVP_PKEY) {
		C.EVP_PKEY_free(p)
		opensslKeysFreed.Add(1)
	}, p)
	return o, nil
}

func (k *opensslRSAKey) Public() crypto.PublicKey { return k.pub }

// Sign signs a digest like (*rsa.PrivateKey).Sign: PKCS#1 v1.5 for a
// crypto.Hash, PSS for *rsa.PSSOptions (salt as long as the hash, or the
// longest for PSSSaltLengthAuto, as crypto/rsa signs it). The randomness
// is OpenSSL's.
func (k *opensslRSAKey) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	h := opts.HashFunc()
	md := mds[h]
	if md == nil || len(digest) != h.Size() {
		return nil, errOpenSSLOpts
	}
	pad, salt := C.int(C.RSA_PKCS1_PADDING), C.int(0)
	if pss, ok := opts.(*rsa.PSSOptions); ok {
		pad = C.RSA_PKCS1_PSS_PADDING
		switch n := pss.SaltLength; {
		case n == rsa.PSSSaltLengthEqualsHash:
			salt = C.RSA_PSS_SALTLEN_DIGEST
		case n == rsa.PSSSaltLengthAuto:
			salt = C.RSA_PSS_SALTLEN_MAX
		case n > 0:
			salt = C.int(n)
		default:
			return nil, errOpenSSLOpts
		}
	}
	sig := make([]byte, k.pub.Size())
	n := C.size_t(len(sig))
	ok := C.wssgw_rsa_sign(k.pkey, pad, md, salt, ptr(sig), &n, ptr(digest), C.size_t(len(digest)))
	runtime.KeepAlive(k)
	if ok == 0 || int(n) != len(sig) {
		return nil, errOpenSSLSign
	}
	return sig, nil
}

// Decrypt does RSA-OAEP only (*rsa.OAEPOptions; MGF1 with Hash when
// MGFHash is 0, as crypto/rsa). PKCS#1 v1.5 goes through
// decryptSessionKey, with implicit rejection; an error here says nothing
// about why.
func (k *opensslRSAKey) Decrypt(_ io.Reader, ciphertext []byte, opts crypto.DecrypterOpts) ([]byte, error) {
	o, ok := opts.(*rsa.OAEPOptions)
	if !ok {
		return nil, errOpenSSLOpts
	}
	mh := o.MGFHash
	if mh == 0 {
		mh = o.Hash
	}
	md, mgf := mds[o.Hash], mds[mh]
	if md == nil || mgf == nil {
		return nil, errOpenSSLOpts
	}
	out := make([]byte, k.pub.Size())
	n := C.size_t(len(out))
	ok2 := C.wssgw_rsa_decrypt(k.pkey, C.RSA_PKCS1_OAEP_PADDING, md, mgf, ptr(o.Label), C.size_t(len(o.Label)),
		ptr(out), &n, ptr(ciphertext), C.size_t(len(ciphertext)))
	runtime.KeepAlive(k)
	if ok2 == 0 {
		clear(out)
		return nil, errOpenSSLDecrypt
	}
	return out[:n], nil
}

// decryptSessionKey is crypto/rsa's DecryptPKCS1v15SessionKey on
// OpenSSL: the raw private-key operation there (OpenSSL 3.0 has no
// implicit rejection of its own; 3.2 adds one with another synthetic key),
// the padding check in constant time here (sessionKeyFromEM), so both
// backends answer every ciphertext alike. key keeps its random content on
// any failure. The ciphertext is read as a big-endian integer as
// crypto/rsa reads it: shorter is left-padded, longer refused.
func (k *opensslRSAKey) decryptSessionKey(ciphertext, key []byte) {
	size := k.pub.Size()
	if size-(len(key)+11) < 0 || len(ciphertext) > size {
		return
	}
	in := ciphertext
	if len(in) < size {
		in = make([]byte, size)
		copy(in[size-len(ciphertext):], ciphertext)
	}
	em := make([]byte, size)
	n := C.size_t(size)
	// Fails only for a ciphertext not below the modulus, which is public.
	ok := C.wssgw_rsa_decrypt(k.pkey, C.RSA_NO_PADDING, nil, nil, nil, 0, ptr(em), &n, ptr(in), C.size_t(size))
	runtime.KeepAlive(k)
	if ok != 0 && int(n) == size {
		sessionKeyFromEM(em, key)
	}
	clear(em)
}

// ptr is b's first byte for C, nil when b is empty.
func ptr(b []byte) *C.uchar {
	if len(b) == 0 {
		return nil
	}
	return (*C.uchar)(unsafe.Pointer(&b[0]))
}

// opensslErrorQueued reports whether the calling thread's OpenSSL error
// queue holds an entry (tests: it never should after a call here).
func opensslErrorQueued() bool { return C.ERR_peek_error() != 0 }
