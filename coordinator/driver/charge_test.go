package driver

import "testing"

// What a client used while the coordinator was away is charged up to
// lateCap; beyond, it is the host's, and the charged part ends where it
// did.
func TestHostExcessCapsWhatRanWhileAway(t *testing.T) {
	cases := []struct {
		name     string
		in, want Wake
		excess   int64
	}{
		{"within the cap", Wake{Extra: lateCap, CPU: 5_000_000 + lateCap, From: 1_000},
			Wake{Extra: lateCap, CPU: 5_000_000 + lateCap, From: 1_000}, 0},
		{"none", Wake{CPU: 4_000_000, From: 7}, Wake{CPU: 4_000_000, From: 7}, 0},
		{"82 ms away", Wake{Extra: 82_000_000, CPU: 87_000_000, From: 10_000_000},
			Wake{Extra: lateCap, CPU: 5_000_000 + lateCap, From: 10_000_000 + 82_000_000 - lateCap}, 82_000_000 - lateCap},
	}
	for _, c := range cases {
		w := c.in
		ex := hostExcess(&w)
		if ex != c.excess || w != c.want {
			t.Errorf("%s: excess %d, wake %+v; want %d, %+v", c.name, ex, w, c.excess, c.want)
		}
		if end, want := w.From+w.CPU, c.in.From+c.in.CPU; end != want {
			t.Errorf("%s: the charged part ends at %d, the slice at %d", c.name, end, want)
		}
	}
}
