package dom

import (
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/swa"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Short names for xmlscan's namespaces and URIs of WS-Security 1.1 (SOAP Message Security, X.509 and
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

	vtX509v3       = xmlscan.ValueTypeX509v3
	vtPKIPath      = xmlscan.ValueTypeX509PKIPath
	vtSKI          = xmlscan.ValueTypeSKI
	vtThumbprint   = xmlscan.ValueTypeThumbprint
	vtEncKeySHA1   = xmlscan.ValueTypeEncryptedKeySHA1
	vtEncryptedKey = xmlscan.ValueTypeEncryptedKey
	encBase64      = xmlscan.EncodingBase64
	trSTR          = xmlscan.TransformSTR

	pwText   = xmlscan.PasswordText
	pwDigest = xmlscan.PasswordDigest

	typeElement = xmlscan.TypeElement
	typeContent = xmlscan.TypeContent

	roleUltimate = xmlscan.RoleUltimateReceiver
)

// MTOM/XOP and the WSS SwA Profile 1.1.
const (
	nsXOP = xmlscan.NamespaceXOP

	trSwAContent    = swa.ContentTransform
	trSwAComplete   = swa.CompleteTransform
	trSwACiphertext = swa.CiphertextTransform
	typeSwAContent  = xmlscan.TypeSwAContentOnly
	typeSwAComplete = xmlscan.TypeSwAComplete
)
