package testpath

import "testing"

func TestTomcat(t *testing.T) {
	for target, want := range map[string]string{
		"/":                         "/",
		"/orders":                   "/orders",
		"/orders/":                  "/orders/",
		"/orders/wsdl/..":           "/orders/",
		"/orders/wsdl/../":          "/orders/",
		"/orders/wsdl/%2e%2e":       "/orders/",
		"/orders/wsdl%2f..":         "/orders/",
		"/orders/wsdl/..;/":         "/orders/",
		"/orders/wsdl/.":            "/orders/wsdl/",
		"/public/../orders":         "/orders",
		"/public/./../orders":       "/orders",
		"/public/..%2forders":       "/orders",
		"/public%2f..%2forders":     "/orders",
		"/public/..%5corders":       "/orders",
		`/public\..\orders`:         "/orders",
		"//orders":                  "/orders",
		"/../../orders":             "/orders",
		"/public;jsessionid=1?a=b":  "/public",
		"/a;b=c/d":                  "/a/d",
		"/caf%C3%A9":                "/café",
		"http://h/public/../orders": "/orders",
	} {
		if got := Tomcat(target); got != want {
			t.Errorf("Tomcat(%q) = %q, want %q", target, got, want)
		}
	}
}
