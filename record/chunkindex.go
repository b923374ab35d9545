package record

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// chunkSpill keeps the MCAP writer's chunk index entries in a file while
// the recording runs. The writer holds one entry per chunk until Close
// (they make the summary), each with a map of message-index offsets per
// channel, a kB or more: a long run's memory would grow with its
// recording. After every drain the new entries are appended to an
// unlinked file next to the recording and dropped from the writer; Close
// reads them back just before the summary is written.
type chunkSpill struct {
	f   *os.File
	n   int // entries in the file
	buf []byte
}

// newChunkSpill creates the spill file in the recording's folder (the
// same file system, not a tmpfs that would hold it in memory) without a
// name (linux.UnnamedFile), so nothing is left behind however the run
// ends, even killed as it creates the file.
func newChunkSpill(path string) (*chunkSpill, error) {
	f, err := linux.UnnamedFile(filepath.Dir(path), "."+filepath.Base(path)+".chunks-*")
	if err != nil {
		return nil, fmt.Errorf("chunk index file: %w", err)
	}
	return &chunkSpill{f: f}, nil
}

// save appends the writer's chunk index entries to the file and empties
// the writer's list, keeping its capacity.
func (s *chunkSpill) save(mw *mcap.Writer) error {
	if len(mw.ChunkIndexes) == 0 {
		return nil
	}
	s.buf = s.buf[:0]
	for _, ci := range mw.ChunkIndexes {
		s.buf = appendChunkIndex(s.buf, ci)
	}
	if _, err := s.f.Write(s.buf); err != nil {
		return fmt.Errorf("chunk index file: %w", err)
	}
	s.n += len(mw.ChunkIndexes)
	clear(mw.ChunkIndexes)
	mw.ChunkIndexes = mw.ChunkIndexes[:0]
	return nil
}

// restore puts every saved entry back in front of the writer's own (those
// of chunks flushed since the last save), in the order they were made.
func (s *chunkSpill) restore(mw *mcap.Writer) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("chunk index file: %w", err)
	}
	all := make([]*mcap.ChunkIndex, 0, s.n+len(mw.ChunkIndexes))
	br := bufio.NewReader(s.f)
	for range s.n {
		ci, err := readChunkIndex(br)
		if err != nil {
			return fmt.Errorf("chunk index file: entry %d of %d: %w", len(all)+1, s.n, err)
		}
		all = append(all, ci)
	}
	mw.ChunkIndexes = append(all, mw.ChunkIndexes...)
	return nil
}

func (s *chunkSpill) close() error { return s.f.Close() }

// appendChunkIndex encodes ci: its fixed fields, its compression, then
// its (channel, offset) pairs.
func appendChunkIndex(b []byte, ci *mcap.ChunkIndex) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, ci.MessageStartTime)
	b = le.AppendUint64(b, ci.MessageEndTime)
	b = le.AppendUint64(b, ci.ChunkStartOffset)
	b = le.AppendUint64(b, ci.ChunkLength)
	b = le.AppendUint64(b, ci.MessageIndexLength)
	b = le.AppendUint64(b, ci.CompressedSize)
	b = le.AppendUint64(b, ci.UncompressedSize)
	b = append(b, byte(len(ci.Compression)))
	b = append(b, ci.Compression...)
	b = le.AppendUint16(b, uint16(len(ci.MessageIndexOffsets)))
	for ch, off := range ci.MessageIndexOffsets {
		b = le.AppendUint16(b, ch)
		b = le.AppendUint64(b, off)
	}
	return b
}

// readChunkIndex decodes what appendChunkIndex wrote.
func readChunkIndex(r *bufio.Reader) (*mcap.ChunkIndex, error) {
	var fixed [7*8 + 1]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	ci := &mcap.ChunkIndex{
		MessageStartTime:   le.Uint64(fixed[0:]),
		MessageEndTime:     le.Uint64(fixed[8:]),
		ChunkStartOffset:   le.Uint64(fixed[16:]),
		ChunkLength:        le.Uint64(fixed[24:]),
		MessageIndexLength: le.Uint64(fixed[32:]),
		CompressedSize:     le.Uint64(fixed[40:]),
		UncompressedSize:   le.Uint64(fixed[48:]),
	}
	comp := make([]byte, fixed[56])
	var n [2]byte
	if _, err := io.ReadFull(r, comp); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	ci.Compression = mcap.CompressionFormat(comp)
	ci.MessageIndexOffsets = make(map[uint16]uint64, le.Uint16(n[:]))
	var pair [10]byte
	for range le.Uint16(n[:]) {
		if _, err := io.ReadFull(r, pair[:]); err != nil {
			return nil, err
		}
		ci.MessageIndexOffsets[le.Uint16(pair[:])] = le.Uint64(pair[2:])
	}
	if len(ci.MessageIndexOffsets) != int(le.Uint16(n[:])) {
		return nil, errors.New("a channel named twice")
	}
	return ci, nil
}
