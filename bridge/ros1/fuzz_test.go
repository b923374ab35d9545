package ros1

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/msgs"
)

// frame prefixes body with its TCPROS length.
func frame(body []byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// splitFrames is the reference TCPROS framing of a whole stream: the
// bodies in order, then nil (clean end), ErrTruncated or ErrOversize.
func splitFrames(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return out, ErrTruncated
		}
		l := binary.LittleEndian.Uint32(b)
		if l > MaxFrame {
			return out, ErrOversize
		}
		if uint64(len(b)-4) < uint64(l) {
			return out, ErrTruncated
		}
		out = append(out, b[4:4+l])
		b = b[4+l:]
	}
	return out, nil
}

// FuzzReadFrames: whatever a publisher sends, in whatever pieces, the
// subscriber's framing hands over exactly the reference's whole messages
// in order and ends as it does (clean, truncated or oversize); never a
// panic, never a message twice or cut.
func FuzzReadFrames(f *testing.F) {
	clock, f64 := msgs.AppendClock(nil, 1_500_000_000), msgs.AppendFloat64(nil, 2.5)
	js := msgs.AppendJointState(nil, 7, 5, "", []string{"pendulum_joint"}, []float64{1}, []float64{2}, nil)
	arr := msgs.AppendFloat64MultiArray(nil, []float64{1, 2, 3})
	f.Add(append(append(append([]byte(nil), clock...), f64...), js...), uint16(1))
	f.Add(append(append([]byte(nil), arr...), f64[:7]...), uint16(3))   // cut mid-message
	f.Add(frame(make([]byte, 100)), uint16(17))                         // larger than the first buffer
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, uint16(0))                    // empty messages
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 1, 2}, uint16(2))              // oversize
	f.Add(binary.LittleEndian.AppendUint32(nil, MaxFrame), uint16(4))   // the largest: truncated
	f.Add(binary.LittleEndian.AppendUint32(nil, MaxFrame+1), uint16(4)) // oversize by one
	f.Add([]byte{1}, uint16(1))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint16) {
		want, wantErr := splitFrames(stream)
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[0])
		wfd := fds[1]
		defer func() {
			if wfd >= 0 {
				unix.Close(wfd)
			}
		}()
		c := &InConn{Topic: "/t", Callerid: "/p", fd: fds[0], buf: make([]byte, 16)}
		var got [][]byte
		collect := func(b []byte) { got = append(got, append([]byte(nil), b...)) }
		step := int(chunk)%64 + 1
		var open = true
		for off := 0; off < len(stream) && open; off += step {
			piece := stream[off:min(off+step, len(stream))]
			if _, err := unix.Write(wfd, piece); err != nil {
				t.Fatal(err)
			}
			if open, err = c.ReadFrames(collect); !open && !errors.Is(err, ErrOversize) {
				t.Fatalf("closed before the end of the stream: %v", err)
			}
		}
		unix.Close(wfd)
		wfd = -1
		for rounds := 0; open; rounds++ {
			if open, err = c.ReadFrames(collect); rounds > 1000 {
				t.Fatal("ReadFrames does not see the end of the stream")
			}
		}
		if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			t.Fatalf("ended with %v, want %v", err, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%d messages, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("message %d: % x, want % x", i, got[i], want[i])
			}
		}
		// Called again (the owner should close it instead), the stream
		// stays ended, with the same verdict and nothing more.
		if again, err2 := c.ReadFrames(collect); again || (err2 == nil) != (err == nil) || len(got) != len(want) {
			t.Fatalf("after the end: open %v, %v, %d messages", again, err2, len(got))
		}
	})
}

// FuzzReadHeader: a connection header is read exactly (not a byte of the
// stream after it), never panics, and what it reads writes and reads back
// to the same fields.
func FuzzReadHeader(f *testing.F) {
	var b bytes.Buffer
	for _, h := range []map[string]string{
		{"callerid": "/tcs", "topic": "/clock", "type": "rosgraph_msgs/Clock", "md5sum": msgs.Clock.MD5,
			"message_definition": msgs.Clock.Definition, "latching": "1"},
		{"error": "not a publisher of \"/x\""},
		{"a": "b=c", "": ""},
	} {
		b.Reset()
		if err := writeHeader(&b, h); err != nil {
			f.Fatal(err)
		}
		f.Add(append(b.Bytes(), msgs.AppendFloat64(nil, 1)...))
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{8, 0, 0, 0, 4, 0, 0, 0, 'a', '=', 'b'})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		h, err := readHeader(r)
		if err != nil {
			if h != nil {
				t.Fatalf("fields %v with error %v", h, err)
			}
			return
		}
		l := int(binary.LittleEndian.Uint32(in))
		if used := len(in) - r.Len(); used != 4+l {
			t.Fatalf("read %d bytes of a %d-byte header", used, 4+l)
		}
		var out bytes.Buffer
		if err := writeHeader(&out, h); err != nil {
			t.Fatal(err)
		}
		back, err := readHeader(&out)
		if err != nil || !maps.Equal(back, h) || out.Len() != 0 {
			t.Fatalf("round trip %v → % x → %v, %v", h, out.Bytes(), back, err)
		}
	})
}

// FuzzReadServiceRequest: whatever a service client sends, the server
// reads exactly the reference framing's requests (limit MaxServiceRequest)
// in order, then ends as it does; never a panic, never a request cut.
func FuzzReadServiceRequest(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{3, 0, 0, 0, 'a', 'b', 'c', 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(binary.LittleEndian.AppendUint32(nil, MaxServiceRequest+1))
	f.Add([]byte{5, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, stream []byte) {
		var want [][]byte
		var wantErr error = io.EOF
		for b := stream; len(b) > 0; {
			if len(b) < 4 {
				wantErr = ErrTruncated
				break
			}
			l := binary.LittleEndian.Uint32(b)
			if l > MaxServiceRequest {
				wantErr = ErrOversize
				break
			}
			if uint64(len(b)-4) < uint64(l) {
				wantErr = ErrTruncated
				break
			}
			want = append(want, b[4:4+l])
			b = b[4+l:]
		}
		r := bytes.NewReader(stream)
		for k := 0; ; k++ {
			got, err := readServiceRequest(r, MaxServiceRequest)
			if err != nil {
				if k != len(want) || !errors.Is(err, wantErr) {
					t.Fatalf("ended after %d requests with %v; want %d then %v", k, err, len(want), wantErr)
				}
				return
			}
			if k >= len(want) || !bytes.Equal(got, want[k]) {
				t.Fatalf("request %d: %q, want %d requests %q", k, got, len(want), want)
			}
		}
	})
}
