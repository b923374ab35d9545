//go:build ros2

package ros2

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
	"github.com/tcs-robotics/tcs/simcontrol/simcontroltest"
)

// svcClient is a client of one service as rmw_cyclonedds makes it: a
// request writer and a reply reader on a participant of its own, both
// with USER_DATA clientid=...;.
type svcClient struct {
	t   *testing.T
	w   *Writer
	r   *Reader
	seq int64
}

func newSvcClient(t *testing.T, n *Node, service, typ, id string) *svcClient {
	t.Helper()
	rq, rr, err := rmsgs.ServiceTopics(service)
	if err != nil {
		t.Fatal(err)
	}
	ud := "clientid=" + id + ";"
	w, err := n.writer(endpointConf{dds: rq, label: service, rosType: rmsgs.Request(typ), userData: ud, q: QoS{Reliable: true, Depth: 10}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.reader(endpointConf{dds: rr, label: service, rosType: rmsgs.Response(typ), userData: ud, q: QoS{Reliable: true, Depth: 10}})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the server's request reader is matched, as a client's
	// wait_for_service does.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ms, _ := w.Matched()
		if len(ms) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the server's request reader was not matched", service)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &svcClient{t: t, w: w, r: r}
}

// call sends a request built by req and returns the reply to it.
func (c *svcClient) call(req func(h rmsgs.ServiceHeader) []byte, timeout time.Duration) []byte {
	c.t.Helper()
	c.seq++
	h := rmsgs.ServiceHeader{Writer: 0xabcdef, Seq: c.seq}
	if err := c.w.Write(req(h)); err != nil {
		c.t.Fatal(err)
	}
	buf := make([]byte, 4096)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var pub Guid
		n, ok, err := c.r.Take(buf, &pub)
		if err != nil {
			c.t.Fatal(err)
		}
		if !ok {
			time.Sleep(time.Millisecond)
			continue
		}
		if got, err := rmsgs.DecodeEmptyRequest(buf[:n]); err == nil && got == h {
			return append([]byte(nil), buf[:n]...)
		}
	}
	c.t.Fatalf("%s: no reply to request %d within %v", c.w.Topic, c.seq, timeout)
	return nil
}

// startSimServer brings up tcs's participant with the simulation server s on
// a fake dispatch loop, and a client participant beside it; both end with
// the test.
func startSimServer(t *testing.T) (*SimServer, *simcontroltest.Loop, *Node) {
	t.Helper()
	srvNode, err := NewNode(NodeConf{Distro: rmsgs.Iron})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srvNode.Close() })
	ctl := simcontrol.New()
	loop := simcontroltest.Start(t, ctl)
	s, err := NewSimServer(SimConf{Node: srvNode, Control: ctl, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cli, err := NewNode(NodeConf{Distro: rmsgs.Iron, Name: "client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return s, loop, cli
}

// The services over tcs's participant, seen by clients built as
// rmw_cyclonedds builds them, against a fake dispatch loop.
func TestSimServer(t *testing.T) {
	_, loop, cliNode := startSimServer(t)

	features := newSvcClient(t, cliNode, "/tcs/get_simulator_features", rmsgs.GetSimulatorFeatures, "c1")
	_, f, err := rmsgs.DecodeFeaturesResponse(features.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendEmptyRequest(nil, h) }, 5*time.Second))
	if err != nil || len(f.Features) != 6 || !strings.Contains(f.CustomInfo, "ends the run") {
		t.Errorf("features: %+v %v", f, err)
	}

	getState := newSvcClient(t, cliNode, "/tcs/get_simulation_state", rmsgs.GetSimulationState, "c2")
	state := func() uint8 {
		_, st, res, err := rmsgs.DecodeStateResponse(getState.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendEmptyRequest(nil, h) }, 5*time.Second))
		if err != nil || res.Code != uint8(simcontrol.OK) {
			t.Errorf("get state: %v %+v", err, res)
		}
		return st
	}
	if st := state(); st != uint8(simcontrol.Paused) {
		t.Errorf("state %d, want paused", st)
	}

	step := newSvcClient(t, cliNode, "/tcs/step_simulation", rmsgs.StepSimulation, "c3")
	_, res, err := rmsgs.DecodeResultResponse(step.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint64Request(nil, h, 10) }, 5*time.Second))
	made := loop.Steps()
	if err != nil || res.Code != uint8(simcontrol.OK) || made != 10 {
		t.Errorf("step 10: %+v %v; the loop made %d steps", res, err, made)
	}

	set := newSvcClient(t, cliNode, "/tcs/set_simulation_state", rmsgs.SetSimulationState, "c4")
	setState := func(st uint8) rmsgs.Result {
		_, res, err := rmsgs.DecodeResultResponse(set.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint8Request(nil, h, st) }, 5*time.Second))
		if err != nil {
			t.Error(err)
		}
		return res
	}
	if res := setState(1); res.Code != uint8(simcontrol.OK) || state() != uint8(simcontrol.Playing) {
		t.Errorf("play: %+v", res)
	}
	if res := setState(1); res.Code != uint8(simcontrol.AlreadyInTargetState) {
		t.Errorf("play twice: %+v", res)
	}
	if res := setState(9); res.Code != uint8(simcontrol.IncorrectTransition) {
		t.Errorf("state 9: %+v", res)
	}

	reset := newSvcClient(t, cliNode, "/tcs/reset_simulation", rmsgs.ResetSimulation, "c5")
	for _, c := range []struct {
		scope uint8
		want  string
	}{{0, "SCOPE_TIME"}, {1, "SCOPE_TIME"}, {2, "SCOPE_STATE"}, {4, "SCOPE_SPAWNED"}} {
		_, res, err := rmsgs.DecodeResultResponse(reset.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint8Request(nil, h, c.scope) }, 5*time.Second))
		if err != nil || res.Code != uint8(simcontrol.FeatureUnsupported) || !strings.Contains(res.Message, c.want) {
			t.Errorf("reset scope %d: %+v %v, want FEATURE_UNSUPPORTED naming %s", c.scope, res, err, c.want)
		}
	}

	if res := setState(2); res.Code != uint8(simcontrol.OK) {
		t.Errorf("pause: %+v", res)
	}
	if res := setState(0); res.Code != uint8(simcontrol.OK) || !strings.Contains(res.Message, "ends the run") {
		t.Errorf("stop: %+v", res)
	}
	if ops := loop.Ops(); !strings.Contains(strings.Join(opNames(ops), " "), "get step play get play pause stop") {
		t.Errorf("the loop saw %v", ops)
	}
}

