package driver

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// relayC computes without end in its main thread while a second thread
// copies each byte from fd 3 to fd 4: a best-effort node whose clock thread
// wakes while it computes.
const relayC = `#include <pthread.h>
#include <unistd.h>
static void *relay(void *arg) {
	char c;
	(void)arg;
	while (read(3, &c, 1) == 1) {
		if (write(4, &c, 1) != 1) break;
	}
	return 0;
}
int main(void) {
	pthread_t t;
	volatile unsigned long n = 0;
	if (pthread_create(&t, 0, relay, 0) != 0) return 1;
	for (;;) n++;
}
`

// A Requeue client dispatched slice after slice runs a thread woken while
// it computed within the next slice: its main thread, preempted at the
// slice's end and so at the head of ℓ1, is moved behind it (requeueMain).
// Without that the woken thread waits behind the computing one for as long
// as the client stays dispatched.
func TestRequeueRunsWokenThread(t *testing.T) {
	needRT(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("needs gcc: %v", err)
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "relay.c"), filepath.Join(dir, "relay")
	if err := os.WriteFile(src, []byte(relayC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O1", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
	}()

	m, done := newMech(t)
	defer done()
	p, err := m.Spawn(SpawnSpec{Name: "relay", Argv: []string{bin}, Files: []*os.File{inR, outW}})
	if err != nil {
		t.Fatal(err)
	}
	p.Requeue = true
	// Computing, its relay thread blocked in its read.
	runUntil(t, m, p, int64(time.Millisecond), func(w Wake) bool { return w.Timer && !w.Blocked })
	runUntil(t, m, p, int64(time.Millisecond), func(w Wake) bool { return w.Timer && !w.Blocked })
	out := int(outR.Fd()) // once: each Fd call makes the file blocking again
	if err := unix.SetNonblock(out, true); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	for k := 0; k < 20; k++ {
		// Written from the dispatch thread between two slices: the relay
		// thread wakes at ℓ1, behind the preempted main thread.
		if _, err := inW.Write([]byte{byte('a' + k)}); err != nil {
			t.Fatal(err)
		}
		w, err := m.Run(p, int64(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if !w.Timer || w.Blocked {
			t.Fatalf("slice %d: %+v, want the client computing through it", k, w)
		}
		n, err := unix.Read(out, b[:])
		if n != 1 || err != nil || b[0] != byte('a'+k) {
			t.Fatalf("slice %d: the woken thread did not run in the next slice (read %d %q, %v)", k, n, b[:max(n, 0)], err)
		}
	}
}
