package ros2

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// simulationCases are samples of every simulation_interfaces codec, for
// the fuzz corpus.
func simulationCases() map[string][]byte {
	h := ServiceHeader{Writer: 0x0102030405060708, Seq: 5}
	id := UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	g := GoalInfo{ID: id, Stamp: 1_500_000_001}
	return map[string][]byte{
		"empty":       AppendEmptyRequest(nil, h),
		"set_state":   AppendUint8Request(nil, h, 2),
		"step":        AppendUint64Request(nil, h, 10),
		"features":    AppendFeaturesResponse(nil, h, &SimulatorFeatures{Features: []uint16{24, 25, 31}, SpawnFormats: []string{"sdf"}, CustomInfo: "tcs"}),
		"state":       AppendStateResponse(nil, h, 2, Result{1, ""}),
		"result":      AppendResultResponse(nil, h, Result{4, "steps must be ≥ 1"}),
		"send_goal":   AppendSendGoalRequest(nil, h, id, 5),
		"goal_resp":   AppendSendGoalResponse(nil, h, true, 2e9),
		"get_result":  AppendGoalIDRequest(nil, h, id),
		"result_resp": AppendGetResultResponse(nil, h, GoalSucceeded, Result{1, ""}),
		"cancel":      AppendCancelGoalRequest(nil, h, g),
		"cancel_resp": AppendCancelGoalResponse(nil, h, CancelNone, []GoalInfo{g, g}),
		"feedback":    AppendStepsFeedback(nil, id, 3, 2),
		"status":      AppendGoalStatusArray(nil, []GoalStatus{{g, GoalExecuting}, {GoalInfo{}, GoalSucceeded}}),
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The request header sits between the encapsulation header and the
// fields, little-endian like them; the fields are aligned from the
// encapsulation header's end, header included.
func TestServiceBytes(t *testing.T) {
	h := ServiceHeader{Writer: 0x0102030405060708, Seq: 5}
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"StepSimulation request", AppendUint64Request(nil, h, 10),
			"00010000 0807060504030201 0500000000000000 0a00000000000000"},
		{"GetSimulationState request", AppendEmptyRequest(nil, h),
			"00010000 0807060504030201 0500000000000000 00"},
		{"GetSimulationState response", AppendStateResponse(nil, h, 2, Result{3, "ab"}),
			"00010000 0807060504030201 0500000000000000 02 03 0000 03000000 616200"},
		{"SendGoal response", AppendSendGoalResponse(nil, h, true, 2_000_000_003),
			"00010000 0807060504030201 0500000000000000 01 000000 02000000 03000000"},
		{"FeedbackMessage", AppendStepsFeedback(nil, UUID{15: 9}, 3, 2),
			"00010000 00000000000000000000000000000009 0300000000000000 0200000000000000"},
		{"GoalStatusArray", AppendGoalStatusArray(nil, []GoalStatus{{GoalInfo{UUID{0: 1}, 1e9}, GoalExecuting}, {GoalInfo{UUID{0: 2}, 0}, GoalAborted}}),
			// A struct has no alignment of its own in XCDR1: the second
			// UUID follows the first status at once.
			"00010000 02000000 01000000000000000000000000000000 01000000 00000000 02" +
				" 02000000000000000000000000000000 000000 00000000 00000000 06"},
	} {
		if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s:\n got % x\nwant % x", c.name, c.got, want)
		}
	}
}

