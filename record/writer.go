package record

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// Channel is one recorded topic: its name, its ROS 2 type and ros2msg
// definition, and channel metadata (offered_qos_profiles is added).
type Channel struct {
	Topic      string
	Type       string // ROS 2 type name, "pkg/msg/Name"
	Definition string // ros2msg text
	Metadata   map[string]string
}

// Conf configures a Recorder. Zero fields take their defaults.
type Conf struct {
	// Path is the MCAP file to create (truncated if it exists).
	Path string
	// Slots is the ring's size in records (rounded up to a power of two);
	// default DefaultSlots. A record that finds the ring full is dropped
	// and counted.
	Slots int
	// SlotBytes is each slot's own buffer; default 256. A bigger record
	// is written into a spare buffer (see Recorder), which goes back to
	// the spares once written.
	SlotBytes int
	// ChunkSize is the size of the MCAP chunks (uncompressed); default
	// DefaultChunkSize. A SIGKILL loses at most the chunk being filled
	// and what was in the ring.
	ChunkSize int64
	// Poll is how often the writer goroutine drains the ring; default
	// 20 ms. It also drains it as soon as a quarter of the slots hold
	// records. Each wake-up of the writer costs the other CPUs a thread's
	// wake-up; what waits in the ring is lost only with the process.
	Poll time.Duration
	// ROSDistro is the ROS 2 distribution named in rosbag2's metadata
	// record (ros2 bag info's "ROS Distro"), like jazzy; default none
	// (ros2 bag info says unknown).
	ROSDistro string
}

// Defaults of Conf.
const (
	DefaultSlots     = 1 << 15
	DefaultChunkSize = 1 << 20
	defaultSlotBytes = 256
	defaultPoll      = 20 * time.Millisecond
	// MaxChannels bounds the channels of one recording.
	MaxChannels = 4096
	// spareCap bounds the spare buffers kept for records bigger than a
	// slot's own buffer.
	spareCap = 64
)

// Profile is the MCAP profile of a recording (rosbag2's).
const Profile = "ros2"

// qosProfile is what rosbag2 (Humble) stores as a channel's
// offered_qos_profiles for a reliable, volatile publisher.
const qosProfile = `- history: 3
  depth: 0
  reliability: 1
  durability: 2
  deadline:
    sec: 2147483647
    nsec: 4294967295
  lifespan:
    sec: 2147483647
    nsec: 4294967295
  liveliness: 1
  liveliness_lease_duration:
    sec: 2147483647
    nsec: 4294967295
  avoid_ros_namespace_conventions: false
`

type slot struct {
	exp      uint16 // expander id + 1 (0: a record of channel ch)
	ch       uint16
	log, pub uint64
	w        cdr.Writer
	buf      []byte // own (cap SlotBytes) or a spare
	own      []byte // the slot's part of the preallocated block
}

// Recorder writes an MCAP file (profile ros2, cdr messages, chunked and
// indexed) from one producer thread without blocking it: the producer
// fills preallocated slots of a ring (Begin, Commit), a writer goroutine
// drains the ring to disk. Begin, Commit, Abort, AddChannel, Stats and Close
// are for the producer only.
//
// Each slot has a small buffer of its own. A channel (or expander) that
// once wrote a record bigger than that is marked big; its records then
// take a spare buffer, which the writer hands back to the spares once
// the record is written (a second single-producer ring, the other way).
// A slot therefore never keeps a grown buffer: one 3.5 KB /diagnostics a
// second landing on ever new slots would otherwise grow the ring's memory
// for hours, up to slots × the biggest record. Begin and Commit do not
// allocate once the spares have grown, unless more big records are in
// the ring than spareCap.
type Recorder struct {
	conf     Conf
	f        *os.File
	mw       *mcap.Writer
	spill    *chunkSpill // the chunk index until Close
	slots    []slot
	mask     uint64
	head     atomic.Uint64 // next slot the producer fills
	tail     atomic.Uint64 // next slot the writer drains
	cur      *slot
	chans    [MaxChannels]atomic.Pointer[Channel]
	nchan    int
	closed   bool
	exps     []expander // fixed from the first BeginRaw on (rawBegun)
	rawBegun bool

	// Big records: the channels and expanders that wrote one (producer
	// side), and the spare buffers (the writer fills spare at spareHead,
	// the producer takes them at spareTail).
	bigCh     [MaxChannels]bool
	bigExp    []bool
	spare     [spareCap][]byte
	spareHead atomic.Uint64
	spareTail atomic.Uint64

	// producer-side counts
	records [MaxChannels]int64
	dropped [MaxChannels]int64

	// writer side
	closing atomic.Bool
	wake    chan struct{} // Drain and a quarter-full ring wake the writer from its poll sleep
	// noEarlyWake: Commit leaves the writer to its poll even with the
	// ring a quarter full (set by tests of a full ring, before any commit).
	noEarlyWake bool
	done        chan struct{}
	written     [MaxChannels]bool
	schemas     map[string]uint16
	seq         [MaxChannels]uint32
	msg         mcap.Message
	batch       Batch
	rd          cdr.Reader
	werr        error
	nwritten    atomic.Int64
	lost        atomic.Int64 // records not written after a write error
}

