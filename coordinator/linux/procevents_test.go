package linux

import (
	"encoding/binary"
	"os"
	"os/exec"
	"testing"
	"time"
)

// procMsg builds one netlink message of the process events connector.
func procMsg(idx, what uint32, data ...uint32) []byte {
	ne := binary.NativeEndian
	b := make([]byte, nlmsgHdrLen+cnMsgLen+procEvHdr+4*len(data))
	ne.PutUint32(b[0:], uint32(len(b)))
	cn := b[nlmsgHdrLen:]
	ne.PutUint32(cn[0:], idx)
	ne.PutUint32(cn[4:], cnValProc)
	ev := cn[cnMsgLen:]
	ne.PutUint32(ev[0:], what)
	for k, v := range data {
		ne.PutUint32(ev[procEvHdr+4*k:], v)
	}
	return b
}

func TestParseProcEvents(t *testing.T) {
	var b []byte
	b = append(b, procMsg(cnIdxProc, procEventFork, 10, 10, 11, 11)...)
	b = append(b, procMsg(cnIdxProc, 0x2, 11, 11, 0, 0)...) // exec: skipped
	b = append(b, procMsg(7, procEventFork, 1, 1, 2, 2)...) // another connector
	b = append(b, procMsg(cnIdxProc, procEventFork, 11, 11, 12, 11)...)
	b = append(b, procMsg(cnIdxProc, procEventExit, 11, 11, 0, 17)...)
	b = append(b, 0xff, 0xff, 0, 0, 1) // a length past the end
	got := ParseProcEvents(b, nil)
	want := []ProcEvent{
		{Fork: true, ParentPid: 10, ParentTgid: 10, Pid: 11, Tgid: 11},
		{Fork: true, ParentPid: 11, ParentTgid: 11, Pid: 12, Tgid: 11},
		{Pid: 11, Tgid: 11},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("event %d: %+v, want %+v", k, got[k], want[k])
		}
	}
	if got := ParseProcEvents(b[:nlmsgHdrLen+8], nil); len(got) != 0 {
		t.Errorf("a short message: %+v", got)
	}
}

// The socket reports this process starting a child and the child's exit.
func TestProcEvents(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("process events need CAP_NET_ADMIN")
	}
	ev, err := OpenProcEvents()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	child := cmd.Process.Pid
	var forked, exited bool
	buf := make([]ProcEvent, 0, 256)
	for end := time.Now().Add(5 * time.Second); !(forked && exited) && time.Now().Before(end); time.Sleep(time.Millisecond) {
		got, err := ev.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			forked = forked || e.Fork && e.Tgid == child && e.Pid == child && e.ParentTgid == os.Getpid()
			exited = exited || !e.Fork && e.Pid == child
		}
	}
	if !forked || !exited {
		t.Fatalf("child %d: fork seen %v, exit seen %v", child, forked, exited)
	}
	if n := testing.AllocsPerRun(10, func() { _, _ = ev.Read(buf) }); n != 0 {
		t.Errorf("Read allocates %v times", n)
	}
}
