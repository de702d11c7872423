package wss

// URIs of the WS-Security token profiles that both engines decide on; the
// namespaces are xmlscan's.
const (
	wssPrefix10 = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-"

	ValueTypeX509v3 = wssPrefix10 + "x509-token-profile-1.0#X509v3"
	TransformSTR    = wssPrefix10 + "soap-message-security-1.0#STR-Transform"
	PasswordDigest  = wssPrefix10 + "username-token-profile-1.0#PasswordDigest"
)
