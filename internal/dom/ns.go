package dom

import "github.com/wssgw/wssgw/internal/swa"

// Namespaces and URIs of WS-Security 1.1 (SOAP Message Security, X.509 and
// UsernameToken profiles), XML Signature and XML Encryption.
const (
	nsWSSE    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsWSSE11  = "http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd"
	nsWSU     = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	nsDS      = "http://www.w3.org/2000/09/xmldsig#"
	nsXEnc    = "http://www.w3.org/2001/04/xmlenc#"
	nsXEnc11  = "http://www.w3.org/2009/xmlenc11#"
	nsExcC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
	nsXML     = "http://www.w3.org/XML/1998/namespace"

	wssPrefix10 = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-"
	wssPrefix11 = "http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#"

	vtX509v3       = wssPrefix10 + "x509-token-profile-1.0#X509v3"
	vtPKIPath      = wssPrefix10 + "x509-token-profile-1.0#X509PKIPathv1"
	vtSKI          = wssPrefix10 + "x509-token-profile-1.0#X509SubjectKeyIdentifier"
	vtThumbprint   = wssPrefix11 + "ThumbprintSHA1"
	vtEncKeySHA1   = wssPrefix11 + "EncryptedKeySHA1"
	vtEncryptedKey = wssPrefix11 + "EncryptedKey"
	encBase64      = wssPrefix10 + "soap-message-security-1.0#Base64Binary"
	trSTR          = wssPrefix10 + "soap-message-security-1.0#STR-Transform"

	pwText   = wssPrefix10 + "username-token-profile-1.0#PasswordText"
	pwDigest = wssPrefix10 + "username-token-profile-1.0#PasswordDigest"

	typeElement = nsXEnc + "Element"
	typeContent = nsXEnc + "Content"

	roleUltimate = "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver"
)

// MTOM/XOP and the WSS SwA Profile 1.1.
const (
	nsXOP = "http://www.w3.org/2004/08/xop/include"

	swaPrefix       = "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#"
	trSwAContent    = swa.ContentTransform
	trSwAComplete   = swa.CompleteTransform
	trSwACiphertext = swa.CiphertextTransform
	typeSwAContent  = swaPrefix + "Attachment-Content-Only"
	typeSwAComplete = swaPrefix + "Attachment-Complete"
)
