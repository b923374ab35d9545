package linux

import (
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Watch waits for the set without taking its events: the owner's Wait
// still finds them. With nothing ready it waits until the given instant.
func TestEpollWatchLeavesEventsReady(t *testing.T) {
	ep, efd := epollWithEventfd(t, 7)

	// A signal (the Go runtime's preemption, on a busy machine) may end a
	// raw call early (EINTR), which Watch allows: like its callers, watch
	// again until the instant; every return must say "not ready", and the
	// instant must have come when they stop.
	t0 := MonotonicNs()
	until := t0 + int64(5*time.Millisecond)
	calls := 0
	for MonotonicNs() < until && calls < 1000 {
		calls++
		if ready, err := ep.Watch(until); err != nil || ready {
			t.Fatalf("Watch with nothing ready: ready %v, %v", ready, err)
		}
	}
	if d := MonotonicNs() - t0; d < int64(4900*time.Microsecond) {
		t.Errorf("Watch with nothing ready returned after %v, want 5 ms", time.Duration(d))
	}
	t.Logf("5 ms watched in %d calls", calls)

	var buf [8]byte
	if err := WriteU64(efd, &buf, 1); err != nil {
		t.Fatal(err)
	}
	t0 = MonotonicNs()
	if ready, err := ep.Watch(t0 + int64(time.Second)); err != nil || !ready {
		t.Fatalf("Watch with an fd ready: ready %v, %v", ready, err)
	}
	// An instant already past only looks.
	if ready, err := ep.Watch(0); err != nil || !ready {
		t.Fatalf("Watch(0) with an fd ready: ready %v, %v", ready, err)
	}
	if d := MonotonicNs() - t0; d > int64(500*time.Millisecond) {
		t.Errorf("Watch with an fd ready returned after %v", time.Duration(d))
	}
	n, err := ep.Wait(0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || ep.Tag(0) != 7 {
		t.Errorf("Wait after Watch: %d events (first tag %d), want the eventfd (tag 7)", n, ep.Tag(0))
	}
}

// A listener added edge-triggered is reported once per connection that
// arrives, not for as long as connections wait to be accepted: the
// dispatch loop learns of each call to the embedded master this way and
// looks at the listener only then. Watch (the waker's, during a park) sees
// the report without taking it from Wait.
func TestEpollEdgeOncePerConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fd := sysFd(t, ln.(*net.TCPListener))
	ep, err := NewEpoll()
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if err := ep.AddEdge(fd, 9); err != nil {
		t.Fatal(err)
	}
	wantEvents := func(what string, want int) {
		t.Helper()
		// A loopback connect is established when Dial returns; the wait
		// allows the event a moment all the same.
		n, err := 0, error(nil)
		for deadline := MonotonicNs() + int64(time.Second); ; {
			if n, err = ep.Wait(0); err != nil || n > 0 || want == 0 || MonotonicNs() > deadline {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != want || (n > 0 && ep.Tag(0) != 9) {
			t.Fatalf("%s: %d events, want %d (tag 9)", what, n, want)
		}
	}
	wantEvents("nothing connected", 0)
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if ready, err := ep.Watch(MonotonicNs() + int64(time.Second)); err != nil || !ready {
			t.Fatalf("Watch after a connection arrived: ready %v, %v", ready, err)
		}
		wantEvents("a connection arrived, Watch saw it", 1)
		wantEvents("the connection still waits to be accepted", 0)
	}
	if !Readable(fd) {
		t.Error("the listener with two connections waiting is not readable")
	}
}

// A socket registered with AddHangup is reported once its peer closed,
// not when data arrives, and for as long as it stays registered; send and
// RecvSome moves bytes across the connection and sees its end.
func TestEpollHangupNotData(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fd := sysFd(t, c.(*net.TCPConn))
	ep, err := NewEpoll()
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if err := ep.AddHangup(fd, 7); err != nil {
		t.Fatal(err)
	}
	events := func() int {
		t.Helper()
		n, err := ep.Wait(0)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && ep.Tag(0) != 7 {
			t.Fatalf("tag %d, want 7", ep.Tag(0))
		}
		return n
	}
	if n := events(); n != 0 {
		t.Fatalf("open connection: %d events, want 0", n)
	}
	if _, err := peer.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if _, err := SendAll(fd, []byte("back")); err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	if _, err := peer.Read(b[:]); err != nil || string(b[:4]) != "back" {
		t.Fatalf("the peer read %q, %v; want back", b[:4], err)
	}
	// The peer's bytes are in the socket (loopback: the write returned).
	if n := events(); n != 0 {
		t.Fatalf("data waiting: %d events, want 0", n)
	}
	peer.Close()
	for deadline := MonotonicNs() + int64(time.Second); events() == 0; {
		if MonotonicNs() > deadline {
			t.Fatal("no event after the peer closed")
		}
		time.Sleep(time.Millisecond)
	}
	if n := events(); n != 1 {
		t.Fatalf("hang-up still registered: %d events, want 1 again", n)
	}
	if n, err := RecvSome(fd, b[:]); err != nil || n != 4 || string(b[:4]) != "data" {
		t.Fatalf("RecvSome: %d %q, %v; want the peer's 4 bytes", n, b[:n], err)
	}
	if n, err := RecvSome(fd, b[:]); err != nil || n != 0 {
		t.Fatalf("RecvSome after the peer's data: %d, %v; want 0 (its end)", n, err)
	}
	if err := ep.Del(fd); err != nil {
		t.Fatal(err)
	}
	if n := events(); n != 0 {
		t.Fatalf("after Del: %d events, want 0", n)
	}
}

// sysFd is c's descriptor (still c's: not to be closed).
func sysFd(t *testing.T, c syscall.Conn) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	if err := raw.Control(func(f uintptr) { fd = int(f) }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// epollWithEventfd returns a new wait set holding a new non-blocking
// eventfd with tag; both are closed when the test ends.
func epollWithEventfd(t *testing.T, tag uint64) (*Epoll, int) {
	t.Helper()
	ep, err := NewEpoll()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	efd, err := Eventfd(0, unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(efd) })
	if err := ep.Add(efd, tag); err != nil {
		t.Fatal(err)
	}
	return ep, efd
}

// ExitPidfd returns a child's exit code and leaves it a zombie; Reap
// reaps it.
func TestExitPidfdLeavesZombie(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	fd, err := PidfdOpen(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	code, err := ExitPidfd(fd)
	if err != nil || code != 7 {
		t.Fatalf("ExitPidfd = %d, %v; want 7", code, err)
	}
	if st, err := ReadStat(pid, 0); err != nil || st.State != 'Z' {
		t.Fatalf("after ExitPidfd: state %c, %v; want a zombie", st.State, err)
	}
	if err := Reap(pid); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStat(pid, 0); err == nil {
		t.Fatalf("process %d still there after Reap", pid)
	}
}

// SendAll and RecvSome, the dispatch thread's TCPROS writes and reads,
// allocate nothing, with bytes to read and without.
func TestSendRecvAllocateNothing(t *testing.T) {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sp[0])
	defer unix.Close(sp[1])
	frame := []byte("\x04\x00\x00\x00abcd")
	var buf [64]byte
	if a := testing.AllocsPerRun(100, func() {
		if _, err := SendAll(sp[0], frame); err != nil {
			t.Fatal(err)
		}
		if n, err := RecvSome(sp[1], buf[:]); err != nil || n != len(frame) {
			t.Fatalf("RecvSome: %d, %v", n, err)
		}
	}); a != 0 {
		t.Errorf("send and receive: %.1f allocations, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() {
		if _, err := RecvSome(sp[1], buf[:]); err != ErrWouldBlock {
			t.Fatalf("RecvSome with nothing there: %v", err)
		}
	}); a != 0 {
		t.Errorf("receive with nothing there: %.1f allocations, want 0", a)
	}
}
