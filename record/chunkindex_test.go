package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
)

// A recording of many small chunks keeps none of their index entries in
// the writer while it runs (they wait in the spill file), and its summary
// still indexes every chunk: each entry points at its chunk and at a
// message index of each channel in it, and an indexed reader finds every
// message in order. The spill file leaves nothing in the folder.
func TestChunkIndexSpilled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.mcap")
	r, err := Create(Conf{Path: path, ChunkSize: 4096, Slots: 1 << 12})
	if err != nil {
		t.Fatal(err)
	}
	const nch, per = 40, 100
	var ids [nch]uint16
	for i := range ids {
		ids[i], _ = r.AddChannel(Float64.Channel(fmt.Sprintf("/v%d", i)))
	}
	for k := 0; k < per; k++ {
		for i, id := range ids {
			for r.head.Load()-r.tail.Load() > 1<<11 {
			}
			w := r.Begin(id, int64(k*nch+i), int64(k*nch+i))
			if w == nil {
				t.Fatal("ring full")
			}
			EncodeFloat64(w, float64(i))
			r.Commit()
		}
	}
	r.Drain()
	chunks := int(r.mw.Statistics.ChunkCount)
	if chunks < 20 || r.spill.n != chunks || len(r.mw.ChunkIndexes) != 0 {
		t.Fatalf("after the drain: %d chunks flushed, %d entries spilled, %d left in the writer; want ≥ 20, all spilled, none left",
			chunks, r.spill.n, len(r.mw.ChunkIndexes))
	}
	if err := r.Close(nil, nil); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("folder holds %d files, want the recording alone", len(ents))
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := mcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	info, err := rd.Info()
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ChunkIndexes) != int(info.Statistics.ChunkCount) {
		t.Fatalf("summary indexes %d chunks of %d", len(info.ChunkIndexes), info.Statistics.ChunkCount)
	}
	record := func(off uint64) (mcap.OpCode, uint64, []byte) {
		var b [11]byte
		if _, err := f.ReadAt(b[:], int64(off)); err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		return mcap.OpCode(b[0]), binary.LittleEndian.Uint64(b[1:]), b[9:]
	}
	var prevEnd uint64
	for i, ci := range info.ChunkIndexes {
		op, n, _ := record(ci.ChunkStartOffset)
		if op != mcap.OpChunk || 9+n != ci.ChunkLength || ci.ChunkStartOffset < prevEnd {
			t.Fatalf("chunk index %d: opcode %v length %d at %d (previous chunk ended at %d), want a chunk of %d",
				i, op, 9+n, ci.ChunkStartOffset, prevEnd, ci.ChunkLength)
		}
		prevEnd = ci.ChunkStartOffset + ci.ChunkLength
		if len(ci.MessageIndexOffsets) == 0 {
			t.Fatalf("chunk index %d names no message index", i)
		}
		for ch, off := range ci.MessageIndexOffsets {
			op, _, body := record(off)
			if op != mcap.OpMessageIndex || binary.LittleEndian.Uint16(body) != ch {
				t.Fatalf("chunk index %d: channel %d's message index at %d is opcode %v of channel %d",
					i, ch, off, op, binary.LittleEndian.Uint16(body))
			}
		}
	}
	it, err := rd.Messages(mcap.UsingIndex(true))
	if err != nil {
		t.Fatal(err)
	}
	var m mcap.Message
	for k := 0; ; k++ {
		_, _, msg, err := it.NextInto(&m)
		if err != nil {
			if k != nch*per {
				t.Fatalf("indexed reader: %d messages then %v, want %d", k, err, nch*per)
			}
			break
		}
		if msg.LogTime != uint64(k) {
			t.Fatalf("indexed reader: message %d has log time %d", k, msg.LogTime)
		}
	}
}
