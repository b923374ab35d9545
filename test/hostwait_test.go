package test

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A controller that reads from disk waits on the host: the world waits for
// it (the hold-over rule, Policy.HoldOver), so the reads cost the client
// only the CPU they use, whatever the disk takes and however fast this
// machine steps the world. test/hostwait/hostwait.c reads 8 blocks with
// O_DIRECT (every read waits for the disk, as a page fault reading code
// does) in its start-up and in its first 4 activations of 5 ms. Were
// the world to run on while it waits, it would be as far ahead as this
// machine steps it in the disk's time, and the client's next
// activations late by that much.
func TestNativeClientWaitsOnTheHost(t *testing.T) {
	needRT(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeSynced(t, data, 8<<20)
	// O_DIRECT reads wait for the device only on a file system that has
	// one (tmpfs has none, or refuses the flag).
	if f, err := os.OpenFile(data, os.O_RDONLY|syscall.O_DIRECT, 0); err != nil {
		t.Skipf("%s: O_DIRECT: %v: no file system here on which reads wait for a device", dir, err)
	} else {
		f.Close()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err == nil && st.Type == 0x01021994 { // TMPFS_MAGIC
		t.Skipf("%s is on tmpfs: reads never wait for a device", dir)
	}
	bin := buildNativeC(t, dir, "hostwait/hostwait.c")
	src, err := os.ReadFile("../config/pendulum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "hostwait.yaml")
	for _, r := range [][2]string{
		{"cmd: [tcs, client, pd]", "cmd: [" + bin + ", " + data + ", --activations, 5, --reads, 8]"},
		{"duration: 10s", "duration: 1s"},
		{"period: 1ms", "period: 5ms"},
	} {
		if !bytes.Contains(src, []byte(r[0])) {
			t.Fatalf("config/pendulum.yaml has no %q", r[0])
		}
		src = bytes.Replace(src, []byte(r[0]), []byte(r[1]), 1)
	}
	if err := os.WriteFile(scen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s := runCompleted(t, 2*time.Minute, scen)
	pd := client(t, s, "pd")
	checkPeriods(t, pd, 201)
	if own := pd.DeadlineMisses - pd.DeadlineMissesHost; own != 0 {
		t.Errorf("pd: %d deadline misses (%d after a host-delayed timer): the world ran on while it read from disk", pd.DeadlineMisses, pd.DeadlineMissesHost)
	}
	// The reads did wait on the host, and the world waited for them.
	log, err := os.ReadFile(pd.Log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "reads in"); n != 5 {
		t.Errorf("pd's log has %d activations with reads, want 5:\n%s", n, log)
	}
	if pd.Holds == 0 || pd.HoldWallS <= 0 {
		t.Errorf("pd: %d holds over %g s of wall time: its reads never waited on the host, or the world did not wait for them\n%s", pd.Holds, pd.HoldWallS, log)
	}
	t.Logf("pd: %d activations, %d misses, %d holds over %.3f ms of wall time, late max %.3f ms\n%s",
		pd.Activations, pd.DeadlineMisses, pd.Holds, pd.HoldWallS*1e3, pd.ActivationLateMaxS*1e3, log)
}

// writeSynced writes n random bytes to path and waits until they are on
// the device, so that an O_DIRECT read of them waits for the device and
// not for the file's writeback.
func writeSynced(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	rand.New(rand.NewSource(1)).Read(b)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Sync(), f.Close())
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}
