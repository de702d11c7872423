package signer

import (
	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

// Namespaces of the markup this package writes.
const (
	nsWSSE   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsWSSE11 = "http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd"
	nsWSU    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	nsDS     = "http://www.w3.org/2000/09/xmldsig#"
	nsXEnc   = "http://www.w3.org/2001/04/xmlenc#"
	nsEC     = "http://www.w3.org/2001/10/xml-exc-c14n#"
	nsSOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
	nsSOAP12 = "http://www.w3.org/2003/05/soap-envelope"
)

// Token profile URIs (WSS X.509 Token Profile 1.1 §3.1, WSS 1.1 §7, §8).
const (
	valueX509v3       = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3"
	valueSKI          = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509SubjectKeyIdentifier"
	valueThumbprint   = "http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#ThumbprintSHA1"
	valueEncryptedKey = "http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#EncryptedKey"
	encodingBase64    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"
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

const (
	typeContent = "http://www.w3.org/2001/04/xmlenc#Content"
)
