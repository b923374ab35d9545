package remote_test

import (
	"testing"

	"github.com/tcs-robotics/tcs/dynamics/remote"
)

// BenchmarkStep is one step of a pendulum served over the socket by a
// goroutine of the same process: the protocol's round trip.
func BenchmarkStep(b *testing.B) {
	w, err := remote.New(remote.Conf{Socket: serveOn(b, pendulums)}, 1, ms)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ResetTimer()
	for range b.N {
		w.Step(ms)
	}
}
