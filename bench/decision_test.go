package bench

import (
	"io"
	"testing"
	"time"
)

// The decision benchmark drives the policy through every client count
// without the run finishing or stalling, and measures each.
func TestDecision(t *testing.T) {
	res, err := Decision(io.Discard, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(DecisionClients) {
		t.Fatalf("%d results, want %d", len(res), len(DecisionClients))
	}
	for _, r := range res {
		if r.Decisions < 10000 || r.NsPerOp <= 0 {
			t.Errorf("%d clients: %d decisions, %.1f ns each", r.Clients, r.Decisions, r.NsPerOp)
		}
		t.Logf("%d clients: %.1f ns per decision", r.Clients, r.NsPerOp)
	}
}
