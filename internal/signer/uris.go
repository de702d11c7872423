package signer

import (
	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Namespaces of the markup this package writes: short names for xmlscan's.
const (
	nsWSSE   = xmlscan.NamespaceWSSE
	nsWSSE11 = xmlscan.NamespaceWSSE11
	nsWSU    = xmlscan.NamespaceWSU
	nsDS     = xmlscan.NamespaceDSig
	nsXEnc   = xmlscan.NamespaceXEnc
	nsEC     = c14n.AlgExcC14N
	nsSOAP11 = xmlscan.NamespaceSOAP11
	nsSOAP12 = xmlscan.NamespaceSOAP12
	nsXOP    = xmlscan.NamespaceXOP
)

// Token profile URIs (WSS X.509 Token Profile 1.1 §3.1, WSS 1.1 §7, §8).
const (
	valueX509v3       = xmlscan.ValueTypeX509v3
	valueSKI          = xmlscan.ValueTypeSKI
	valueThumbprint   = xmlscan.ValueTypeThumbprint
	valueEncryptedKey = xmlscan.ValueTypeEncryptedKey
	encodingBase64    = xmlscan.EncodingBase64
)

// Algorithm URIs, named after internal/crypto's constants (one source for
// their values).
const (
	algExcC14N = c14n.AlgExcC14N

	algRSASHA256   = wcrypto.AlgRSASHA256 // RFC 9231 §2.3
	algRSASHA384   = wcrypto.AlgRSASHA384
	algRSASHA512   = wcrypto.AlgRSASHA512
	algECDSASHA256 = wcrypto.AlgECDSASHA256
	algECDSASHA384 = wcrypto.AlgECDSASHA384
	algECDSASHA512 = wcrypto.AlgECDSASHA512
	algEd25519     = wcrypto.AlgEd25519 // RFC 9231 §2.3.8

	algSHA1   = wcrypto.AlgDigestSHA1
	algSHA256 = wcrypto.AlgDigestSHA256
	algSHA384 = wcrypto.AlgDigestSHA384
	algSHA512 = wcrypto.AlgDigestSHA512

	algAES128GCM = wcrypto.AlgAES128GCM // XMLEnc 1.1 §5.2.4
	algAES192GCM = wcrypto.AlgAES192GCM
	algAES256GCM = wcrypto.AlgAES256GCM

	// algRSAOAEPMGF1P is XMLEnc 1.0 §5.4.2 (OAEP with SHA-1 and MGF1-SHA-1
	// unless a DigestMethod says otherwise).
	algRSAOAEPMGF1P = wcrypto.AlgRSAOAEPMGF1P
)

// EncryptedData Type URIs (XML Encryption 1.0 §3.5.1).
const (
	typeElement = xmlscan.TypeElement
	typeContent = xmlscan.TypeContent
)
