package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// field is one element of an operation's payload.
type field struct {
	name     string
	optional float64 // probability the element is absent; 0 = always present
}

// list is a repeated element of an operation: 0–100 items, each with its
// own fields, some optional.
type list struct {
	item   string
	fields []field
}

// operation is one service operation: a request element with scalar
// fields and up to two item lists.
type operation struct {
	name   string
	ns     string
	fields []field
	lists  []list
}

// operations are a dozen operations of the shape real order, billing and
// logistics services have (issue 14: "a dozen operations"). Absence
// probabilities differ, so some shapes are rare.
var operations = func() []operation {
	names := []string{"PlaceOrder", "CancelOrder", "GetOrderStatus", "UpdateCustomer",
		"CreateInvoice", "ListInvoices", "SubmitPayment", "RefundPayment",
		"BookShipment", "TrackShipment", "QueryStock", "AdjustStock"}
	ops := make([]operation, len(names))
	for i, n := range names {
		op := operation{name: n, ns: fmt.Sprintf("urn:example:svc%d:v%d", i/4, 1+i%3)}
		op.fields = []field{{name: "RequestId"}, {name: "CustomerRef"},
			{name: "Comment", optional: 0.7}, {name: "Channel", optional: 0.3}}
		if i%3 != 2 {
			op.fields = append(op.fields, field{name: "Priority", optional: 0.5})
		}
		if i%2 == 0 {
			op.lists = append(op.lists, list{item: "Line", fields: []field{
				{name: "Sku"}, {name: "Quantity"}, {name: "Description", optional: 0.4}, {name: "Discount", optional: 0.8}}})
		}
		if i%4 == 1 {
			op.lists = append(op.lists, list{item: "Reference", fields: []field{{name: "Kind"}, {name: "Value"}}})
		}
		ops[i] = op
	}
	return ops
}()

// texts are payload values as applications write them: markup characters
// that must be escaped, and non-ASCII in several scripts (issue 14:
// "escaped text").
var texts = []string{
	"Smith & Sons", "a < b > c", `the "quoted" part`, "Müller GmbH", "Ærøskøbing",
	"東京都千代田区", "Ελληνικά", "café crème", "50% off → today", "plain text",
	"R&D <urgent>", "naïve façade", "Zürich 8001", "tab\tand spaces", "emoji 🚚 delivery",
}

// maxItems bounds a list's length (issue 14: lists of 0–100 items).
const maxItems = 100

// listLen draws a list length in [0, maxItems] with a long tail: n is
// ⌊(maxItems+1)·u⁵⌋ for uniform u, so 40 % of lists are empty, the median
// is 3 items, about one list in 8 has 50 or more, and 1 in 500 is full.
func listLen(r *rand.Rand) int {
	return min(maxItems, int((maxItems+1)*math.Pow(r.Float64(), 5)))
}

// escape writes s as XML character data or attribute value.
func escape(b *strings.Builder, s string) {
	for _, c := range s {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(c)
		}
	}
}
