package signer

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

// Algorithm URIs: private copies of internal/crypto's Alg* constants (same
// values), which this package can switch to once that API is settled.
const (
	algExcC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"

	// algRSASHA256 and friends: RFC 9231 §2.3.
	algRSASHA256   = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
	algRSASHA384   = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384"
	algRSASHA512   = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"
	algECDSASHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
	algECDSASHA384 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384"
	algECDSASHA512 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512"
	// algEd25519 is RFC 9231 §2.3.8.
	algEd25519 = "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519"

	algSHA1   = "http://www.w3.org/2000/09/xmldsig#sha1"
	algSHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
	algSHA384 = "http://www.w3.org/2001/04/xmldsig-more#sha384"
	algSHA512 = "http://www.w3.org/2001/04/xmlenc#sha512"

	// algAES*GCM: XMLEnc 1.1 §5.2.4.
	algAES128GCM = "http://www.w3.org/2009/xmlenc11#aes128-gcm"
	algAES192GCM = "http://www.w3.org/2009/xmlenc11#aes192-gcm"
	algAES256GCM = "http://www.w3.org/2009/xmlenc11#aes256-gcm"

	// algRSAOAEPMGF1P is XMLEnc 1.0 §5.4.2 (OAEP with SHA-1 and MGF1-SHA-1
	// unless a DigestMethod says otherwise).
	algRSAOAEPMGF1P = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"

	typeContent = "http://www.w3.org/2001/04/xmlenc#Content"
)