// Every codec reads back what it wrote.
func TestSimulationRoundTrip(t *testing.T) {
	h := ServiceHeader{Writer: 77, Seq: -3}
	id := UUID{9: 9}
	g := GoalInfo{ID: id, Stamp: 42}
	check := func(name string, got, want any, err error) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v (%v), want %+v", name, got, err, want)
		}
	}
	{
		gh, err := DecodeEmptyRequest(AppendEmptyRequest(nil, h))
		check("empty", gh, h, err)
		gh, err = DecodeEmptyRequest(AppendEmptyRequest(nil, h)[:4+16]) // no placeholder octet
		check("empty without placeholder", gh, h, err)
	}
	{
		gh, v, err := DecodeUint8Request(AppendUint8Request(nil, h, 255))
		check("uint8", []any{gh, v}, []any{h, uint8(255)}, err)
	}
	{
		gh, v, err := DecodeUint64Request(AppendUint64Request(nil, h, 1<<40))
		check("uint64", []any{gh, v}, []any{h, uint64(1 << 40)}, err)
	}
	{
		f := SimulatorFeatures{Features: []uint16{20, 22, 24}, SpawnFormats: []string{"a", ""}, CustomInfo: "x"}
		gh, got, err := DecodeFeaturesResponse(AppendFeaturesResponse(nil, h, &f))
		check("features", []any{gh, got}, []any{h, f}, err)
	}
	{
		gh, s, res, err := DecodeStateResponse(AppendStateResponse(nil, h, 3, Result{4, "why"}))
		check("state", []any{gh, s, res}, []any{h, uint8(3), Result{4, "why"}}, err)
	}
	{
		gh, res, err := DecodeResultResponse(AppendResultResponse(nil, h, Result{0, "SCOPE_TIME"}))
		check("result", []any{gh, res}, []any{h, Result{0, "SCOPE_TIME"}}, err)
	}
	{
		gh, gid, steps, err := DecodeSendGoalRequest(AppendSendGoalRequest(nil, h, id, 5))
		check("send goal", []any{gh, gid, steps}, []any{h, id, uint64(5)}, err)
	}
	{
		gh, acc, stamp, err := DecodeSendGoalResponse(AppendSendGoalResponse(nil, h, true, 7e9+1))
		check("send goal response", []any{gh, acc, stamp}, []any{h, true, int64(7e9 + 1)}, err)
	}
	{
		gh, gid, err := DecodeGoalIDRequest(AppendGoalIDRequest(nil, h, id))
		check("get result", []any{gh, gid}, []any{h, id}, err)
	}
	{
		gh, st, res, err := DecodeGetResultResponse(AppendGetResultResponse(nil, h, GoalCanceled, Result{1, "3 of 5"}))
		check("get result response", []any{gh, st, res}, []any{h, GoalCanceled, Result{1, "3 of 5"}}, err)
	}
	{
		gh, gg, err := DecodeCancelGoalRequest(AppendCancelGoalRequest(nil, h, g))
		check("cancel", []any{gh, gg}, []any{h, g}, err)
	}
	{
		gh, code, gs, err := DecodeCancelGoalResponse(AppendCancelGoalResponse(nil, h, CancelNone, []GoalInfo{g}))
		check("cancel response", []any{gh, code, gs}, []any{h, CancelNone, []GoalInfo{g}}, err)
	}
	{
		gid, c, r, err := DecodeStepsFeedback(AppendStepsFeedback(nil, id, 4, 1))
		check("feedback", []any{gid, c, r}, []any{id, uint64(4), uint64(1)}, err)
	}
	{
		st := []GoalStatus{{g, GoalSucceeded}, {GoalInfo{}, GoalUnknown}}
		got, err := DecodeGoalStatusArray(AppendGoalStatusArray(nil, st))
		check("status", got, st, err)
	}
}

// Truncated samples are errors, never panics or zero values taken as
// requests.
func TestSimulationTruncated(t *testing.T) {
	h := ServiceHeader{Writer: 1, Seq: 2}
	full := AppendSendGoalRequest(nil, h, UUID{1}, 5)
	for n := 0; n < len(full); n++ {
		if _, _, _, err := DecodeSendGoalRequest(full[:n]); err == nil {
			t.Errorf("a SendGoal request cut to %d of %d bytes was accepted", n, len(full))
		}
	}
	step := AppendUint64Request(nil, h, 3)
	if _, _, err := DecodeUint64Request(step[:len(step)-1]); err == nil {
		t.Error("a cut StepSimulation request was accepted")
	}
	be := append([]byte(nil), step...)
	be[1] = 0 // big-endian
	if _, _, err := DecodeUint64Request(be); err == nil {
		t.Error("a big-endian request was accepted")
	}
}

func TestServiceNames(t *testing.T) {
	rq, rr, err := ServiceTopics("/tcs/step_simulation")
	if err != nil || rq != "rq/tcs/step_simulationRequest" || rr != "rr/tcs/step_simulationReply" {
		t.Errorf("ServiceTopics: %q %q %v", rq, rr, err)
	}
	if _, _, err := ServiceTopics("tcs/x"); err == nil {
		t.Error("a relative service name was accepted")
	}
	sg, gr, cg, fb, st := ActionNames("/tcs/simulate_steps")
	if sg != "/tcs/simulate_steps/_action/send_goal" || gr != "/tcs/simulate_steps/_action/get_result" ||
		cg != "/tcs/simulate_steps/_action/cancel_goal" || fb != "/tcs/simulate_steps/_action/feedback" || st != "/tcs/simulate_steps/_action/status" {
		t.Errorf("ActionNames: %q %q %q %q %q", sg, gr, cg, fb, st)
	}
	if d, _ := DDSType(Request(SimulateStepsSendGoal)); d != "simulation_interfaces::action::dds_::SimulateSteps_SendGoal_Request_" {
		t.Errorf("DDSType: %q", d)
	}
}