// Stats counts what the producer handed over and what was dropped.
type Stats struct {
	// Records is the number of records committed, per channel id.
	Records []int64
	// Dropped is the number of records that found the ring full, per
	// channel id.
	Dropped []int64
	// Written is the number of records the writer wrote to the file so
	// far; Lost those it could not (a write error).
	Written, Lost int64
}

// Create creates the file and starts the writer goroutine.
func Create(conf Conf) (*Recorder, error) {
	if conf.Slots <= 0 {
		conf.Slots = DefaultSlots
	}
	n := 1
	for n < conf.Slots {
		n <<= 1
	}
	conf.Slots = n
	if conf.SlotBytes <= 0 {
		conf.SlotBytes = defaultSlotBytes
	}
	if conf.ChunkSize <= 0 {
		conf.ChunkSize = DefaultChunkSize
	}
	if conf.Poll <= 0 {
		conf.Poll = defaultPoll
	}
	f, err := os.Create(conf.Path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	mw, err := mcap.NewWriter(f, &mcap.WriterOptions{
		IncludeCRC: true, Chunked: true, ChunkSize: conf.ChunkSize, Compression: mcap.CompressionNone,
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("record: %s: %w", conf.Path, err)
	}
	if err := mw.WriteHeader(&mcap.Header{Profile: Profile, Library: "tcs (mcap go v1.7.0)"}); err != nil {
		f.Close()
		return nil, fmt.Errorf("record: %s: header: %w", conf.Path, err)
	}
	spill, err := newChunkSpill(conf.Path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("record: %s: %w", conf.Path, err)
	}
	r := &Recorder{conf: conf, f: f, mw: mw, spill: spill, slots: make([]slot, n), mask: uint64(n - 1),
		wake: make(chan struct{}, 1), done: make(chan struct{}), schemas: map[string]uint16{}}
	r.batch.r = r
	// One block for every slot, its pages faulted in now: the first write
	// to a fresh page costs the dispatch thread a page fault (µs in a VM).
	sb := conf.SlotBytes
	block := make([]byte, n*sb)
	for k := 0; k < len(block); k += 4096 {
		block[k] = 0
	}
	for i := range r.slots {
		r.slots[i].own = block[i*sb : i*sb : (i+1)*sb]
		r.slots[i].buf = r.slots[i].own
	}
	go r.loop()
	return r, nil
}

// Path is the recording's file.
func (r *Recorder) Path() string { return r.conf.Path }

// AddChannel registers a topic and returns its id for Begin. It allocates:
// call it before the loop or once per new topic.
func (r *Recorder) AddChannel(c Channel) (uint16, error) {
	if r.nchan >= MaxChannels {
		return 0, fmt.Errorf("record: %s: more than %d channels", c.Topic, MaxChannels)
	}
	md := map[string]string{"offered_qos_profiles": qosProfile}
	for k, v := range c.Metadata {
		md[k] = v
	}
	c.Metadata = md
	id := uint16(r.nchan)
	r.chans[id].Store(&c)
	r.nchan++
	return id, nil
}

// An Expander writes, on the writer goroutine, the records one raw record
// stands for (Recorder.AddExpander, BeginRaw): the encoding leaves the
// producer's thread. It must write exactly one record on each of the
// channels it was added with, in that order, with out.Begin and out.Commit.
type Expander interface {
	Expand(raw *cdr.Reader, logNs, pubNs int64, out *Batch)
}

type expander struct {
	e     Expander
	chans []uint16
}

// Batch is where an Expander writes its records.
type Batch struct {
	r *Recorder
	s slot
}

// Begin starts a record on channel ch (see Recorder.Begin).
func (b *Batch) Begin(ch uint16, logNs, pubNs int64) *cdr.Writer {
	b.s.ch, b.s.log, b.s.pub = ch, uint64(max(logNs, 0)), uint64(max(pubNs, 0))
	b.s.w.Begin(b.s.buf[:0])
	return &b.s.w
}

// Commit writes the record begun last.
func (b *Batch) Commit() {
	b.s.buf = b.s.w.Buf
	b.r.write(&b.s)
}

// AddExpander adds e, which expands each raw record of the id it returns
// into one record on each of chans (added channels, counted as committed
// on them). Call it before the first BeginRaw, from the producer.
func (r *Recorder) AddExpander(e Expander, chans ...uint16) (uint16, error) {
	for _, ch := range chans {
		if int(ch) >= r.nchan {
			return 0, fmt.Errorf("record: expander: channel %d was never added", ch)
		}
	}
	if r.rawBegun {
		return 0, errors.New("record: expander added after the first raw record")
	}
	if len(r.exps) >= MaxChannels {
		return 0, errors.New("record: too many expanders")
	}
	r.exps = append(r.exps, expander{e: e, chans: append([]uint16(nil), chans...)})
	r.bigExp = append(r.bigExp, false)
	return uint16(len(r.exps) - 1), nil
}

// BeginRaw starts a raw record for expander id (AddExpander): the writer
// returned holds what the producer writes, which the expander reads back
// on the writer goroutine. Finish it with Commit or Abort. nil when the
// ring is full: each of the expander's channels counts a record dropped.
func (r *Recorder) BeginRaw(id uint16, logNs, pubNs int64) *cdr.Writer {
	if int(id) >= len(r.exps) {
		return nil
	}
	r.rawBegun = true
	w, full := r.begin(0, id+1, logNs, pubNs)
	if full {
		for _, ch := range r.exps[id].chans {
			r.dropped[ch]++
		}
	}
	return w
}

// Begin starts a record on channel ch at log time logNs and publish time
// pubNs (virtual ns; negative is written as 0) and returns the CDR writer
// of its slot, already begun (encapsulation header written). Finish it
// with Commit or Abort before the next Begin. It returns nil, and counts
// the record as dropped, when the ring is full.
func (r *Recorder) Begin(ch uint16, logNs, pubNs int64) *cdr.Writer {
	w, full := r.begin(ch, 0, logNs, pubNs)
	if full {
		r.dropped[ch]++
	}
	return w
}

// begin takes the next slot for a record of channel ch or, exp > 0, a raw
// record of expander exp-1; nil when the recorder is closing or, full true,
// when the ring is full. A big channel's record gets a spare buffer when
// one is free.
func (r *Recorder) begin(ch, exp uint16, logNs, pubNs int64) (w *cdr.Writer, full bool) {
	if r.closed || r.closing.Load() {
		return nil, false
	}
	h := r.head.Load()
	if h-r.tail.Load() >= uint64(len(r.slots)) {
		return nil, true
	}
	s := &r.slots[h&r.mask]
	s.exp, s.ch, s.log, s.pub = exp, ch, uint64(max(logNs, 0)), uint64(max(pubNs, 0))
	if cap(s.buf) == cap(s.own) && r.big(s) {
		if t := r.spareTail.Load(); t < r.spareHead.Load() {
			k := t % spareCap
			s.buf, r.spare[k] = r.spare[k], nil
			r.spareTail.Store(t + 1)
		}
	}
	s.w.Begin(s.buf[:0])
	r.cur = s
	return &s.w, false
}

// big reports whether slot s's channel or expander wrote a record bigger
// than a slot's own buffer (producer side).
func (r *Recorder) big(s *slot) bool {
	if s.exp != 0 {
		return r.bigExp[s.exp-1]
	}
	return r.bigCh[s.ch]
}

// Commit hands the record begun last to the writer.
func (r *Recorder) Commit() {
	s := r.cur
	if s == nil {
		return
	}
	r.cur = nil
	s.buf = s.w.Buf
	if s.exp != 0 {
		for _, ch := range r.exps[s.exp-1].chans {
			r.records[ch]++
		}
	} else {
		r.records[s.ch]++
	}
	if cap(s.buf) > cap(s.own) {
		if s.exp != 0 {
			r.bigExp[s.exp-1] = true
		} else {
			r.bigCh[s.ch] = true
		}
	}
	h := r.head.Load() + 1
	r.head.Store(h)
	if h-r.tail.Load() == r.mask/4+1 && !r.noEarlyWake {
		// A quarter of the ring waits: drain it before the poll is due.
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Abort forgets the record begun last.
func (r *Recorder) Abort() {
	if s := r.cur; s != nil {
		s.buf = s.w.Buf[:0]
		r.cur = nil
	}
}

// Stats returns the counts so far (it allocates its slices).
func (r *Recorder) Stats() Stats {
	st := Stats{Records: append([]int64(nil), r.records[:r.nchan]...), Dropped: append([]int64(nil), r.dropped[:r.nchan]...),
		Written: r.nwritten.Load(), Lost: r.lost.Load()}
	return st
}

// Dropped is the number of records dropped so far (ring full), all
// channels.
func (r *Recorder) Dropped() int64 {
	var n int64
	for _, d := range r.dropped[:r.nchan] {
		n += d
	}
	return n
}

// Attachment is a file stored in the recording (summary.json).
type Attachment struct {
	Name, MediaType string
	LogTime         int64
	Data            []byte
}

// Close waits for the writer to drain the ring, then adds the attachments,
// rosbag2's metadata (MCAP metadata record "rosbag2": its counts, times,
// topics and Conf.ROSDistro) and meta (record "tcs"), writes the summary
// section and footer and closes the file. It is safe to call twice.
func (r *Recorder) Close(att []Attachment, meta map[string]string) error {
	if r.closed {
		return r.werr
	}
	r.closed = true
	r.Drain()
	errs := []error{r.werr}
	if r.werr == nil {
		if err := r.spill.restore(r.mw); err != nil {
			errs = append(errs, err)
		}
	}
	if errors.Join(errs...) == nil {
		for _, a := range att {
			err := r.mw.WriteAttachment(&mcap.Attachment{Name: a.Name, MediaType: a.MediaType, LogTime: uint64(max(a.LogTime, 0)),
				DataSize: uint64(len(a.Data)), Data: bytes.NewReader(a.Data)})
			if err != nil {
				errs = append(errs, fmt.Errorf("attachment %s: %w", a.Name, err))
			}
		}
		bag, err := rosbag2Record(r.conf.Path, r.conf.ROSDistro, r.mw.Statistics, r.Channels())
		if err == nil {
			err = r.mw.WriteMetadata(&mcap.Metadata{Name: Rosbag2Metadata, Metadata: bag})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rosbag2 metadata: %w", err))
		}
		if meta != nil {
			if err := r.mw.WriteMetadata(&mcap.Metadata{Name: "tcs", Metadata: meta}); err != nil {
				errs = append(errs, fmt.Errorf("metadata: %w", err))
			}
		}
		if err := r.mw.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close: %w", err))
		}
	}
	if err := r.spill.close(); err != nil {
		errs = append(errs, err)
	}
	if err := r.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("sync: %w", err))
	}
	if err := r.f.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		r.werr = fmt.Errorf("record: %s: %w", r.conf.Path, err)
	}
	return r.werr
}

