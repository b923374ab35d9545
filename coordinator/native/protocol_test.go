package native

import (
	"bytes"
	"errors"
	"testing"
)

func TestRequestFixtures(t *testing.T) {
	for _, tc := range []struct {
		req   Request
		bytes []byte
	}{
		{Request{Op: OpHello, Arg: 1}, []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}},
		{Request{Op: OpWrite, Ch: 1, Arg: 2}, []byte{3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}},
		// idle until 1 ms = 0x0f4240
		{Request{Op: OpIdle, Arg: 1_000_000}, []byte{4, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0}},
		{Request{Op: OpRecv, Ch: 0x01020304, Arg: -1}, []byte{5, 0, 0, 0, 4, 3, 2, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		var b [RecordSize]byte
		EncodeRequest(b[:], tc.req)
		if !bytes.Equal(b[:], tc.bytes) {
			t.Errorf("EncodeRequest(%+v) = % x, want % x", tc.req, b, tc.bytes)
		}
		got, err := DecodeRequest(tc.bytes)
		if err != nil || got != tc.req {
			t.Errorf("DecodeRequest(% x) = %+v, %v", tc.bytes, got, err)
		}
	}
}

func TestReplyFixtures(t *testing.T) {
	r := Reply{Op: OpRecv, Status: 2, Now: 0x0102030405060708}
	want := []byte{5, 0, 0, 0, 2, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1}
	var b [RecordSize]byte
	EncodeReply(b[:], r)
	if !bytes.Equal(b[:], want) {
		t.Fatalf("EncodeReply = % x, want % x", b, want)
	}
	got, err := DecodeReply(want)
	if err != nil || got != r {
		t.Fatalf("DecodeReply = %+v, %v", got, err)
	}
	if _, err := DecodeReply(want[:15]); !errors.Is(err, ErrShortRecord) {
		t.Fatalf("short reply: %v", err)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	if _, err := DecodeRequest(make([]byte, 15)); !errors.Is(err, ErrShortRecord) {
		t.Fatalf("short: %v", err)
	}
	r, err := DecodeRequest([]byte{9, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	if !errors.Is(err, ErrBadOp) || r.Op != 9 || r.Ch != 7 {
		t.Fatalf("bad op: %+v %v", r, err)
	}
	if _, err := DecodeRequest(make([]byte, 16)); !errors.Is(err, ErrBadOp) {
		t.Fatalf("op 0: %v", err)
	}
}

func TestRequestCheck(t *testing.T) {
	for _, tc := range []struct {
		r    Request
		want uint32
	}{
		{Request{Op: OpWrite, Arg: 0}, StatusOK},
		{Request{Op: OpWrite, Arg: MaxValues}, StatusOK},
		{Request{Op: OpWrite, Arg: MaxValues + 1}, StatusBadRequest},
		{Request{Op: OpWrite, Arg: -1}, StatusBadRequest},
		{Request{Op: OpIdle, Arg: -1}, StatusBadRequest},
		{Request{Op: OpIdle, Arg: 5}, StatusOK},
		{Request{Op: 0}, StatusBadRequest},
		{Request{Op: OpRead}, StatusOK},
	} {
		if got := tc.r.Check(); got != tc.want {
			t.Errorf("%+v.Check() = %#x, want %#x", tc.r, got, tc.want)
		}
	}
}

func TestStatusError(t *testing.T) {
	err := error(&StatusError{Op: OpIdle, Status: StatusShutdown})
	if !errors.Is(err, ErrShutdown) {
		t.Fatal("shutdown status does not match ErrShutdown")
	}
	if errors.Is(&StatusError{Op: OpIdle, Status: StatusBadRequest}, ErrShutdown) {
		t.Fatal("bad request matches ErrShutdown")
	}
	if got := err.Error(); got != "native: idle: coordinator replied: simulation is ending" {
		t.Fatalf("message %q", got)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b)
		if len(b) < RecordSize {
			if err == nil {
				t.Fatal("short input accepted")
			}
			return
		}
		if (err == nil) != r.Op.Valid() {
			t.Fatalf("err %v for op %d", err, r.Op)
		}
		var out [RecordSize]byte
		EncodeRequest(out[:], r)
		if !bytes.Equal(out[:], b[:RecordSize]) {
			t.Fatalf("round trip % x → %+v → % x", b[:RecordSize], r, out)
		}
		_ = r.Check()
		_ = r.Op.String()
	})
}

func FuzzDecodeReply(f *testing.F) {
	f.Add([]byte{5, 0, 0, 0, 2, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeReply(b)
		if len(b) < RecordSize {
			if err == nil {
				t.Fatal("short input accepted")
			}
			return
		}
		var out [RecordSize]byte
		EncodeReply(out[:], r)
		if !bytes.Equal(out[:], b[:RecordSize]) {
			t.Fatalf("round trip % x → %+v → % x", b[:RecordSize], r, out)
		}
	})
}

// Current: with ObsNext the observation is current until the next sample is
// due at the client's time; without it (an older coordinator), only an
// observation taken at the client's time is.
func TestClientCurrent(t *testing.T) {
	for _, tc := range []struct {
		obsTime, obsNext, now int64
		want                  bool
	}{
		{1_000_000, 2_000_000, 1_000_000, true},  // activation on a step boundary
		{1_000_000, 2_000_000, 1_006_161, true},  // just after one: no newer sample exists
		{1_000_000, 2_000_000, 2_000_000, false}, // the next sample is due now
		{1_000_000, 2_000_000, 7_000_000, false}, // the world lags several steps
		{1_000_000, 0, 1_000_000, true},
		{1_000_000, 0, 1_006_161, false},
	} {
		c := &Client{shm: &Shm{ObsTime: tc.obsTime, ObsNext: tc.obsNext}, now: tc.now}
		if got := c.Current(); got != tc.want {
			t.Errorf("obs at %d, next %d, client at %d: Current %v, want %v", tc.obsTime, tc.obsNext, tc.now, got, tc.want)
		}
	}
	if (&Client{}).Current() {
		t.Error("a closed client's observation is current")
	}
}
