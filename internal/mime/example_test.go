package mime_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

func Example() {
	ct := `multipart/related; type="application/xop+xml"; boundary="MIME"; start="<root>"; start-info="application/soap+xml"`
	body := "--MIME\r\n" +
		"Content-Type: application/xop+xml; type=\"application/soap+xml\"\r\nContent-ID: <root>\r\n\r\n" +
		`<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body>` +
		`<photo><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:photo%40example"/></photo>` +
		"</s:Body></s:Envelope>\r\n--MIME\r\n" +
		"Content-Type: image/png\r\nContent-ID: <photo@example>\r\n\r\n" +
		"\x89PNG...\r\n--MIME--\r\n"

	pkg, err := mime.Read(context.Background(), strings.NewReader(body), ct, mime.DefaultLimits())
	if err != nil {
		panic(err)
	}
	defer pkg.Close() // removes the spool on every path

	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		panic(err)
	}
	var d xmlscan.Document
	if err := sc.Scan(pkg.RootBytes, &d); err != nil {
		panic(err)
	}
	incs, err := mime.ResolveXOP(&d, pkg)
	if err != nil {
		panic(err)
	}
	referenced := map[string]bool{}
	for _, inc := range incs {
		referenced[inc.Part.ContentID()] = true
		fmt.Printf("<%s> includes <%s>, %d bytes of %s\n",
			d.Elements[inc.Parent].Local, inc.Part.ContentID(), inc.Part.Size(), inc.Part.ContentType())
	}
	// The engine adds the cids its SwA references verified.
	if err := pkg.CheckReferenced(referenced); err != nil {
		panic(err)
	}

	// After verification: the package for the backend.
	ctOut, w := pkg.Writer(pkg.RootBytes)
	fmt.Println(strings.HasPrefix(ctOut, "multipart/related;"))
	if _, err := w.WriteTo(io.Discard); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	// Output:
	// <photo> includes <photo@example>, 7 bytes of image/png
	// true
}