// Drain stops taking records and waits until the writer has written every
// record committed; Stats are then final. Close drains too.
func (r *Recorder) Drain() {
	r.closing.Store(true)
	select {
	case r.wake <- struct{}{}:
	default:
	}
	<-r.done
}

// loop is the writer goroutine.
func (r *Recorder) loop() {
	defer close(r.done)
	poll := time.NewTimer(r.conf.Poll)
	defer poll.Stop()
	for {
		closing := r.closing.Load()
		h := r.head.Load()
		for t := r.tail.Load(); t < h; t++ {
			s := &r.slots[t&r.mask]
			if s.exp != 0 {
				r.expand(s)
			} else {
				r.write(s)
			}
			r.giveBack(s)
			r.tail.Store(t + 1)
		}
		if r.werr == nil {
			// (Records after a failed save are counted lost as they pass.)
			r.werr = r.spill.save(r.mw)
		}
		if closing {
			return
		}
		poll.Reset(r.conf.Poll)
		select {
		case <-poll.C:
		case <-r.wake:
		}
	}
}

// giveBack puts the spare (or grown) buffer of written slot s back among
// the spares, or lets it go when they are full, and gives s its own buffer
// again (writer side).
func (r *Recorder) giveBack(s *slot) {
	if cap(s.buf) == cap(s.own) {
		return
	}
	if h := r.spareHead.Load(); h-r.spareTail.Load() < spareCap {
		r.spare[h%spareCap] = s.buf[:0]
		r.spareHead.Store(h + 1)
	}
	s.buf = s.own
}

