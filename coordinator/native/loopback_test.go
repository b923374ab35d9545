package native

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// childEnv selects, in a re-executed test binary, the client scenario to run.
const childEnv = "TCS_NATIVE_TEST_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	os.Exit(m.Run())
}

// runChild is the client process of the loopback tests: it returns 0 when
// everything the coordinator sent was as expected.
func runChild(name string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "child %s: "+format+"\n", append([]any{name}, args...)...)
		return 1
	}
	c, err := Connect()
	if err != nil {
		return fail("connect: %v", err)
	}
	defer c.Close()
	switch name {
	case "basic":
		if c.Period() != 1_000_000 || c.Now() != 0 {
			return fail("period %d now %d", c.Period(), c.Now())
		}
		var obs [4]float64
		n, now, err := c.Read(obs[:])
		if err != nil || n != 2 || now != 0 || obs[0] != 1.5 || obs[1] != -2.5 {
			return fail("read: n=%d now=%d obs=%v err=%v", n, now, obs, err)
		}
		if err := c.Write(0, []float64{0.25}); err != nil {
			return fail("write 0: %v", err)
		}
		if err := c.Write(1, []float64{1, 2, 3}); err != nil {
			return fail("write 1: %v", err)
		}
		if now, err := c.Idle(1_000_000); err != nil || now != 1_000_000 || c.Now() != now {
			return fail("idle: now=%d err=%v", now, err)
		}
		n, stamp, err := c.Recv(1, obs[:])
		if err != nil || n != 2 || stamp != 777 || obs[0] != 9 || obs[1] != 8 {
			return fail("recv 1: n=%d stamp=%d obs=%v err=%v", n, stamp, obs, err)
		}
		if n, _, err := c.Recv(2, obs[:]); err != nil || n != 0 {
			return fail("recv 2: n=%d err=%v", n, err)
		}
		if err := c.Write(0, make([]float64, MaxValues+1)); !errors.Is(err, ErrTooMany) {
			return fail("write 65 values: %v", err)
		}
		if _, err := c.Idle(2_000_000); !errors.Is(err, ErrShutdown) {
			return fail("idle at shutdown: %v", err)
		}
		return 0
	case "posts":
		// The coordinator allowed posts: six plans on channel 1 (the
		// fifth finds the ring full and is a request), then a command
		// on channel 0 (always a request).
		for k := 1; k <= 6; k++ {
			if err := c.Write(1, []float64{float64(k)}); err != nil {
				return fail("write plan %d: %v", k, err)
			}
		}
		if err := c.Write(0, []float64{0.5}); err != nil {
			return fail("write 0: %v", err)
		}
		if _, err := c.Idle(1_000_000); !errors.Is(err, ErrShutdown) {
			return fail("idle at shutdown: %v", err)
		}
		return 0
	case "loop":
		var obs [2]float64
		var out [1]float64
		k := int64(0)
		allocs := testing.AllocsPerRun(200, func() {
			c.Read(obs[:])
			out[0] = obs[0]
			c.Write(0, out[:])
			k++
			c.Idle(k * c.Period())
		})
		if allocs != 0 {
			return fail("%v allocations per activation", allocs)
		}
		return 0
	}
	return fail("unknown scenario")
}

// startChild runs scenario name of runChild in a re-executed test binary
// connected to a new Endpoint.
func startChild(t *testing.T, name string) (*Endpoint, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	return startClient(t, cmd)
}

// startClient starts cmd connected to a new Endpoint.
func startClient(t *testing.T, cmd *exec.Cmd) (*Endpoint, *exec.Cmd) {
	t.Helper()
	e, files, err := NewEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	cmd.Env = append(cmd.Env, Env(3))
	cmd.ExtraFiles = files
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f.Close()
	}
	return e, cmd
}

// expect waits for one request and checks it.
func expect(t *testing.T, e *Endpoint, want Request) {
	t.Helper()
	got, err := e.WaitRequest(10 * time.Second)
	if err != nil {
		t.Fatalf("waiting for %+v: %v", want, err)
	}
	if got != want {
		t.Fatalf("request %+v, want %+v", got, want)
	}
}

func reply(t *testing.T, e *Endpoint, r Reply) {
	t.Helper()
	if err := e.Reply(r); err != nil {
		t.Fatal(err)
	}
}

