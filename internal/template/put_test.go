package template

import (
	"crypto/sha256"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/wssgw/wssgw/internal/wss"
)

// fakeAtts is any non-nil package.
type fakeAtts struct{ wss.Attachments }

// keptRunFields are the fields of a run that put keeps for the next hit:
// scratch, emptied (slices) or overwritten before use.
var keptRunFields = map[string]bool{
	"caps": true, "buf": true, "norm": true, "tmp": true, "part": true, "dv": true, "bodySum": true,
	"cids": true, "flipped": true, "bodyInc": true, "swaCIDs": true,
	"h": true, "hAlg": true, "doc": true, "fb": true, "sum": true, "dsum": true,
}

// TestPutResets fills every field of a run, puts it back, and requires
// every field but the kept scratch to be zero and every kept slice empty:
// a field added to run and not reset by put would carry one hit's state
// (a template, a result, a policy) into the next.
func TestPutResets(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	r := &run{}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		fv := v.Field(i)
		fv = reflect.NewAt(fv.Type(), unsafe.Pointer(fv.UnsafeAddr())).Elem()
		switch fv.Kind() {
		case reflect.Pointer:
			fv.Set(reflect.New(fv.Type().Elem()))
		case reflect.Slice:
			fv.Set(reflect.MakeSlice(fv.Type(), 1, 1))
		case reflect.String:
			fv.SetString("x")
		case reflect.Bool:
			fv.SetBool(true)
		case reflect.Array:
			fv.Index(0).Set(reflect.ValueOf(byte(1)).Convert(fv.Type().Elem()))
		case reflect.Interface, reflect.Struct:
			// Values of their own kinds below.
		default:
			t.Fatalf("field %s: kind %s not filled by the test", v.Type().Field(i).Name, fv.Kind())
		}
	}
	r.now, r.atts = time.Now(), fakeAtts{}
	r.fb.data, r.fb.h = []byte("x"), sha256.New()
	r.e = f.engine
	f.engine.put(r)
	for i := range v.NumField() {
		name, fv := v.Type().Field(i).Name, v.Field(i)
		switch {
		case keptRunFields[name] && fv.Kind() == reflect.Slice:
			if fv.Len() != 0 {
				t.Errorf("fail/kept %s holds %d elements after put", name, fv.Len())
			}
		case keptRunFields[name]:
		case !fv.IsZero():
			t.Errorf("fail/%s is not reset by put", name)
		}
	}
	if r.fb.data != nil || r.fb.h != nil {
		t.Error("fail/the fast body still holds the message or its digest")
	}
}
