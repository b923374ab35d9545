package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

// ReadChannel is one channel of a recording as Read found it.
type ReadChannel struct {
	ID         uint16
	Topic      string
	Type       string // the schema's name (ROS 2 type)
	Definition string // the schema's ros2msg text
	Metadata   map[string]string
	// Messages counts the channel's messages read; FirstLog and LastLog are
	// their first and last log times (virtual ns).
	Messages          int64
	FirstLog, LastLog int64
}

// File is what Read found in a recording besides the messages.
type File struct {
	Path    string
	Profile string
	// Complete is true when the file ends with its summary section and
	// footer (the run closed it). A recording whose tcs was killed
	// (SIGKILL) is a readable prefix: Complete false, TruncatedErr says
	// where it stopped.
	Complete     bool
	TruncatedErr error
	// Channels in the order they appear.
	Channels []*ReadChannel
	// Attachments by name (summary.json).
	Attachments map[string][]byte
	// Metadata by record name ("tcs").
	Metadata map[string]map[string]string
	// Messages counts every message read.
	Messages int64
}

// maxRecord bounds one record of a file read (a corrupt length is not
// allocated).
const maxRecord = 256 << 20

// ErrCorrupt is wrapped by Read's error when the file is not a recording
// the MCAP reader can make sense of.
var ErrCorrupt = errors.New("corrupt recording")

// Read reads the recording at path from its start, record by record
// (chunk CRCs checked), and calls fn (when not nil) with each message and
// its channel; the message's Data is valid during the call only. A file cut
// short (a killed run) is read up to its last whole record: Read then
// returns no error and File.Complete is false. An error from fn stops the
// reading and is returned.
func Read(path string, fn func(ch *ReadChannel, m *mcap.Message) error) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	return read(bufio.NewReaderSize(f, 1<<20), st.Size(), path, fn)
}

// read is Read on r, the size bytes of the recording at path (size 0:
// unknown). No record is larger than its file: a corrupt length is refused
// before it is allocated.
func read(r io.Reader, size int64, path string, fn func(ch *ReadChannel, m *mcap.Message) error) (*File, error) {
	out := &File{Path: path, Attachments: map[string][]byte{}, Metadata: map[string]map[string]string{}}
	// A file shorter than the magic that begins like it is a recording
	// cut short before its first record (a run killed as it began): empty.
	head := make([]byte, len(mcap.Magic))
	n, err := io.ReadFull(r, head)
	if err != nil && n < len(head) {
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !bytes.Equal(head[:n], mcap.Magic[:n]) {
			return nil, fmt.Errorf("%s: not an MCAP file: %d bytes that are not its magic", path, n)
		}
		out.TruncatedErr = fmt.Errorf("%d bytes, cut short inside the MCAP magic", n)
		return out, nil
	}
	tap := newAttachmentTap(io.MultiReader(bytes.NewReader(head), r))
	if out, err = readRecords(tap, limitOf(size), path, out, fn); out == nil {
		return nil, err
	}
	// The attachments read whole, of a recording cut short too.
	for _, b := range tap.bodies {
		name, data, aerr := parseAttachment(b)
		if aerr != nil {
			if err == nil {
				err = fmt.Errorf("%s: %w", path, aerr)
			}
			continue
		}
		out.Attachments[name] = data
	}
	if err == nil && tap.err != nil {
		err = fmt.Errorf("%s: %w", path, tap.err)
	}
	return out, err
}

// limitOf is the largest record a recording of size bytes may hold (0:
// size unknown).
func limitOf(size int64) int64 {
	limit := int64(maxRecord)
	if size > 0 { // (0: not a regular file, size unknown)
		limit = min(limit, size)
	}
	return limit
}

