package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/foxglove/mcap/go/mcap"
)

// maxAttachment is the largest attachment record Read keeps (tcs's are a
// summary and a scenario, kilobytes).
const maxAttachment = 64 << 20

// attachmentTap passes a recording's bytes to mcap's lexer and keeps a copy
// of every top-level attachment record's body, which Read parses itself:
// mcap v1.7.0's lexer, given an attachment callback, allocates an
// attachment's name and media type at their claimed lengths (up to 4 GiB,
// zeroed) before it reads them, inside chunks too, where no length can be
// checked before it. Without a callback it skips attachments, allocating
// nothing. The tap follows the top-level records (magic, then opcode,
// length, body) whatever sizes the lexer reads in; it copies no more than
// the bytes that pass.
type attachmentTap struct {
	r io.Reader

	magic  int    // magic bytes still to pass
	hdr    []byte // the record header being gathered (opcode, length)
	left   uint64 // body bytes of the current record still to pass
	keep   bool   // the current record is an attachment: its body is kept
	cur    []byte // its body so far
	bodies [][]byte
	err    error // an attachment too large to keep
}

func newAttachmentTap(r io.Reader) *attachmentTap {
	return &attachmentTap{r: r, magic: len(mcap.Magic), hdr: make([]byte, 0, 9)}
}

func (t *attachmentTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for b := p[:n]; len(b) > 0; {
		b = b[t.pass(b):]
	}
	return n, err
}

// pass follows b and returns how many of its bytes it took: the rest of
// the magic, of a record's header or of its body.
func (t *attachmentTap) pass(b []byte) int {
	switch {
	case t.magic > 0:
		k := min(t.magic, len(b))
		t.magic -= k
		return k
	case t.left > 0:
		k := int(min(t.left, uint64(len(b))))
		if t.keep {
			t.cur = append(t.cur, b[:k]...)
		}
		t.left -= uint64(k)
		if t.left == 0 && t.keep {
			t.bodies, t.cur, t.keep = append(t.bodies, t.cur), nil, false
		}
		return k
	}
	k := min(9-len(t.hdr), len(b))
	t.hdr = append(t.hdr, b[:k]...)
	if len(t.hdr) == 9 {
		op, n := mcap.OpCode(t.hdr[0]), binary.LittleEndian.Uint64(t.hdr[1:9])
		t.hdr = t.hdr[:0]
		t.left = n
		t.keep = op == mcap.OpAttachment
		if t.keep && n > maxAttachment && t.err == nil {
			t.err = fmt.Errorf("an attachment record of %d bytes (tcs reads up to %d)", n, maxAttachment)
			t.keep = false
		}
		if t.keep && n == 0 {
			t.bodies, t.keep = append(t.bodies, nil), false
		}
	}
	return k
}

// parseAttachment parses an attachment record's body: log time, create
// time, name, media type, data size, data, CRC-32 of what precedes it
// (0: none). Every length is checked against the body.
func parseAttachment(b []byte) (name string, data []byte, err error) {
	at := 16 // the two times
	str := func(what string) (string, error) {
		if len(b)-at < 4 {
			return "", fmt.Errorf("%w: an attachment record of %d bytes ends before its %s", ErrCorrupt, len(b), what)
		}
		n := uint64(binary.LittleEndian.Uint32(b[at:]))
		at += 4
		if n > uint64(len(b)-at) {
			return "", fmt.Errorf("%w: an attachment record of %d bytes claims a %s of %d bytes", ErrCorrupt, len(b), what, n)
		}
		s := string(b[at : at+int(n)])
		at += int(n)
		return s, nil
	}
	if len(b) < at {
		return "", nil, fmt.Errorf("%w: an attachment record of %d bytes", ErrCorrupt, len(b))
	}
	if name, err = str("name"); err != nil {
		return "", nil, err
	}
	if _, err = str("media type"); err != nil {
		return "", nil, err
	}
	if len(b)-at < 8 {
		return "", nil, fmt.Errorf("%w: attachment %s ends before its data size", ErrCorrupt, name)
	}
	size := binary.LittleEndian.Uint64(b[at:])
	at += 8
	if size > uint64(len(b)-at) || uint64(len(b)-at)-size < 4 {
		return "", nil, fmt.Errorf("%w: attachment %s claims %d bytes of data in a record of %d", ErrCorrupt, name, size, len(b))
	}
	data = b[at : at+int(size)]
	at += int(size)
	if crc := binary.LittleEndian.Uint32(b[at:]); crc != 0 && crc != crc32.ChecksumIEEE(b[:at]) {
		return "", nil, fmt.Errorf("%w: attachment %s: CRC mismatch", ErrCorrupt, name)
	}
	return name, data, nil
}
