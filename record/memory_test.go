package record

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
)

// countingSink counts what is written and keeps none of it.
type countingSink struct{ n int64 }

func (s *countingSink) Write(p []byte) (int, error) { s.n += int64(len(p)); return len(p), nil }

// What a recording's writer keeps per chunk it has written, with many
// channels: the index entry MCAP's summary needs, not one offset per
// channel (with message indexes: 1.3 kB a chunk at 50 channels, and a
// long run's memory grew with its recording).
func TestMemoryPerChunk(t *testing.T) {
	w, err := newMCAPWriter(&countingSink{}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&mcap.Header{Profile: Profile}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSchema(&mcap.Schema{ID: 1, Name: "x", Encoding: "ros2msg", Data: []byte("float64 x")}); err != nil {
		t.Fatal(err)
	}
	for c := uint16(1); c <= 50; c++ {
		if err := w.WriteChannel(&mcap.Channel{ID: c, SchemaID: 1, Topic: fmt.Sprintf("/c%d", c), MessageEncoding: "cdr"}); err != nil {
			t.Fatal(err)
		}
	}
	data := make([]byte, 64)
	var seq uint32
	write := func(n int) {
		for range n {
			seq++
			ns := uint64(seq) * 1000
			if err := w.WriteMessage(&mcap.Message{ChannelID: uint16(seq%50) + 1, Sequence: seq, LogTime: ns, PublishTime: ns, Data: data}); err != nil {
				t.Fatal(err)
			}
		}
	}
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	write(10_000)
	h0, c0 := heap(), int64(w.Statistics.ChunkCount)
	write(200_000)
	h1, c1 := heap(), int64(w.Statistics.ChunkCount)
	if c1-c0 < 1000 {
		t.Fatalf("only %d chunks written", c1-c0)
	}
	if per := (h1 - h0) / (c1 - c0); per > 400 {
		t.Errorf("the live heap grew %d B per chunk over %d chunks, want ≤ 400", per, c1-c0)
	} else {
		t.Logf("the live heap grew %d B per chunk over %d chunks", per, c1-c0)
	}
}
