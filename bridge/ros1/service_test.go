package ros1

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// Service requests as rospy and roscpp send them: a length, then the body.
func TestReadServiceRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []byte
		limit uint32
		want  []byte
		err   error
	}{
		{"empty request", []byte{0, 0, 0, 0}, 16, []byte{}, nil},
		{"body", []byte{3, 0, 0, 0, 'a', 'b', 'c', 'x'}, 16, []byte("abc"), nil},
		{"at the limit", []byte{2, 0, 0, 0, 1, 2}, 2, []byte{1, 2}, nil},
		{"over the limit", []byte{3, 0, 0, 0, 1, 2, 3}, 2, nil, ErrOversize},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff}, 16, nil, ErrOversize},
		{"closed between calls", nil, 16, nil, io.EOF},
		{"closed in the length", []byte{1, 0}, 16, nil, ErrTruncated},
		{"closed in the body", []byte{4, 0, 0, 0, 1}, 16, nil, ErrTruncated},
	} {
		for _, r := range []io.Reader{bytes.NewReader(tc.in), iotest.OneByteReader(bytes.NewReader(tc.in))} {
			got, err := readServiceRequest(r, tc.limit)
			if !errors.Is(err, tc.err) || !bytes.Equal(got, tc.want) || (tc.want != nil && got == nil) {
				t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
			}
		}
	}
}

// Responses byte for byte: success carries the serialized response,
// failure the error text, each after the ok byte and a length.
func TestAppendServiceResponse(t *testing.T) {
	for _, tc := range []struct {
		ok   bool
		body []byte
		want []byte
	}{
		{true, nil, []byte{1, 0, 0, 0, 0}},
		{true, appendTriggerResponse(nil, true, "hi"), []byte{1, 7, 0, 0, 0, 1, 2, 0, 0, 0, 'h', 'i'}},
		{false, []byte("no"), []byte{0, 2, 0, 0, 0, 'n', 'o'}},
	} {
		if got := appendServiceResponse([]byte("x"), tc.ok, tc.body); !bytes.Equal(got[1:], tc.want) || got[0] != 'x' {
			t.Errorf("ok %v body %q: %v, want %v after what was there", tc.ok, tc.body, got, tc.want)
		}
	}
}

// The types' names and MD5 sums are std_srvs' (as rossrv md5 gives them).
func TestControlServiceTypes(t *testing.T) {
	if emptyType != (ServiceType{"std_srvs/Empty", "d41d8cd98f00b204e9800998ecf8427e"}) {
		t.Errorf("Empty: %+v", emptyType)
	}
	if triggerType != (ServiceType{"std_srvs/Trigger", "937c9679a518e3a18d831e57125ea522"}) {
		t.Errorf("Trigger: %+v", triggerType)
	}
}
