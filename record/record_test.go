package record

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// The generic conversion of a ROS 1 JointState frame gives the same CDR
// bytes as the direct encoder, and converts back to the ROS 1 body with
// seq 0.
func TestJointStateConversion(t *testing.T) {
	names := []string{"pendulum_joint"}
	frame := msgs.AppendJointState(nil, 0, 1_500_000_000, "", names, []float64{3.14}, []float64{-0.5}, nil)
	var a, b cdr.Writer
	a.Begin(nil)
	if err := JointState.Conv.ToCDR(&a, frame[4:]); err != nil {
		t.Fatal(err)
	}
	b.Begin(nil)
	EncodeJointState(&b, 1_500_000_000, names, []float64{3.14}, []float64{-0.5})
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("converted % x\nencoded   % x", a.Bytes(), b.Bytes())
	}
	var rd cdr.Reader
	back, err := JointState.Conv.ToROS1(nil, a.Bytes(), &rd)
	if err != nil || !bytes.Equal(back, frame[4:]) {
		t.Fatalf("back %v: % x, want % x", err, back, frame[4:])
	}
}

// A definition with the ROS 1 spellings: relative types, Header, time,
// duration, char/byte, fixed arrays, constants, an empty message.
func TestConverterDefinition(t *testing.T) {
	def := `Header header
Point[2] corners # two
duration d
char c
byte b
string S="a # b"
int32 N=3
Empty e
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
================================================================================
MSG: pkg/Point
float64 x
float64 y
================================================================================
MSG: pkg/Empty
`
	c, err := NewConverter("pkg/Shape", def)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"std_msgs/Header header\n", "pkg/Point[2] corners\n", "builtin_interfaces/Duration d\n",
		"uint8 c\n", "int8 b\n", `string S="a # b"`, "int32 N=3\n", "MSG: pkg/Point\nfloat64 x\n", "MSG: builtin_interfaces/Time\n",
		"MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"} {
		if !strings.Contains(c.ROS2Definition, want) {
			t.Errorf("ROS 2 definition lacks %q:\n%s", want, c.ROS2Definition)
		}
	}
	if c.ROS2Name != "pkg/msg/Shape" {
		t.Errorf("name %q", c.ROS2Name)
	}
	// seq 7, stamp 1.2, frame "f", 2 points, duration, c, b
	body := []byte{7, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 'f'}
	for i := 0; i < 4; i++ {
		body = append(body, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f) // 1.0
	}
	body = append(body, 3, 0, 0, 0, 4, 0, 0, 0, 'x', 0xff)
	var w cdr.Writer
	w.Begin(nil)
	if err := c.ToCDR(&w, body); err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 'f', 0, 0, 0} // stamp, frame "f\0", pad to 8
	for i := 0; i < 4; i++ {
		want = append(want, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f)
	}
	want = append(want, 3, 0, 0, 0, 4, 0, 0, 0, 'x', 0xff, 0) // duration, c, b, Empty's dummy uint8
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("cdr % x\nwant % x", w.Bytes(), want)
	}
	var rd cdr.Reader
	back, err := c.ToROS1(nil, w.Bytes(), &rd)
	body[0] = 0 // seq is not in ROS 2
	if err != nil || !bytes.Equal(back, body) {
		t.Fatalf("back %v: % x\nwant % x", err, back, body)
	}
	if err := c.ToCDR(&w, body[:len(body)-1]); !errors.Is(err, ErrROS1) {
		t.Errorf("short body: %v", err)
	}
}

func TestConverterRefuses(t *testing.T) {
	for _, def := range []string{"pkg/A a\n===\nMSG: pkg/A\npkg/A a\n", "float64[x] v\n", "Missing m\n", "int32\n", "int32 1a\n"} {
		if _, err := NewConverter("pkg/A", def); !errors.Is(err, ErrDefinition) {
			t.Errorf("%q: %v", def, err)
		}
	}
}

// FuzzConverter: no definition or body makes the converter panic, and a
// body it accepts converts back to itself (Header seq aside).
func FuzzConverter(f *testing.F) {
	f.Add(msgs.DiagnosticArray.Definition, []byte{1, 2, 3})
	f.Add("string s\nfloat64[] v\nuint8[4] b\n", []byte{1, 0, 0, 0, 'a', 0, 0, 0, 0, 1, 2, 3, 4})
	f.Add("time t\nduration d\n", make([]byte, 16))
	f.Fuzz(func(t *testing.T, def string, body []byte) {
		c, err := NewConverter("fz/T", def)
		if err != nil {
			return
		}
		var w cdr.Writer
		w.Begin(nil)
		if err := c.ToCDR(&w, body); err != nil {
			return
		}
		var rd cdr.Reader
		back, err := c.ToROS1(nil, w.Bytes(), &rd)
		if err != nil {
			t.Fatalf("converted sample does not read back: %v", err)
		}
		if len(back) != len(body) {
			t.Fatalf("round trip %d bytes, want %d", len(back), len(body))
		}
		if !strings.Contains(def, "Header") && !bytes.Equal(back, body) {
			t.Fatalf("round trip % x, want % x", back, body)
		}
	})
}

