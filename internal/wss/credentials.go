package wss

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// Credentials are UsernameToken passwords, read from a file of
// "username:password" lines ('#' starts a comment line). PasswordDigest
// needs the clear password (WSS UsernameToken Profile 1.1 §3.1), so the
// file holds secrets and belongs in a Kubernetes Secret.
type Credentials struct {
	users map[string][]byte
}

// LoadCredentials reads a credentials file.
func LoadCredentials(file string) (*Credentials, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	c := &Credentials{users: map[string][]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		user, pass, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("credentials %s line %d: want username:password", file, n)
		}
		if _, dup := c.users[user]; dup {
			return nil, fmt.Errorf("credentials %s line %d: user %q listed twice", file, n, user)
		}
		c.users[user] = []byte(pass)
	}
	return c, sc.Err()
}

// CheckText compares a PasswordText in constant time.
func (c *Credentials) CheckText(user string, password []byte) bool {
	want, ok := c.users[user]
	if !ok {
		// Compare anyway so that unknown users take the same time.
		want = []byte{}
	}
	return subtle.ConstantTimeCompare(want, password) == 1 && ok
}

// CheckDigest checks a PasswordDigest: Base64(SHA-1(nonce + created +
// password)) (UsernameToken Profile 1.1 §3.1). created is the token's
// wsu:Created text exactly as sent.
func (c *Credentials) CheckDigest(user string, nonce, created []byte, digest string) bool {
	want, ok := c.users[user]
	h := sha1.New()
	h.Write(nonce)
	h.Write(created)
	h.Write(want)
	got, err := base64.StdEncoding.DecodeString(digest)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(h.Sum(nil), got) == 1 && ok
}
