package bench

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/coordinator/linux"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "__spawn":
			os.Exit(driver.SpawnMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

func TestDispatch(t *testing.T) {
	if err := linux.CheckFIFO(80); err != nil {
		t.Skipf("needs SCHED_FIFO: %v", err)
	}
	if cpus, err := linux.OnlineCPUs(); err != nil || len(cpus) < 2 {
		t.Skip("needs 2 CPUs")
	}
	opts := DispatchOpts{CPU: -1, Duration: 300 * time.Millisecond, Quanta: 300, LockTimeout: 60 * time.Second}
	if testing.Verbose() && !testing.Short() {
		opts.Duration, opts.Quanta = time.Second, 2000
	}
	var out strings.Builder
	res, err := RunDispatch(&out, opts)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.LeakNs != 0 {
		t.Errorf("leak %d ns", res.LeakNs)
	}
	for n, g := range res.Go {
		if g.N == 0 || res.C[n].N == 0 {
			t.Errorf("%d clients: no samples: %+v %+v", n, g, res.C[n])
		}
	}
	// The slice reference ran its slices (how many fit in the duration is
	// the host's business), and timed every part of them.
	if sl := res.Slice; sl.N < 10 || sl.CPU <= 0 || sl.Send <= 0 || sl.Swap <= 0 || sl.Arm <= 0 {
		t.Errorf("C slice reference: %+v, want 10 slices or more with every figure above 0", sl)
	}
}

func TestStats(t *testing.T) {
	s := stats([]int64{5, 1, 4, 2, 3})
	if s != (Stats{N: 5, Med: 3, P99: 5, Max: 5}) {
		t.Errorf("%+v", s)
	}
	if (stats(nil) != Stats{}) {
		t.Error("empty")
	}
}
