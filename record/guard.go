package record

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/foxglove/mcap/go/mcap"
)

// attachmentGuard passes a recording's bytes to mcap's lexer and stops it
// before an attachment record whose name or media type claims more bytes
// than the record holds: the lexer allocates such a string at its claimed
// length (up to 4 GiB, zeroed) before it reads it. It follows the file's
// top-level records (magic, then opcode, length, body); chunk contents are
// parsed by the lexer from its own buffer and do not pass here.
type attachmentGuard struct {
	r   io.Reader
	off int64 // bytes of the file passed so far
	err error

	magic int    // magic bytes still to pass
	hdr   []byte // the record header or attachment field being gathered
	need  int    // bytes hdr must reach before it is read
	skip  uint64 // body bytes to pass unread
	body  uint64 // bytes left in the current attachment's body
	stage int    // what hdr holds: see the stage constants
}

const (
	stageHeader   = iota // opcode and length
	stageAttTimes        // log time, create time, name length
	stageAttMedia        // media type length
)

func newAttachmentGuard(r io.Reader) *attachmentGuard {
	return &attachmentGuard{r: r, magic: len(mcap.Magic), need: 9, hdr: make([]byte, 0, 20)}
}

func (g *attachmentGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; {
		k := g.pass(p[i:n])
		if g.err != nil {
			return i + k, g.err
		}
		i += k
	}
	return n, err
}

// pass follows b and returns how many of its bytes may go to the lexer:
// all of them unless a claimed length is found wrong (g.err set), then
// those before that length's field.
func (g *attachmentGuard) pass(b []byte) int {
	switch {
	case g.magic > 0:
		k := min(g.magic, len(b))
		g.magic -= k
		g.off += int64(k)
		return k
	case g.skip > 0:
		k := int(min(g.skip, uint64(len(b))))
		g.skip -= uint64(k)
		g.off += int64(k)
		return k
	}
	k := min(g.need-len(g.hdr), len(b))
	field := g.stage != stageHeader // hdr ends with a string's length
	if field && len(g.hdr) < g.need-4 {
		// The bytes before the length pass freely.
		k = min(k, g.need-4-len(g.hdr))
		g.hdr = append(g.hdr, b[:k]...)
		g.off += int64(k)
		return k
	}
	g.hdr = append(g.hdr, b[:k]...)
	if len(g.hdr) == g.need {
		if !field {
			g.header()
		} else if !g.check(g.off + int64(k) - 4) {
			// Held back: the lexer never sees the whole length.
			return 0
		}
	}
	g.off += int64(k)
	return k
}

// header reads a record's opcode and length: an attachment's fields are
// followed, any other body is passed unread.
func (g *attachmentGuard) header() {
	op, n := mcap.OpCode(g.hdr[0]), binary.LittleEndian.Uint64(g.hdr[1:9])
	g.hdr = g.hdr[:0]
	if op != mcap.OpAttachment {
		g.skip, g.need = n, 9
		return
	}
	g.body, g.stage, g.need = n, stageAttTimes, 20
}

// check reads a just completed length field (a string's, at file offset
// at): false, with g.err set, when it claims more than the body holds.
func (g *attachmentGuard) check(at int64) bool {
	l := uint64(binary.LittleEndian.Uint32(g.hdr[len(g.hdr)-4:]))
	used := uint64(len(g.hdr))
	rest := uint64(8) // the data size after the media type
	if g.stage == stageAttTimes {
		rest += 4 // the media type's length
	}
	if g.body < used || l > g.body-used || rest > g.body-used-l {
		g.err = fmt.Errorf("%w: the attachment record at offset %d claims a string of %d bytes in a body of %d",
			ErrCorrupt, at-int64(used)+4-9, l, g.body)
		return false
	}
	g.body -= used
	g.hdr = g.hdr[:0]
	if g.stage == stageAttTimes {
		// The name, then the media type's length.
		g.body -= l
		g.skip = l
		g.stage, g.need = stageAttMedia, 4
		return true
	}
	// The media type, then the data size, the data and the CRC: unread.
	g.skip = g.body
	g.body, g.stage, g.need = 0, stageHeader, 9
	return true
}
