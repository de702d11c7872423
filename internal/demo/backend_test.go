package demo

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackend(t *testing.T) {
	srv := httptest.NewServer(&Backend{})
	t.Cleanup(srv.Close)
	tests := map[string]struct {
		file, contentType string
		status            int
		contains          []string
	}{
		"ok/soap11":      {"../../examples/orders-soap11.xml", "text/xml; charset=utf-8", 200, []string{"PlaceOrderResponse", "ORD-", "http://schemas.xmlsoap.org/soap/envelope/"}},
		"ok/soap12":      {"../../examples/orders-soap12.xml", "application/soap+xml", 200, []string{"PlaceOrderResponse", "http://www.w3.org/2003/05/soap-envelope"}},
		"fail/not-soap":  {"", "text/xml", 500, []string{"Fault", "no operation"}},
		"fail/multipart": {"", "multipart/related; boundary=x", 500, []string{"Fault", "plain SOAP"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body := "<nothing/>"
			if tc.file != "" {
				b, err := os.ReadFile(tc.file)
				require.NoError(t, err)
				body = string(b)
			}
			resp, err := http.Post(srv.URL, tc.contentType, strings.NewReader(body))
			require.NoError(t, err)
			got, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.status, resp.StatusCode)
			for _, s := range tc.contains {
				assert.Contains(t, string(got), s)
			}
		})
	}
}