// expand writes the records of raw slot s through its expander.
func (r *Recorder) expand(s *slot) {
	r.rd.Reset(s.w.Bytes())
	r.exps[s.exp-1].e.Expand(&r.rd, int64(s.log), int64(s.pub), &r.batch)
}

func (r *Recorder) write(s *slot) {
	if r.werr != nil {
		r.lost.Add(1)
		return
	}
	if !r.written[s.ch] {
		if r.werr = r.writeChannel(s.ch); r.werr != nil {
			r.lost.Add(1)
			return
		}
		r.written[s.ch] = true
	}
	r.msg = mcap.Message{ChannelID: s.ch + 1, Sequence: r.seq[s.ch], LogTime: s.log, PublishTime: s.pub, Data: s.w.Bytes()}
	r.seq[s.ch]++
	if err := r.mw.WriteMessage(&r.msg); err != nil {
		r.werr = fmt.Errorf("write a message on %s: %w", r.chans[s.ch].Load().Topic, err)
		r.lost.Add(1)
		return
	}
	r.nwritten.Add(1)
}

// writeChannel writes channel ch's schema (once per type) and channel.
// MCAP ids are the channel id + 1 (0 is reserved for schemas).
func (r *Recorder) writeChannel(ch uint16) error {
	c := r.chans[ch].Load()
	if c == nil {
		return fmt.Errorf("record: channel %d was never added", ch)
	}
	sid, ok := r.schemas[c.Type+"\x00"+c.Definition]
	if !ok {
		sid = uint16(len(r.schemas) + 1)
		if err := r.mw.WriteSchema(&mcap.Schema{ID: sid, Name: c.Type, Encoding: "ros2msg", Data: []byte(c.Definition)}); err != nil {
			return fmt.Errorf("write schema %s: %w", c.Type, err)
		}
		r.schemas[c.Type+"\x00"+c.Definition] = sid
	}
	if err := r.mw.WriteChannel(&mcap.Channel{ID: ch + 1, SchemaID: sid, Topic: c.Topic, MessageEncoding: "cdr", Metadata: c.Metadata}); err != nil {
		return fmt.Errorf("write channel %s: %w", c.Topic, err)
	}
	return nil
}

// Channels returns the channels added so far, by id.
func (r *Recorder) Channels() []Channel {
	out := make([]Channel, r.nchan)
	for i := range out {
		out[i] = *r.chans[i].Load()
	}
	return out
}