func opNames(ops []simcontrol.Op) []string {
	var s []string
	for _, o := range ops {
		s = append(s, o.String())
	}
	return s
}

// The SimulateSteps action: a goal's feedback after each step, its result,
// and a cancel that ends a goal after the step under way.
func TestSimulateStepsAction(t *testing.T) {
	s, loop, cli := startSimServer(t)
	sendGoal, getResult, cancelGoal, feedbackTopic, _ := rmsgs.ActionNames("/tcs/simulate_steps")
	fb, err := cli.Reader(feedbackTopic, rmsgs.SimulateStepsFeedback, QoS{Reliable: true, Depth: 100}, false)
	if err != nil {
		t.Fatal(err)
	}
	send := newSvcClient(t, cli, sendGoal, rmsgs.SimulateStepsSendGoal, "a1")
	get := newSvcClient(t, cli, getResult, rmsgs.SimulateStepsGetResult, "a2")
	cancel := newSvcClient(t, cli, cancelGoal, rmsgs.CancelGoal, "a3")

	id := rmsgs.UUID{1, 2, 3}
	_, acc, _, err := rmsgs.DecodeSendGoalResponse(send.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendSendGoalRequest(nil, h, id, 5) }, 5*time.Second))
	if err != nil || !acc {
		t.Fatalf("send goal: accepted %v, %v", acc, err)
	}
	_, st, res, err := rmsgs.DecodeGetResultResponse(get.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendGoalIDRequest(nil, h, id) }, 5*time.Second))
	if err != nil || st != rmsgs.GoalSucceeded || res.Code != uint8(simcontrol.OK) {
		t.Errorf("result: status %d %+v %v", st, res, err)
	}
	var got []uint64
	buf := make([]byte, 256)
	deadline := time.Now().Add(2 * time.Second)
	for len(got) < 5 && time.Now().Before(deadline) {
		var pub Guid
		n, ok, _ := fb.Take(buf, &pub)
		if !ok {
			time.Sleep(time.Millisecond)
			continue
		}
		gid, c, r, err := rmsgs.DecodeStepsFeedback(buf[:n])
		if err != nil || gid != id || c+r != 5 {
			t.Errorf("feedback: %v %d %d %v", gid, c, r, err)
		}
		got = append(got, c)
	}
	if len(got) != 5 || got[0] != 1 || got[4] != 5 {
		t.Errorf("feedback completed_steps %v, want 1..5", got)
	}

	// Unknown goal; zero steps rejected.
	if _, st, _, _ := rmsgs.DecodeGetResultResponse(get.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendGoalIDRequest(nil, h, rmsgs.UUID{9}) }, 5*time.Second)); st != rmsgs.GoalUnknown {
		t.Errorf("unknown goal: status %d", st)
	}
	if _, acc, _, _ := rmsgs.DecodeSendGoalResponse(send.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendSendGoalRequest(nil, h, rmsgs.UUID{7}, 0) }, 5*time.Second)); acc {
		t.Error("a goal of 0 steps was accepted")
	}

	// Cancel a goal of 100 steps while its third step is held.
	hold := loop.Hold(100)
	hold <- struct{}{}
	hold <- struct{}{}
	id2 := rmsgs.UUID{4, 5, 6}
	if _, acc, _, _ := rmsgs.DecodeSendGoalResponse(send.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendSendGoalRequest(nil, h, id2, 100) }, 5*time.Second)); !acc {
		t.Fatal("goal 2 not accepted")
	}
	for deadline := time.Now().Add(5 * time.Second); s.progressOf(id2) < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	_, code, canceling, err := rmsgs.DecodeCancelGoalResponse(cancel.call(func(h rmsgs.ServiceHeader) []byte {
		return rmsgs.AppendCancelGoalRequest(nil, h, rmsgs.GoalInfo{ID: id2})
	}, 5*time.Second))
	if err != nil || code != rmsgs.CancelNone || len(canceling) != 1 || canceling[0].ID != id2 {
		t.Errorf("cancel: code %d %v %v", code, canceling, err)
	}
	hold <- struct{}{} // the step under way
	_, st, res, _ = rmsgs.DecodeGetResultResponse(get.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendGoalIDRequest(nil, h, id2) }, 5*time.Second))
	if st != rmsgs.GoalCanceled || !strings.Contains(res.Message, "canceled") {
		t.Errorf("canceled goal: status %d %+v", st, res)
	}
	if _, code, _, _ := rmsgs.DecodeCancelGoalResponse(cancel.call(func(h rmsgs.ServiceHeader) []byte {
		return rmsgs.AppendCancelGoalRequest(nil, h, rmsgs.GoalInfo{ID: id2})
	}, 5*time.Second)); code != rmsgs.CancelGoalTerminated {
		t.Errorf("cancel a finished goal: code %d", code)
	}
}

// progressOf is the steps made by goal id so far (0 when unknown).
func (s *SimServer) progressOf(id rmsgs.UUID) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.find(id); g != nil {
		return g.progress.Load()
	}
	return 0
}

func TestResetUnsupported(t *testing.T) {
	for _, c := range []struct {
		scope      uint8
		resettable bool
		want       string // "" : served
	}{
		{2, true, ""},
		{2, false, "SCOPE_STATE"},
		{0, true, "SCOPE_TIME"},
		{255, true, "SCOPE_TIME"},
		{3, true, "SCOPE_TIME"},
		{6, true, "SCOPE_SPAWNED"},
		{8 | 2, true, "not defined"},
	} {
		got := ResetUnsupported(c.scope, c.resettable)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("ResetUnsupported(%d, %v) = %q, want %q", c.scope, c.resettable, got, c.want)
		}
	}
}
