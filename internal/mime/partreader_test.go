package mime

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPartReader(t *testing.T) {
	body := pkg(part(hdrRoot, envXOP), att("a@x", "first"), att("b@x", "second"))
	pr, err := NewPartReader(strings.NewReader(body), ctMTOM, testLimits(t))
	require.NoError(t, err)
	assert.Equal(t, "B", pr.Params()["boundary"])

	sp, err := pr.Next()
	require.NoError(t, err)
	assert.True(t, sp.Root)
	assert.Equal(t, "root@x", sp.ContentID)
	assert.Equal(t, `application/xop+xml; charset=UTF-8; type="application/soap+xml"`, sp.ContentType)
	b, err := io.ReadAll(sp)
	require.NoError(t, err)
	assert.Equal(t, envXOP, string(b))

	sp, err = pr.Next()
	require.NoError(t, err)
	assert.False(t, sp.Root)
	assert.Equal(t, "a@x", sp.ContentID)
	assert.Equal(t, "<a@x>", sp.Header.Get("Content-Id"))
	// Left unread: Next skips it.

	sp2, err := pr.Next()
	require.NoError(t, err)
	n, err := sp.Read(make([]byte, 10))
	assert.Zero(t, n, "a part left behind reads nothing")
	assert.Equal(t, io.EOF, err)
	b, err = io.ReadAll(sp2)
	require.NoError(t, err)
	assert.Equal(t, "second", string(b))

	_, err = pr.Next()
	require.Equal(t, io.EOF, err)
	_, err = pr.Next()
	require.Equal(t, io.EOF, err, "EOF is sticky")
}

func TestPartReaderTruncatedIsNotEOF(t *testing.T) {
	full := pkg(part(hdrRoot, envXOP), att("a@x", "content"))
	// Every proper prefix of a valid package is an error, never a clean end.
	for cut := 0; cut < len(full)-2; cut++ {
		pr, err := NewPartReader(strings.NewReader(full[:cut]), ctMTOM, testLimits(t))
		require.NoError(t, err)
		for {
			sp, err := pr.Next()
			if err != nil {
				require.NotEqual(t, io.EOF, err, "cut at %d", cut)
				require.ErrorIs(t, err, ErrTruncated, "cut at %d", cut)
				break
			}
			if _, err := io.Copy(io.Discard, sp); err != nil {
				require.ErrorIs(t, err, ErrTruncated, "cut at %d", cut)
			}
		}
	}
}

func TestPartReaderLimitsInStream(t *testing.T) {
	lim := testLimits(t)
	body := pkg(part(hdrRoot, envXOP), att("a@x", strings.Repeat("a", int(lim.MaxPartSize)+1)))
	pr, err := NewPartReader(strings.NewReader(body), ctMTOM, lim)
	require.NoError(t, err)
	_, err = pr.Next()
	require.NoError(t, err)
	sp, err := pr.Next()
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, sp)
	require.ErrorIs(t, err, ErrLimit)
	assert.LessOrEqual(t, n, lim.MaxPartSize)
	_, err = pr.Next()
	require.ErrorIs(t, err, ErrLimit, "the error is sticky")
}

func TestNewPartReaderInvalidLimits(t *testing.T) {
	_, err := NewPartReader(strings.NewReader(""), ctMTOM, Limits{})
	require.Error(t, err)
}

// TestPartReaderChunking reads random packages whose contents are full of
// near-delimiters through readers that split the input at random places,
// and checks every part comes back exactly.
func TestPartReaderChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"\r", "\n", "\r\n", "-", "--", "B", "\r\n-", "\r\n--", "\r\n--C", "x", "\r\n--b", "--B"}
	lim := testLimits(t)
	lim.MaxPartSize = 1 << 20
	lim.MaxTotalSize = 1 << 22
	for iter := range 300 {
		want := make([]string, 1+rng.IntN(4))
		parts := []string{part(hdrRoot, envXOP)}
		for i := range want {
			var sb strings.Builder
			for range rng.IntN(200) {
				sb.WriteString(pieces[rng.IntN(len(pieces))])
			}
			if rng.IntN(10) == 0 {
				sb.WriteString(strings.Repeat("y", rng.IntN(200000)))
			}
			// A delimiter inside content is not allowed (RFC 2046 §5.1.1).
			want[i] = strings.ReplaceAll(sb.String(), "\r\n--B", "\r\n--C")
			parts = append(parts, att(fmt.Sprint(i), want[i]))
		}
		body := pkg(parts...)
		r := io.Reader(&randomChunks{r: strings.NewReader(body), rng: rng})
		pr, err := NewPartReader(r, ctMTOM, lim)
		require.NoError(t, err)
		_, err = pr.Next()
		require.NoError(t, err)
		for i := range want {
			sp, err := pr.Next()
			require.NoError(t, err, "iteration %d part %d", iter, i)
			var got bytes.Buffer
			if rng.IntN(2) == 0 {
				_, err = io.Copy(&got, iotest.OneByteReader(sp))
			} else {
				_, err = io.Copy(&got, sp)
			}
			require.NoError(t, err)
			require.Equal(t, want[i], got.String(), "iteration %d part %d", iter, i)
		}
		_, err = pr.Next()
		require.Equal(t, io.EOF, err)
	}
}

// randomChunks returns reads of random sizes from 1 to 3000 bytes.
type randomChunks struct {
	r   io.Reader
	rng *rand.Rand
}

func (c *randomChunks) Read(p []byte) (int, error) {
	if n := 1 + c.rng.IntN(3000); n < len(p) {
		p = p[:n]
	}
	return c.r.Read(p)
}