// TestLoopback serves a real client process through real pipes and memfd:
// hello, read, write, idle, recv, and a shutdown reply.
func TestLoopback(t *testing.T) {
	e, cmd := startChild(t, "basic")
	shm := e.Shm()
	shm.Period = 1_000_000
	expect(t, e, Request{Op: OpHello, Arg: Version})
	reply(t, e, Reply{Op: OpHello})
	expect(t, e, Request{Op: OpRead})
	shm.Obs[0], shm.Obs[1], shm.ObsLen = 1.5, -2.5, 2
	reply(t, e, Reply{Op: OpRead, Now: 0})
	expect(t, e, Request{Op: OpWrite, Ch: 0, Arg: 1})
	if shm.Out[0] != 0.25 {
		t.Fatalf("command %v", shm.Out[0])
	}
	reply(t, e, Reply{Op: OpWrite})
	expect(t, e, Request{Op: OpWrite, Ch: 1, Arg: 3})
	if got := shm.Out[:3]; got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("message %v", got)
	}
	reply(t, e, Reply{Op: OpWrite})
	expect(t, e, Request{Op: OpIdle, Arg: 1_000_000})
	reply(t, e, Reply{Op: OpIdle, Now: 1_000_000})
	expect(t, e, Request{Op: OpRecv, Ch: 1})
	shm.In[0], shm.In[1] = 9, 8
	reply(t, e, Reply{Op: OpRecv, Status: 2, Now: 777})
	expect(t, e, Request{Op: OpRecv, Ch: 2})
	reply(t, e, Reply{Op: OpRecv, Status: 0})
	expect(t, e, Request{Op: OpIdle, Arg: 2_000_000})
	reply(t, e, Reply{Op: OpIdle, Status: StatusShutdown})
	if _, err := e.WaitRequest(10 * time.Second); !errors.Is(err, io.EOF) || !ClientGone(err) {
		t.Fatalf("after the client's exit: %v, want io.EOF", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := e.Reply(Reply{Op: OpIdle}); !ClientGone(err) {
		t.Fatalf("reply to an exited client: %v, want EPIPE", err)
	}
}

// takePosts takes every post waiting and returns their first values and
// CPU clocks.
func takePosts(t *testing.T, e *Endpoint) (vals []float64, cpu []int64) {
	t.Helper()
	for {
		p, ok, err := e.Post()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return vals, cpu
		}
		if p.Ch != 1 || p.N != 1 {
			t.Fatalf("post on channel %d with %d values, want 1 and 1", p.Ch, p.N)
		}
		vals, cpu = append(vals, p.Vals[0]), append(cpu, p.CPU)
		e.Taken()
	}
}

// TestPosts: with posts allowed, messages on channels ≥ 1 go through the
// ring without a request until it is full, each with the client's process
// CPU clock; a full ring and channel 0 take a request, and the posts
// written before a request are there when it arrives.
func TestPosts(t *testing.T) {
	e, cmd := startChild(t, "posts")
	servePosts(t, e, cmd)
}

// TestPostsC: the same client in C (tcs_native.h).
func TestPostsC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	bin := compileC(t, gcc, `#include <stdio.h>
#include "tcs_native.h"
int main(void) {
	struct tcs_client c;
	double v[1];
	if (tcs_connect(&c) < 0) { perror("connect"); return 1; }
	for (int k = 1; k <= 6; k++) {
		v[0] = k;
		if (tcs_write(&c, 1, v, 1) < 0) { perror("write plan"); return 1; }
	}
	v[0] = 0.5;
	if (tcs_write(&c, 0, v, 1) < 0) { perror("write 0"); return 1; }
	if (tcs_idle(&c, 1000000, NULL) == 0 || errno != ESHUTDOWN) { perror("idle at shutdown"); return 1; }
	tcs_close(&c);
	return 0;
}
`)
	e, cmd := startClient(t, exec.Command(bin))
	servePosts(t, e, cmd)
}

// servePosts is the coordinator's side of TestPosts.
func servePosts(t *testing.T, e *Endpoint, cmd *exec.Cmd) {
	t.Helper()
	e.AllowPosts()
	expect(t, e, Request{Op: OpHello, Arg: Version})
	reply(t, e, Reply{Op: OpHello})
	expect(t, e, Request{Op: OpWrite, Ch: 1, Arg: 1})
	if e.Shm().Out[0] != 5 {
		t.Fatalf("requested plan %v, want 5 (the first after a full ring)", e.Shm().Out[0])
	}
	vals, cpu := takePosts(t, e)
	if len(vals) != MaxPosts || vals[0] != 1 || vals[3] != 4 {
		t.Fatalf("posts before the request: %v, want 1..4", vals)
	}
	for k := range cpu {
		if cpu[k] <= 0 || k > 0 && cpu[k] < cpu[k-1] {
			t.Fatalf("posts' CPU clocks %v: not positive and nondecreasing", cpu)
		}
	}
	reply(t, e, Reply{Op: OpWrite})
	expect(t, e, Request{Op: OpWrite, Ch: 0, Arg: 1})
	if vals, last := takePosts(t, e); len(vals) != 1 || vals[0] != 6 || last[0] < cpu[3] {
		t.Fatalf("post before the command: %v at %v, want 6 after %d", vals, last, cpu[3])
	}
	reply(t, e, Reply{Op: OpWrite})
	expect(t, e, Request{Op: OpIdle, Arg: 1_000_000})
	reply(t, e, Reply{Op: OpIdle, Status: StatusShutdown})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client: %v", err)
	}
	// A ring moved on by more than its slots is emptied and reported.
	s := e.Shm()
	s.PostHead = s.PostTail + MaxPosts + 1
	if _, ok, err := e.Post(); ok || !errors.Is(err, ErrPostRing) {
		t.Fatalf("overrun ring: ok=%v err=%v, want ErrPostRing", ok, err)
	}
	if _, ok, err := e.Post(); ok || err != nil {
		t.Fatalf("after the overrun: ok=%v err=%v, want an empty ring", ok, err)
	}
}