// readRecords lexes the records of a recording into out; attachments are
// skipped (the tap keeps them).
func readRecords(r io.Reader, limit int64, path string, out *File, fn func(ch *ReadChannel, m *mcap.Message) error) (*File, error) {
	// A chunk is decompressed into a buffer of twice the size it claims,
	// allocated before it is read: a small file may not claim much more
	// than it could hold compressed (256 to 1 is beyond any real data's
	// ratio; tcs writes its chunks uncompressed), and twice tcs's chunk
	// size is always allowed (a prefix a killed run left may end inside
	// its first chunk).
	chunkLimit := min(int64(maxRecord), max(256*limit, 2*DefaultChunkSize))
	lex, err := mcap.NewLexer(r, &mcap.LexerOptions{
		ValidateChunkCRCs: true, MaxRecordSize: int(limit), MaxDecompressedChunkSize: int(chunkLimit),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: not an MCAP file: %w", path, err)
	}
	defer lex.Close()
	schemas := map[uint16]*mcap.Schema{}
	chans := map[uint16]*ReadChannel{}
	var msg mcap.Message
	buf := make([]byte, 1<<16)
	footer := false
	for {
		tok, rec, err := lexNext(lex, buf)
		if footer {
			switch {
			case errors.Is(err, io.EOF):
				out.Complete = true
				return out, nil
			case err != nil && !errors.Is(err, ErrCorrupt) && isTruncation(err):
				out.TruncatedErr = fmt.Errorf("the closing magic is cut short: %w", err)
				return out, nil
			}
			return out, fmt.Errorf("%s: %w: bytes after the footer that are not the closing magic", path, ErrCorrupt)
		}
		if errors.Is(err, ErrCorrupt) {
			return out, fmt.Errorf("%s: after %d messages: %w", path, out.Messages, err)
		}
		if err != nil {
			if errors.Is(err, mcap.ErrRecordTooLarge) && limit < maxRecord {
				// The record claims more bytes than the whole file holds:
				// the file ends inside it (a killed run's, inside the chunk
				// it was writing) or its length is corrupt; either way what
				// came before it is read, and it is not.
				err = fmt.Errorf("the last record is cut short: %w", err)
				out.TruncatedErr = err
				return out, nil
			}
			if !isTruncation(err) {
				return out, fmt.Errorf("%s: after %d messages: %w", path, out.Messages, err)
			}
			out.TruncatedErr = err
			return out, nil
		}
		if len(rec) > len(buf) {
			buf = rec
		}
		switch tok {
		case mcap.TokenHeader:
			h, err := mcap.ParseHeader(rec)
			if err != nil {
				return out, fmt.Errorf("%s: header: %w", path, err)
			}
			out.Profile = h.Profile
		case mcap.TokenSchema:
			s, err := mcap.ParseSchema(rec)
			if err != nil {
				return out, fmt.Errorf("%s: schema: %w", path, err)
			}
			s.Data = append([]byte(nil), s.Data...)
			schemas[s.ID] = s
		case mcap.TokenChannel:
			c, err := mcap.ParseChannel(rec)
			if err != nil {
				return out, fmt.Errorf("%s: channel: %w", path, err)
			}
			if _, seen := chans[c.ID]; seen {
				continue
			}
			rc := &ReadChannel{ID: c.ID, Topic: c.Topic, Metadata: c.Metadata, FirstLog: -1}
			if s := schemas[c.SchemaID]; s != nil {
				rc.Type, rc.Definition = s.Name, string(s.Data)
			}
			chans[c.ID] = rc
			out.Channels = append(out.Channels, rc)
		case mcap.TokenMessage:
			if err := msg.PopulateFrom(rec, false); err != nil {
				return out, fmt.Errorf("%s: message %d: %w", path, out.Messages, err)
			}
			rc := chans[msg.ChannelID]
			if rc == nil {
				return out, fmt.Errorf("%s: message %d on unknown channel %d", path, out.Messages, msg.ChannelID)
			}
			lt := int64(msg.LogTime)
			if rc.Messages == 0 {
				rc.FirstLog = lt
			}
			rc.LastLog = lt
			rc.Messages++
			out.Messages++
			if fn != nil {
				if err := fn(rc, &msg); err != nil {
					return out, err
				}
			}
		case mcap.TokenMetadata:
			md, err := mcap.ParseMetadata(rec)
			if err != nil {
				return out, fmt.Errorf("%s: metadata: %w", path, err)
			}
			out.Metadata[md.Name] = md.Metadata
		case mcap.TokenFooter:
			if _, err := mcap.ParseFooter(rec); err != nil {
				return out, fmt.Errorf("%s: footer: %w", path, err)
			}
			// The footer is the last record: only the closing magic
			// may follow it (then the lexer reports io.EOF).
			footer = true
		}
	}
}

// isTruncation says whether err is the end of a file cut short.
func isTruncation(err error) bool {
	var tr *mcap.ErrTruncatedRecord
	return errors.As(err, &tr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// lexNext is lex.Next, with a panic of the lexer an error wrapping
// ErrCorrupt: mcap v1.7.0 indexes its buffers with lengths from the file
// (a chunk's compression name longer than 24 bytes panics), and a corrupt
// file must not end the program.
func lexNext(lex *mcap.Lexer, buf []byte) (tok mcap.TokenType, rec []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			tok, rec, err = mcap.TokenError, nil, fmt.Errorf("%w: the MCAP reader failed: %v", ErrCorrupt, p)
		}
	}()
	return lex.Next(buf)
}
