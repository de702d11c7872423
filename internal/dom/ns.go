package dom

import (
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/swa"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Namespaces and URIs of WS-Security 1.1 (SOAP Message Security, X.509 and
// UsernameToken profiles), XML Signature and XML Encryption.
const (
	nsWSSE    = xmlscan.NamespaceWSSE
	nsWSSE11  = xmlscan.NamespaceWSSE11
	nsWSU     = xmlscan.NamespaceWSU
	nsDS      = xmlscan.NamespaceDSig
	nsXEnc    = xmlscan.NamespaceXEnc
	nsXEnc11  = xmlscan.NamespaceXEnc11
	nsExcC14N = c14n.AlgExcC14N
	nsXML     = xmlscan.NamespaceXML

	wssPrefix10 = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-"
	wssPrefix11 = "http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#"

	vtX509v3       = wss.ValueTypeX509v3
	vtPKIPath      = wssPrefix10 + "x509-token-profile-1.0#X509PKIPathv1"
	vtSKI          = wssPrefix10 + "x509-token-profile-1.0#X509SubjectKeyIdentifier"
	vtThumbprint   = wssPrefix11 + "ThumbprintSHA1"
	vtEncKeySHA1   = wssPrefix11 + "EncryptedKeySHA1"
	vtEncryptedKey = wssPrefix11 + "EncryptedKey"
	encBase64      = wssPrefix10 + "soap-message-security-1.0#Base64Binary"
	trSTR          = wss.TransformSTR

	pwText   = wssPrefix10 + "username-token-profile-1.0#PasswordText"
	pwDigest = wss.PasswordDigest

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
