package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/steward-oam/steward/internal/cueeval"
)

func TestReadFrame_RefusesAFrameOverItsBoundBeforeReadingIt(t *testing.T) {
	var head [frameHeader]byte
	binary.BigEndian.PutUint32(head[:], 1<<30)
	// Only the header is there: a reader that allocated or read the body
	// first would fail otherwise, or hang.
	err := readFrame(bytes.NewReader(head[:]), 1<<20, &cueeval.Response{})
	if !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("got %v, want the frame refused", err)
	}
}

// FuzzReadFrame feeds the controller's side of the pipe arbitrary bytes,
// as an evaluator that went wrong might write: reading never panics nor
// reads past its bound, and what it reads encodes and reads back the
// same.
func FuzzReadFrame(f *testing.F) {
	for _, res := range []*cueeval.Response{
		{Render: &cueeval.Rendered{Output: []byte(`{"kind":"ConfigMap"}`), Outputs: []cueeval.NamedObject{{Name: "svc", Object: []byte(`{"kind":"Service"}`)}},
			Patch: &cueeval.Patch{Node: &cueeval.PatchNode{Kind: cueeval.NodeObject, Fields: []cueeval.PatchField{{Name: "x", Key: "name", Node: &cueeval.PatchNode{Kind: cueeval.NodeScalar, Scalar: []byte(`1`)}}}}}}},
		{Budget: &cueeval.BudgetError{Limit: cueeval.LimitMemory}},
		{Err: &cueeval.Error{Reason: "InvalidProperties", Path: "a.b", Message: "a.b: conflicting values"}},
		{Status: &cueeval.StatusResult{Healthy: true, Details: map[string]string{"a": "b"}}},
		{Results: []cueeval.ExprResult{{Bool: true}, {Value: []byte(`"x"`)}, {Err: "no"}}},
	} {
		frame, err := encodeFrame(res)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 16
		r := bytes.NewReader(data)
		var res cueeval.Response
		if err := readFrame(r, limit, &res); err != nil {
			return
		}
		if read := len(data) - r.Len(); read > limit+frameHeader {
			t.Fatalf("read %d bytes past a bound of %d", read, limit)
		}
		frame, err := encodeFrame(&res)
		if err != nil {
			t.Fatalf("a response read does not encode: %v", err)
		}
		var again cueeval.Response
		if err := readFrame(bytes.NewReader(frame), len(frame), &again); err != nil {
			t.Fatalf("a response encoded does not read back: %v", err)
		}
		if !reflect.DeepEqual(normalize(t, &res), normalize(t, &again)) {
			t.Fatalf("round trip changed the response:\n%s\n%s", toJSON(&res), toJSON(&again))
		}
	})
}

// normalize compares responses as their encoding: RawMessage fields keep
// the bytes they were given, which encoding compacts.
func normalize(t *testing.T, r *cueeval.Response) string {
	t.Helper()
	frame, err := encodeFrame(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(frame)
}
