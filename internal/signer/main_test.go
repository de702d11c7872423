package signer

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pkiVal != nil {
		os.RemoveAll(pkiVal.dir)
	}
	os.Exit(code)
}
