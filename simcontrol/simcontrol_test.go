package simcontrol

import (
	"context"
	"testing"
	"time"
)

func TestDoAnswered(t *testing.T) {
	c := New()
	go func() {
		req := <-c.Requests()
		if req.Op != Step || req.Steps != 3 {
			t.Errorf("loop got %v %d, want step 3", req.Op, req.Steps)
		}
		for k := uint64(1); k <= req.Steps; k++ {
			req.Progress(k, req.Steps-k)
		}
		req.Answer(Reply{Code: OK, State: Paused, Time: 3e6, Steps: 3})
		req.Answer(Reply{Code: OperationFailed}) // a second answer is dropped
	}()
	var seen []uint64
	rep := c.Do(context.Background(), Request{Op: Step, Steps: 3, Progress: func(done, _ uint64) { seen = append(seen, done) }})
	if rep.Code != OK || rep.State != Paused || rep.Steps != 3 || rep.Time != 3e6 {
		t.Fatalf("reply %+v", rep)
	}
	if len(seen) != 3 || seen[2] != 3 {
		t.Fatalf("progress %v", seen)
	}
}

func TestDoAfterEnd(t *testing.T) {
	c := New()
	c.Close()
	c.Close() // twice is harmless
	if rep := c.Do(context.Background(), Request{Op: Pause}); rep.State != Stopped || rep.Code != IncorrectState {
		t.Fatalf("reply after the run's end: %+v", rep)
	}
}

func TestDoZeroSteps(t *testing.T) {
	if rep := New().Do(context.Background(), Request{Op: Step}); rep.Code != OperationFailed {
		t.Fatalf("0 steps: %+v", rep)
	}
}

func TestDoTimeout(t *testing.T) {
	c := New()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// Nobody answers: the request is taken but never answered.
	go func() { <-c.Requests() }()
	if rep := c.Do(ctx, Request{Op: Get}); rep.Code != OperationFailed {
		t.Fatalf("unanswered request: %+v", rep)
	}
}

func TestEndWhileWaiting(t *testing.T) {
	c := New()
	go func() {
		req := <-c.Requests()
		req.Answer(Reply{Code: OK, State: Stopped})
		c.Close()
	}()
	if rep := c.Do(context.Background(), Request{Op: Stop}); rep.Code != OK {
		t.Fatalf("an answer given before the end must win: %+v", rep)
	}
}

func TestStatusFigures(t *testing.T) {
	s := Status{TimeNs: 3e9, WallNs: 2e9, CoordinatorNs: 1, ClientsNs: 2, DynamicsNs: 1}
	if s.RealTimeFactor() != 1.5 || s.OverheadFraction() != 0.25 {
		t.Fatalf("RTF %v overhead %v, want 1.5 and 0.25", s.RealTimeFactor(), s.OverheadFraction())
	}
	var z Status
	if z.RealTimeFactor() != 0 || z.OverheadFraction() != 0 {
		t.Fatalf("zero status: RTF %v overhead %v", z.RealTimeFactor(), z.OverheadFraction())
	}
}

func TestNotify(t *testing.T) {
	c := New()
	woke := make(chan struct{}, 1)
	c.Notify(func() { woke <- struct{}{} })
	go func() {
		<-woke // the loop waits for the notification, then takes the request
		req := <-c.Requests()
		req.Answer(Reply{Code: OK, State: Paused})
	}()
	if rep := c.Do(context.Background(), Request{Op: Pause}); rep.Code != OK {
		t.Fatalf("reply %+v", rep)
	}
}

// A request took effect when the run is in the state asked for, also when
// it was there already; a refusal did not.
func TestTookEffect(t *testing.T) {
	for code, want := range map[Code]bool{OK: true, AlreadyInTargetState: true, OperationFailed: false,
		IncorrectState: false, FeatureUnsupported: false} {
		if got := (Reply{Code: code}).TookEffect(); got != want {
			t.Errorf("%v: TookEffect %v, want %v", code, got, want)
		}
	}
}