// TestClientLoopNoAllocs: the client's activation loop (read, write, idle)
// does not allocate (measured in the client process), nor do ReadRequest
// and Reply (measured here).
func TestClientLoopNoAllocs(t *testing.T) {
	e, cmd := startChild(t, "loop")
	e.Shm().Period = 1_000_000
	e.Shm().ObsLen = 2
	var serveErr error
	serve := func() bool {
		req, err := e.WaitRequest(10 * time.Second)
		if err != nil {
			serveErr = err
			return false
		}
		now := int64(0)
		if req.Op == OpIdle {
			now = req.Arg
		}
		if err := e.Reply(Reply{Op: req.Op, Now: now}); err != nil {
			serveErr = err
			return false
		}
		return true
	}
	if !serve() { // hello
		t.Fatal(serveErr)
	}
	served := 0
	allocs := testing.AllocsPerRun(50, func() {
		if serve() {
			served++
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request served", allocs)
	}
	for serve() {
		served++
	}
	if !errors.Is(serveErr, io.EOF) {
		t.Fatalf("serving: %v", serveErr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client: %v", err)
	}
	// AllocsPerRun runs its function once more than asked: 201 activations.
	if served != 3*201 {
		t.Fatalf("served %d requests, want %d", served, 3*201)
	}
}

func TestConnectWithoutEnv(t *testing.T) {
	t.Setenv(EnvVar, "")
	os.Unsetenv(EnvVar)
	_, err := Connect()
	if !errors.Is(err, ErrNotUnderTCS) || err.Error() != "not running under tcs: TCS_NATIVE is not set" {
		t.Fatalf("Connect without %s: %v", EnvVar, err)
	}
	for _, v := range []string{"3,4", "a,b,c", "3,4,-5"} {
		t.Setenv(EnvVar, v)
		if _, err := Connect(); err == nil {
			t.Errorf("Connect with %s=%q: no error", EnvVar, v)
		}
	}
}

// TestPartialRequest: a request written in two pieces is read as one.
func TestPartialRequest(t *testing.T) {
	e, files, err := NewEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var b [RecordSize]byte
	EncodeRequest(b[:], Request{Op: OpIdle, Arg: 42})
	if _, ok, err := e.ReadRequest(); ok || err != nil {
		t.Fatalf("empty pipe: ok=%v err=%v", ok, err)
	}
	files[1].Write(b[:5])
	if _, ok, err := e.ReadRequest(); ok || err != nil {
		t.Fatalf("5 bytes: ok=%v err=%v", ok, err)
	}
	files[1].Write(b[5:])
	req, ok, err := e.ReadRequest()
	if !ok || err != nil || req != (Request{Op: OpIdle, Arg: 42}) {
		t.Fatalf("whole: %+v ok=%v err=%v", req, ok, err)
	}
	if e.Shm().Magic != Magic || e.Shm().Version != Version {
		t.Fatalf("shm header %#x %d", e.Shm().Magic, e.Shm().Version)
	}
	// The client's ends are not close-on-exec only once dup'ed into a child;
	// the coordinator's ends always are.
	for _, fd := range []int{e.reqR, e.repW} {
		flags, err := fcntlGetfd(fd)
		if err != nil || flags&syscall.FD_CLOEXEC == 0 {
			t.Errorf("fd %d: flags %#x err %v: not close-on-exec", fd, flags, err)
		}
	}
}

// TestReplyNeverBlocks: a client that does not read its replies fills the
// pipe; the coordinator gets ErrReplyBlocked instead of blocking.
func TestReplyNeverBlocks(t *testing.T) {
	e, files, err := NewEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for i := 0; ; i++ {
		err := e.Reply(Reply{Op: OpRead})
		if errors.Is(err, ErrReplyBlocked) {
			break
		}
		if err != nil || i > 1<<20 {
			t.Fatalf("after %d replies: %v", i, err)
		}
	}
}
