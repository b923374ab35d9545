package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
)

// fuzzRecording writes a small recording of two channels (a few chunks of
// 512 bytes: a seed of kilobytes keeps the fuzzer fast and its corpus
// small), with an attachment and metadata, and returns its bytes.
func fuzzRecording(f testing.TB) []byte {
	path := filepath.Join(f.TempDir(), "seed.mcap")
	r, err := Create(Conf{Path: path, Slots: 64, ChunkSize: 512})
	if err != nil {
		f.Fatal(err)
	}
	clk, _ := r.AddChannel(Clock.Channel(TopicClock))
	js, _ := r.AddChannel(JointState.Channel("/arm/joint_states"))
	names, pos := []string{"pendulum_joint"}, []float64{1}
	for i := int64(0); i < 12; i++ {
		if w := r.Begin(clk, i*1e6, i*1e6); w != nil {
			EncodeClock(w, i*1e6)
			r.Commit()
		}
		if w := r.Begin(js, i*1e6, i*1e6); w != nil {
			EncodeJointState(w, i*1e6, names, pos, pos)
			r.Commit()
		}
	}
	if err := r.Close([]Attachment{{Name: "summary.json", Data: []byte(`{"mode":"consistent"}`)}}, map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	if file, err := Read(path, nil); err != nil || !file.Complete || file.Messages != 24 {
		f.Fatalf("seed recording of %d bytes: %v", len(b), err)
	}
	return b
}

// FuzzRead: a recording from anywhere (a file cut short, corrupt, not an
// MCAP file at all) reads without a panic, to an error naming the file or
// to a consistent File (its channels' counts add up to what was handed
// over, each message on a channel Read announced). A recording that reads
// whole reads, cut at any byte, without error up to the cut: the prefix
// a killed run leaves is readable.
func FuzzRead(f *testing.F) {
	whole := fuzzRecording(f)
	f.Add(whole, uint32(len(whole)/2))
	f.Add(whole[:len(whole)/3], uint32(100))
	f.Add(whole[:40], uint32(20))
	f.Add([]byte(mcap.Magic), uint32(4))
	f.Fuzz(func(t *testing.T, b []byte, cut uint32) {
		file, n, err := readBytes(t, b)
		if err != nil {
			return
		}
		if !file.Complete || int(cut) >= len(b) {
			return
		}
		part, m, err := readBytes(t, b[:cut])
		if err != nil {
			t.Fatalf("a whole recording of %d bytes cut at %d: %v", len(b), cut, err)
		}
		if part.Complete || m > n {
			t.Fatalf("cut at %d: complete %v, %d messages of %d", cut, part.Complete, m, n)
		}
	})
}

// readBytes reads b as a recording and checks what Read returns.
func readBytes(t *testing.T, b []byte) (*File, int64, error) {
	t.Helper()
	byID := map[uint16]*ReadChannel{}
	var n int64
	file, err := read(bytes.NewReader(b), int64(len(b)), "fuzz.mcap", func(ch *ReadChannel, m *mcap.Message) error {
		if ch == nil || ch.ID != m.ChannelID {
			t.Fatalf("message on channel %d handed over with %+v", m.ChannelID, ch)
		}
		byID[ch.ID] = ch
		n++
		return nil
	})
	if err != nil {
		if !strings.Contains(err.Error(), "fuzz.mcap") {
			t.Fatalf("error does not name the file: %v", err)
		}
		return file, n, err
	}
	if file == nil {
		t.Fatal("no File and no error")
	}
	if file.Complete && file.TruncatedErr != nil {
		t.Fatalf("complete and truncated: %v", file.TruncatedErr)
	}
	var sum int64
	listed := map[uint16]bool{}
	for _, ch := range file.Channels {
		sum += ch.Messages
		listed[ch.ID] = true
	}
	for id := range byID {
		if !listed[id] {
			t.Fatalf("messages on channel %d, not among the file's channels", id)
		}
	}
	if sum != n || file.Messages != n {
		t.Fatalf("handed over %d messages; channels count %d, the file %d", n, sum, file.Messages)
	}
	return file, n, nil
}

// TestReadCorruptChunk: a chunk whose compression name is longer than the
// MCAP lexer's buffer is an error naming the file, not a panic.
func TestReadCorruptChunk(t *testing.T) {
	b := []byte(mcap.Magic)
	b = append(b, byte(mcap.OpChunk))
	b = append(b, 0xff, 0, 0, 0, 0, 0, 0, 0) // record length
	b = append(b, make([]byte, 28)...)       // start, end, size, CRC
	b = append(b, 0xff, 0, 0, 0)             // compression: 255 bytes
	b = append(b, make([]byte, 300)...)
	_, err := read(bytes.NewReader(b), int64(len(b)), "bad.mcap", nil)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bad.mcap") {
		t.Fatalf("got %v, want ErrCorrupt naming the file", err)
	}
}