// FuzzToROS1: no CDR sample makes the reverse conversion panic.
func FuzzToROS1(f *testing.F) {
	var w cdr.Writer
	w.Begin(nil)
	EncodeJointState(&w, 5, []string{"a"}, []float64{1}, []float64{2})
	f.Add(w.Bytes())
	f.Fuzz(func(t *testing.T, sample []byte) {
		var rd cdr.Reader
		_, _ = JointState.Conv.ToROS1(nil, sample, &rd)
		_, _ = DiagnosticArray.Conv.ToROS1(nil, sample, &rd)
		var p ClientProgress
		_ = p.Decode(sample)
	})
}

// The recorder writes what was committed, drops (and counts) what finds
// the ring full, and does not allocate per record once warm.
func TestRecorder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.mcap")
	r, err := Create(Conf{Path: path, Slots: 8, Poll: 1 << 40}) // the writer sleeps: the ring fills
	if err != nil {
		t.Fatal(err)
	}
	r.noEarlyWake = true
	clk, _ := r.AddChannel(Clock.Channel(TopicClock))
	ok, last := 0, 0
	for i := 0; i < 20; i++ {
		if w := r.Begin(clk, int64(i), int64(i)); w != nil {
			EncodeClock(w, int64(i))
			r.Commit()
			ok++
			last = i
		}
	}
	// The ring holds 8; the writer may have taken the first records before
	// it went to sleep (a commit into an empty ring wakes it).
	if ok < 8 || int64(ok)+r.Dropped() != 20 || r.Dropped() == 0 {
		t.Fatalf("committed %d, dropped %d; want at least 8, the rest of the 20 dropped", ok, r.Dropped())
	}
	time.Sleep(20 * time.Millisecond) // the writer is asleep in its poll: Close must wake it
	if err := r.Close([]Attachment{{Name: "summary.json", Data: []byte("{}")}}, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	var logs []uint64
	f, err := Read(path, func(ch *ReadChannel, m *mcap.Message) error {
		logs = append(logs, m.LogTime)
		return nil
	})
	// (The writer may wake and drain between drops: the records kept
	// are not always the first ok.)
	if err != nil || !f.Complete || len(logs) != ok || logs[ok-1] != uint64(last) || string(f.Attachments["summary.json"]) != "{}" || f.Metadata["tcs"]["k"] != "v" {
		t.Fatalf("read %v: complete %v, logs %v, %+v", err, f != nil && f.Complete, logs, f)
	}

	r2, err := Create(Conf{Path: filepath.Join(t.TempDir(), "a.mcap"), Slots: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close(nil, nil)
	js, _ := r2.AddChannel(JointState.Channel("/j"))
	names, pos := []string{"j"}, []float64{1}
	put := func() {
		for r2.head.Load()-r2.tail.Load() > 512 {
		}
		if w := r2.Begin(js, 1, 1); w != nil {
			EncodeJointState(w, 1, names, pos, pos)
			r2.Commit()
		}
	}
	for i := 0; i < 2048; i++ {
		put()
	}
	if n := testing.AllocsPerRun(1000, put); n != 0 {
		t.Errorf("%g allocations per record", n)
	}
}

// The writer drains the ring once a quarter of it waits, long before its
// poll is due: a run producing records faster than the poll expects loses
// none.
func TestRecorderWakesAtAQuarter(t *testing.T) {
	r, err := Create(Conf{Path: filepath.Join(t.TempDir(), "q.mcap"), Slots: 64, Poll: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(nil, nil)
	clk, _ := r.AddChannel(Clock.Channel(TopicClock))
	commit := func(n int) {
		for i := 0; i < n; i++ {
			if w := r.Begin(clk, int64(i), int64(i)); w == nil {
				t.Fatalf("record %d dropped", i)
			} else {
				EncodeClock(w, int64(i))
				r.Commit()
			}
		}
	}
	waitTail := func(want uint64) bool {
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if r.tail.Load() == want {
				return true
			}
		}
		return false
	}
	// The writer's first pass is over (it found the ring empty): it
	// sleeps in its poll. Whatever it drains, the commit that makes a
	// quarter (16) wait wakes it.
	time.Sleep(20 * time.Millisecond)
	for r.head.Load()-r.tail.Load() < 16 {
		commit(1)
	}
	if h := r.head.Load(); !waitTail(h) {
		t.Fatalf("%d of %d records drained with a quarter of the ring waiting and the poll a long way off", r.tail.Load(), h)
	}
	before := r.tail.Load()
	commit(8)
	time.Sleep(50 * time.Millisecond)
	if got := r.tail.Load(); got != before {
		t.Errorf("%d records drained with 8 waiting, want %d (the poll is not due)", got, before)
	}
}

// A record bigger than a slot's own buffer leaves no grown buffer behind
// in its slot once written: after the ring went round many times with one
// big record in eight, every slot has its own buffer back and at most
// spareCap spares are kept; the producer does not allocate once the
// spares have grown, and every record is written whole.
func TestBigRecordsLeaveNoGrownSlots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.mcap")
	r, err := Create(Conf{Path: path, Slots: 256, Poll: 50 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	small, _ := r.AddChannel(Float64MultiArray.Channel("/small"))
	big, _ := r.AddChannel(Float64MultiArray.Channel("/big"))
	vals := make([]float64, 400) // 3.2 KB, like 16 clients' /diagnostics
	n := 0
	put := func() {
		for r.head.Load()-r.tail.Load() > 128 {
		}
		ch, v := small, vals[:2]
		if n%8 == 0 {
			ch, v = big, vals
		}
		vals[0] = float64(n)
		if w := r.Begin(ch, int64(n), int64(n)); w != nil {
			EncodeFloat64MultiArray(w, v)
			r.Commit()
		}
		n++
	}
	for i := 0; i < 40*256; i++ {
		put()
	}
	if a := testing.AllocsPerRun(2000, put); a != 0 {
		t.Errorf("%g allocations per record once the spares have grown", a)
	}
	r.Drain()
	grown := 0
	for i := range r.slots {
		if cap(r.slots[i].buf) != cap(r.slots[i].own) {
			grown++
		}
	}
	spares := r.spareHead.Load() - r.spareTail.Load()
	if grown != 0 || spares > spareCap {
		t.Errorf("after %d records: %d of %d slots kept a grown buffer, %d spares (at most %d)", n, grown, len(r.slots), spares, spareCap)
	}
	if err := r.Close(nil, nil); err != nil {
		t.Fatal(err)
	}
	var got, bad int
	_, err = Read(path, func(ch *ReadChannel, m *mcap.Message) error {
		got++
		rd := cdr.NewReader(m.Data)
		rd.Uint32() // layout.dim: none
		rd.Uint32() // layout.data_offset
		k := rd.Uint32()
		want := uint32(2)
		if ch.Topic == "/big" {
			want = 400
		}
		if first := rd.Float64(); k != want || first != float64(m.LogTime) || rd.Err() != nil {
			bad++
		}
		return nil
	})
	if err != nil || got != n || bad != 0 {
		t.Fatalf("read %v: %d records of %d, %d not as written", err, got, n, bad)
	}
}

// pairExpander turns a raw record {a, b} into a Clock at a on its first
// channel and a Float64 b on its second.
type pairExpander struct{ clock, value uint16 }

func (e pairExpander) Expand(raw *cdr.Reader, logNs, pubNs int64, out *Batch) {
	a, b := raw.Int64(), raw.Float64()
	EncodeClock(out.Begin(e.clock, logNs, pubNs), a)
	out.Commit()
	EncodeFloat64(out.Begin(e.value, logNs, pubNs), b)
	out.Commit()
}

// A raw record is written as the records its expander makes of it, in
// order among the others, and counted (committed or dropped) on each of
// the expander's channels; an expander cannot be added once raw records
// began.
func TestExpander(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.mcap")
	r, err := Create(Conf{Path: path, Slots: 4, Poll: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	clk, _ := r.AddChannel(Clock.Channel(TopicClock))
	val, _ := r.AddChannel(Float64.Channel("/v"))
	other, _ := r.AddChannel(Float64.Channel("/other"))
	if _, err := r.AddExpander(pairExpander{}, clk, 9); err == nil {
		t.Fatal("expander on a channel never added: no error")
	}
	id, err := r.AddExpander(pairExpander{clk, val}, clk, val)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		if w := r.BeginRaw(id, i, i); w != nil {
			w.Int64(100 * i)
			w.Float64(float64(i) / 2)
			r.Commit()
		}
		if i == 2 {
			if w := r.Begin(other, i, i); w != nil {
				EncodeFloat64(w, -1)
				r.Commit()
			}
		}
	}
	if w := r.BeginRaw(id, 5, 5); w != nil { // the ring (4 slots) is full
		t.Fatal("BeginRaw on a full ring")
	}
	if _, err := r.AddExpander(pairExpander{}, clk); err == nil {
		t.Fatal("expander added after raw records: no error")
	}
	if err := r.Close(nil, nil); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	if st.Records[clk] != 3 || st.Records[val] != 3 || st.Records[other] != 1 || st.Dropped[clk] != 1 || st.Dropped[val] != 1 || st.Written != 7 {
		t.Fatalf("stats %+v: want 3, 3, 1 records, 1 dropped on each expanded channel, 7 written", st)
	}
	var got []string
	_, err = Read(path, func(ch *ReadChannel, m *mcap.Message) error {
		rd := cdr.NewReader(m.Data)
		switch ch.Topic {
		case TopicClock:
			sec, nsec := rd.Int32(), rd.Uint32()
			got = append(got, fmt.Sprintf("clock@%d=%d", m.LogTime, int64(sec)*1e9+int64(nsec)))
		default:
			got = append(got, fmt.Sprintf("%s@%d=%g", ch.Topic, m.LogTime, rd.Float64()))
		}
		return rd.Err()
	})
	want := "clock@1=100 /v@1=0.5 clock@2=200 /v@2=1 /other@2=-1 clock@3=300 /v@3=1.5"
	if err != nil || strings.Join(got, " ") != want {
		t.Fatalf("read %v:\n got %s\nwant %s", err, strings.Join(got, " "), want)
	}
}

// ReadRun reads the status series on /tcs/run_status, and on /tcs/status
// from recordings that kept it there; a /tcs/status of another type (the
// live DiagnosticStatus, recorded by rosbag) is not taken for it.
func TestReadRunStatusTopics(t *testing.T) {
	for _, tc := range []struct {
		topic string
		k     *Known
		want  int
	}{
		{TopicRunStatus, Status, 3},
		{TopicLegacyStatus, Status, 3},
		{TopicLegacyStatus, DiagnosticArray, 0},
	} {
		path := filepath.Join(t.TempDir(), "run.mcap")
		r, err := Create(Conf{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := r.AddChannel(tc.k.Channel(tc.topic))
		if err != nil {
			t.Fatal(err)
		}
		for i := range int64(3) {
			w := r.Begin(ch, i, i)
			if w == nil {
				t.Fatal("ring full")
			}
			if tc.k == Status {
				st := RunStatus{WorldNs: i * 10, Dispatches: i}
				st.Encode(w)
			} else {
				w.Time(i)
				w.String("")
				w.Len(0)
			}
			r.Commit()
		}
		if err := r.Close([]Attachment{{Name: "summary.json", Data: []byte("{}")}}, nil); err != nil {
			t.Fatal(err)
		}
		run, err := ReadRun(path)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.topic, tc.k.ROS1.Name, err)
		}
		if len(run.Status) != tc.want || tc.want > 0 && run.Status[2].WorldNs != 20 {
			t.Errorf("%s %s: status %+v, want %d records", tc.topic, tc.k.ROS1.Name, run.Status, tc.want)
		}
	}
}

// ClientProgress's encoding follows its recorded definition field by field
// (the definition's ROS 1 body is the same values packed), decodes back,
// and a sample recorded before deadline_misses_host decodes with it 0.
func TestClientProgressEncoding(t *testing.T) {
	in := ClientProgress{Event: EventMiss, Client: "pd", Robot: "arm", WorldNs: 1, ProgressNs: 2, CPUNs: 3,
		Activations: 4, DeadlineMisses: 5, DueNs: 6, BeginNs: 7, DeadlineMissesHost: 8}
	var w cdr.Writer
	w.Begin(nil)
	in.Encode(&w)
	sample := append([]byte(nil), w.Bytes()...)
	var rd cdr.Reader
	ros1, err := Progress.Conv.ToROS1(nil, sample, &rd)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{EventMiss, 2, 0, 0, 0, 'p', 'd', 3, 0, 0, 0, 'a', 'r', 'm'}
	for v := byte(1); v <= 8; v++ {
		want = append(want, v, 0, 0, 0, 0, 0, 0, 0)
	}
	if !bytes.Equal(ros1, want) {
		t.Fatalf("ROS 1 body % x\nwant % x", ros1, want)
	}
	var out ClientProgress
	if err := out.Decode(sample); err != nil || out != in {
		t.Fatalf("decoded %+v, %v; want %+v", out, err, in)
	}
	old := sample[:len(sample)-8]
	if err := out.Decode(old); err != nil || out.DeadlineMissesHost != 0 || out.BeginNs != 7 {
		t.Fatalf("sample without the host's count: %+v, %v", out, err)
	}
	if err := out.Decode(sample[:len(sample)-12]); err == nil {
		t.Error("a sample cut inside begin_ns decoded without error")
	}
}
