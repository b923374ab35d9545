package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/config"
)

// The workload's scenario parses and is the one described: prey's
// controller, predator's controller over its best-effort planner, native
// C binaries, the options' times.
func TestPursuitScenario(t *testing.T) {
	o := PursuitOpts{Chunk: 1500 * time.Millisecond}.withDefaults()
	y := pursuitScenario("/b/pd", "/b/my planner", o)
	sc, err := config.Parse([]byte(y), "pursuit.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if len(sc.Robots) != 2 || sc.ClientCount() != 3 || sc.Quantum != config.Duration(10*time.Millisecond) ||
		sc.Duration != config.Duration(20*time.Second) || sc.Dynamics.Step != config.Duration(10*time.Millisecond) {
		t.Fatalf("%d robots, %d clients, q %v, duration %v, step %v", len(sc.Robots), sc.ClientCount(), sc.Quantum,
			sc.Duration, sc.Dynamics.Step)
	}
	ctl, pl := sc.Robots[1].Clients[0], sc.Robots[1].Clients[1]
	if ctl.Class != config.ClassPeriodic || ctl.Period != config.Duration(o.Period) || ctl.Priority <= pl.Priority ||
		strings.Join(ctl.Cmd, " ") != "/b/pd --plan" {
		t.Errorf("predator's controller %+v", ctl)
	}
	if pl.Class != config.ClassBestEffort || strings.Join(pl.Cmd, "|") != "/b/my planner|--chunk|1.5" {
		t.Errorf("planner %+v", pl)
	}
	if sc.HasROS() {
		t.Error("the workload's clients are native")
	}
}

// Met only when every trial ran and met both targets; the table says so.
func TestPursuitMet(t *testing.T) {
	good := ActivationCase{Status: CaseOK, AllUSPerActivation: 40, OverheadFractionAll: 0.008}
	slow, heavy := good, good
	slow.AllUSPerActivation = 51
	heavy.OverheadFractionAll = 0.011
	failed := ActivationCase{Status: CaseFailed, Reason: "no summary.json"}
	for _, c := range []struct {
		trials []ActivationCase
		want   bool
	}{
		{[]ActivationCase{good, good}, true},
		{[]ActivationCase{good, slow}, false},
		{[]ActivationCase{heavy}, false},
		{[]ActivationCase{good, failed}, false},
		{nil, false},
	} {
		if got := pursuitMet(c.trials); got != c.want {
			t.Errorf("pursuitMet(%+v) = %v, want %v", c.trials, got, c.want)
		}
	}
	var b bytes.Buffer
	res := &PursuitResult{PeriodS: 0.01, QuantumS: 0.01, StepS: 0.01, ChunkS: 1, DurationS: 20, Mode: "consistent",
		TargetUSPerActivation: PursuitTargetUSPerActivation, TargetFraction: PursuitTargetFraction,
		Trials: []ActivationCase{good, failed}}
	writePursuitTable(&b, res)
	for _, want := range []string{"40.0", "0.80%", "failed: no summary.json", "not met"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