// TestReadChunkClaimsBounded: a chunk that claims to decompress to far
// more than its file could hold is refused before its buffer is
// allocated (mcap allocates twice the claim, up to 512 MiB before).
func TestReadChunkClaimsBounded(t *testing.T) {
	b := []byte(mcap.Magic)
	b = append(b, byte(mcap.OpChunk))
	b = append(b, 60, 0, 0, 0, 0, 0, 0, 0) // record length
	b = append(b, make([]byte, 16)...)     // start, end
	b = append(b, 0, 0, 0, 15, 0, 0, 0, 0) // uncompressed size: 240 MiB
	b = append(b, make([]byte, 4)...)      // CRC
	b = append(b, 0, 0, 0, 0)              // compression: none
	b = append(b, 16, 0, 0, 0, 0, 0, 0, 0) // records length
	b = append(b, make([]byte, 16)...)     // records
	b = append(b, []byte(mcap.Magic)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := read(bytes.NewReader(b), int64(len(b)), "claims.mcap", nil)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("a %d-byte file made Read allocate %d MiB", len(b), got>>20)
	}
	if err == nil || !strings.Contains(err.Error(), "claims.mcap") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}

// Every prefix of a whole recording reads without error, as far as it
// goes: the file a killed run leaves may end inside any record, also
// inside a chunk that claims more bytes than the whole prefix holds.
func TestReadEveryPrefix(t *testing.T) {
	whole := fuzzRecording(t)
	_, n, err := readBytes(t, whole)
	if err != nil {
		t.Fatal(err)
	}
	// (Cut only in the closing magic, the footer has been read: whole.)
	for cut := len(mcap.Magic); cut < len(whole)-len(mcap.Magic); cut++ {
		part, m, err := readBytes(t, whole[:cut])
		if err != nil {
			t.Fatalf("the recording of %d bytes cut at %d: %v", len(whole), cut, err)
		}
		if part.Complete || m > n {
			t.Fatalf("cut at %d: complete %v, %d messages of %d", cut, part.Complete, m, n)
		}
	}
}

// TestReadCutInMagic: a file that is a prefix of the MCAP magic (a run
// killed before its first record) reads as an empty recording cut short;
// a short file that is not is an error naming it.
func TestReadCutInMagic(t *testing.T) {
	for n := 0; n < len(mcap.Magic); n++ {
		f, err := read(bytes.NewReader(mcap.Magic[:n]), int64(n), "cut.mcap", nil)
		if err != nil || f.Complete || f.TruncatedErr == nil || f.Messages != 0 {
			t.Fatalf("%d bytes of the magic: %+v, %v", n, f, err)
		}
	}
	_, err := read(bytes.NewReader([]byte("abc")), 3, "text.mcap", nil)
	if err == nil || !strings.Contains(err.Error(), "text.mcap") {
		t.Fatalf("3 bytes of text: %v, want an error naming the file", err)
	}
}
