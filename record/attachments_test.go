package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// An attachment record whose name or media type claims more bytes than the
// record holds is corrupt, and reading it allocates no more than the file
// (mcap's lexer allocated the claimed 4 GiB, zeroed, which FuzzRead found:
// 11-19 s and 1.9 GB of memory for a 11 kB file); a good one still reads,
// in reads of any size.
func TestAttachmentLengths(t *testing.T) {
	whole := fuzzRecording(t)
	name := []byte("summary.json")
	i := bytes.Index(whole, name)
	if i < 4 {
		t.Fatalf("no attachment named %s in the seed recording", name)
	}
	for _, tc := range []struct {
		what string
		at   int // offset of the length to break
	}{
		{"name", i - 4},
		{"media type", i + len(name)},
	} {
		for _, claim := range []uint32{0xfffffff0, 1 << 20, uint32(len(whole))} {
			b := bytes.Clone(whole)
			binary.LittleEndian.PutUint32(b[tc.at:], claim)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := read(bytes.NewReader(b), int64(len(b)), "bad.mcap", nil)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s length %d: err %v, want ErrCorrupt", tc.what, claim, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
				t.Errorf("%s length %d: reading allocated %d bytes", tc.what, claim, grew)
			}
		}
	}
	for _, step := range []int{1, 3, 7, 64, 1 << 16} {
		f, err := read(&chunked{b: whole, step: step}, int64(len(whole)), "good.mcap", nil)
		if err != nil || !f.Complete || string(f.Attachments["summary.json"]) != `{"mode":"consistent"}` {
			t.Errorf("reads of %d bytes: complete %v, attachments %v, err %v", step, f != nil && f.Complete, f, err)
		}
	}
}

// chunked reads b at most step bytes at a time.
type chunked struct {
	b    []byte
	step int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.step)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// An attachment record inside a chunk (FuzzRead's input afbe69ad03d99099:
// a name of 3 GiB claimed in a chunk of a 4.6 kB file) is not parsed at
// all: reading the file allocates no more than a few MiB.
func TestAttachmentInChunk(t *testing.T) {
	raw, err := os.ReadFile("testdata/fuzz/FuzzRead/afbe69ad03d99099")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		t.Fatalf("not a fuzz input: %q", lines[1])
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(s)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = read(bytes.NewReader(b), int64(len(b)), "chunk.mcap", nil)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading %d bytes allocated %d", len(b), grew)
	}
}
