package xmlscan

// This file is the one home of the namespaces and URIs of the specs the
// gateway speaks (XML, SOAP, WS-Security 1.1 and its token profiles, XML
// Signature and Encryption, XOP, the SwA profile): every package takes them
// from here, so a URI is written once. Algorithm URIs are not here: they
// are the vocabulary of the packages that implement them (internal/crypto,
// internal/c14n, internal/swa).

// Namespace names the gate knows about.
const (
	// NamespaceXML is bound to the prefix xml by definition (Namespaces in
	// XML 1.0 §3) and may not be bound to any other prefix.
	NamespaceXML = "http://www.w3.org/XML/1998/namespace"
	// NamespaceXMLNS is the namespace of xmlns attributes; it may never be
	// declared (Namespaces in XML 1.0 §3).
	NamespaceXMLNS = "http://www.w3.org/2000/xmlns/"

	NamespaceDSig   = "http://www.w3.org/2000/09/xmldsig#"
	NamespaceDSig11 = "http://www.w3.org/2009/xmldsig11#"
	NamespaceXEnc   = "http://www.w3.org/2001/04/xmlenc#"
	NamespaceXEnc11 = "http://www.w3.org/2009/xmlenc11#"
	NamespaceWSSE   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	NamespaceWSSE11 = "http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd"
	NamespaceWSU    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"

	// NamespaceSOAP11 and NamespaceSOAP12 are the envelope namespaces of
	// SOAP 1.1 (§4.1.2) and SOAP 1.2 (Part 1 §5.1); package soap takes
	// them from here (soap.NS11, soap.NS12).
	NamespaceSOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
	NamespaceSOAP12 = "http://www.w3.org/2003/05/soap-envelope"
)

// NamespaceXOP is the namespace of xop:Include (XOP 1.0 §2.1).
const NamespaceXOP = "http://www.w3.org/2004/08/xop/include"

const (
	wssPrefix10 = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-"
	wssPrefix11 = "http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#"
	swaPrefix   = "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#"
)

// Token reference ValueType URIs (X.509 Token Profile 1.1 §3.1, §3.2;
// SOAP Message Security 1.1 §7.3, §7.7).
const (
	ValueTypeX509v3           = wssPrefix10 + "x509-token-profile-1.0#X509v3"
	ValueTypeX509PKIPath      = wssPrefix10 + "x509-token-profile-1.0#X509PKIPathv1"
	ValueTypeSKI              = wssPrefix10 + "x509-token-profile-1.0#X509SubjectKeyIdentifier"
	ValueTypeThumbprint       = wssPrefix11 + "ThumbprintSHA1"
	ValueTypeEncryptedKeySHA1 = wssPrefix11 + "EncryptedKeySHA1"
	ValueTypeEncryptedKey     = wssPrefix11 + "EncryptedKey"
)

// Other WS-Security URIs: the base64 EncodingType (SOAP Message Security
// 1.0 §6.3), the STR Dereference Transform (§8.3) and the UsernameToken
// password types (Username Token Profile 1.0 §3.1).
const (
	EncodingBase64 = wssPrefix10 + "soap-message-security-1.0#Base64Binary"
	TransformSTR   = wssPrefix10 + "soap-message-security-1.0#STR-Transform"
	PasswordText   = wssPrefix10 + "username-token-profile-1.0#PasswordText"
	PasswordDigest = wssPrefix10 + "username-token-profile-1.0#PasswordDigest"
)

// EncryptedData Type URIs: XML Encryption 1.0 §3.5.1 and the SwA Profile
// 1.1 §5.4 for attachments.
const (
	TypeElement        = NamespaceXEnc + "Element"
	TypeContent        = NamespaceXEnc + "Content"
	TypeSwAContentOnly = swaPrefix + "Attachment-Content-Only"
	TypeSwAComplete    = swaPrefix + "Attachment-Complete"
)

// RoleUltimateReceiver is the SOAP 1.2 role of the ultimate receiver (SOAP
// 1.2 Part 1 §2.2).
const RoleUltimateReceiver = NamespaceSOAP12 + "/role/ultimateReceiver"
