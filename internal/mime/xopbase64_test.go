package mime

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodeXOP: both lexical forms of an included part's base64, as the
// engines digest them: one line, and 76-character lines joined by the
// canonical CR LF ("&#xD;\n") with none after the last.
func TestEncodeXOP(t *testing.T) {
	for _, n := range []int{0, 1, 57, 58, 114, 3*b64Chunk + 100} {
		data, err := io.ReadAll(&patterned{n: int64(n)})
		require.NoError(t, err)
		var line, lines bytes.Buffer
		require.NoError(t, EncodeXOP(bytes.NewReader(data), &line, &lines))
		want := base64.StdEncoding.EncodeToString(data)
		assert.Equal(t, want, line.String(), "ok/one line of %d bytes", n)
		var wantLines []string
		for len(want) > 76 {
			wantLines, want = append(wantLines, want[:76]), want[76:]
		}
		wantLines = append(wantLines, want)
		assert.Equal(t, strings.Join(wantLines, "&#xD;\n"), lines.String(), "ok/MIME lines of %d bytes", n)
	}
	var only bytes.Buffer
	require.NoError(t, EncodeXOP(strings.NewReader("abc"), nil, &only))
	assert.Equal(t, "YWJj", only.String(), "ok/one form only")
}
