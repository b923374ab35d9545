package ros2

import (
	"fmt"

	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// Services as rmw_cyclonedds carries them: service /s has a request topic
// rq/sRequest and a reply topic rr/sReply, of DDS types
// pkg::srv::dds_::S_Request_ and S_Response_ (ServiceTopics). Each request
// sample has, between the encapsulation header and the request's fields, a
// 16-byte ServiceHeader; the reply carries the same header before the
// response's fields, and the client takes only replies whose header names
// its request writer. An action is three services and two topics under
// <name>/_action/ (ActionNames).
//
// The codecs below are for the types of simulation_interfaces (and
// action_msgs) that tcs serves. Decoders take a sample as received and
// never panic; encoders write what rmw_cyclonedds writes.

// ServiceHeader is rmw_cyclonedds's request header: the client's request
// writer (an instance handle that means something only to the client: a
// reply echoes it) and the request's sequence number.
type ServiceHeader struct {
	Writer uint64
	Seq    int64
}

// ServiceTopics returns the DDS topics of the request and reply of an
// absolute ROS 2 service name.
func ServiceTopics(service string) (request, reply string, err error) {
	t, err := TopicName(service)
	if err != nil {
		return "", "", fmt.Errorf("service: %w", err)
	}
	return "rq" + t[2:] + "Request", "rr" + t[2:] + "Reply", nil
}

// ActionNames returns the services (send_goal, get_result, cancel_goal)
// and topics (feedback, status) of action name.
func ActionNames(action string) (sendGoal, getResult, cancelGoal, feedback, status string) {
	p := action + "/_action/"
	return p + "send_goal", p + "get_result", p + "cancel_goal", p + "feedback", p + "status"
}

func beginService(w *cdr.Writer, dst []byte, h ServiceHeader) {
	w.Begin(dst)
	w.Uint64(h.Writer)
	w.Int64(h.Seq)
}

func readServiceHeader(r *cdr.Reader) ServiceHeader {
	return ServiceHeader{Writer: r.Uint64(), Seq: r.Int64()}
}

// Result is simulation_interfaces/msg/Result: a code (simcontrol.Code's
// values) and why.
type Result struct {
	Code    uint8
	Message string
}

func writeResult(w *cdr.Writer, res Result) {
	w.Uint8(res.Code)
	w.String(res.Message)
}

func readResult(r *cdr.Reader) Result { return Result{Code: r.Uint8(), Message: r.String()} }

// AppendEmptyRequest appends the request of a service whose request has no
// fields (GetSimulatorFeatures, GetSimulationState): rosidl gives it one
// placeholder octet.
func AppendEmptyRequest(dst []byte, h ServiceHeader) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Uint8(0)
	return w.Buf
}

// DecodeEmptyRequest reads such a request's header (the placeholder octet
// may be missing).
func DecodeEmptyRequest(sample []byte) (ServiceHeader, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	return h, done(&r, "empty request")
}

// AppendUint8Request appends a request whose one field is a uint8:
// SetSimulationState (SimulationState state) and ResetSimulation (scope).
func AppendUint8Request(dst []byte, h ServiceHeader, v uint8) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Uint8(v)
	return w.Buf
}

// DecodeUint8Request reads such a request.
func DecodeUint8Request(sample []byte) (ServiceHeader, uint8, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	v := r.Uint8()
	return h, v, done(&r, "uint8 request")
}

// AppendUint64Request appends a request whose one field is a uint64:
// StepSimulation (steps).
func AppendUint64Request(dst []byte, h ServiceHeader, v uint64) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Uint64(v)
	return w.Buf
}

// DecodeUint64Request reads such a request.
func DecodeUint64Request(sample []byte) (ServiceHeader, uint64, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	v := r.Uint64()
	return h, v, done(&r, "uint64 request")
}

// SimulatorFeatures is simulation_interfaces/msg/SimulatorFeatures.
type SimulatorFeatures struct {
	Features     []uint16
	SpawnFormats []string
	CustomInfo   string
}

// The SimulatorFeatures values tcs announces.
const (
	FeatureSimulationReset        = 20
	FeatureSimulationResetTime    = 21
	FeatureSimulationResetState   = 22
	FeatureSimulationStateGetting = 24
	FeatureSimulationStateSetting = 25
	FeatureSimulationStatePause   = 26
	FeatureStepSimulationSingle   = 31
	FeatureStepSimulationMultiple = 32
	FeatureStepSimulationAction   = 33
)

// AppendFeaturesResponse appends a GetSimulatorFeatures response.
func AppendFeaturesResponse(dst []byte, h ServiceHeader, f *SimulatorFeatures) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Len(len(f.Features))
	for _, v := range f.Features {
		w.Uint16(v)
	}
	w.Strings(f.SpawnFormats)
	w.String(f.CustomInfo)
	return w.Buf
}

// DecodeFeaturesResponse reads a GetSimulatorFeatures response.
func DecodeFeaturesResponse(sample []byte) (ServiceHeader, SimulatorFeatures, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	var f SimulatorFeatures
	n := r.Len(2)
	for i := 0; i < n && r.Err() == nil; i++ {
		f.Features = append(f.Features, r.Uint16())
	}
	n = r.Len(5)
	for i := 0; i < n && r.Err() == nil; i++ {
		f.SpawnFormats = append(f.SpawnFormats, r.String())
	}
	f.CustomInfo = r.String()
	return h, f, done(&r, "GetSimulatorFeatures response")
}

// AppendStateResponse appends a GetSimulationState response.
func AppendStateResponse(dst []byte, h ServiceHeader, state uint8, res Result) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Uint8(state)
	writeResult(&w, res)
	return w.Buf
}

// DecodeStateResponse reads a GetSimulationState response.
func DecodeStateResponse(sample []byte) (ServiceHeader, uint8, Result, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	state := r.Uint8()
	res := readResult(&r)
	return h, state, res, done(&r, "GetSimulationState response")
}

// AppendResultResponse appends a response whose one field is a Result:
// SetSimulationState, StepSimulation, ResetSimulation.
func AppendResultResponse(dst []byte, h ServiceHeader, res Result) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	writeResult(&w, res)
	return w.Buf
}

// DecodeResultResponse reads such a response.
func DecodeResultResponse(sample []byte) (ServiceHeader, Result, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	res := readResult(&r)
	return h, res, done(&r, "result response")
}

// UUID is unique_identifier_msgs/msg/UUID, an action goal's id.
type UUID [16]byte

// GoalInfo is action_msgs/msg/GoalInfo: a goal and when it was accepted
// (ns).
type GoalInfo struct {
	ID    UUID
	Stamp int64
}

// GoalStatus is action_msgs/msg/GoalStatus.
type GoalStatus struct {
	Info   GoalInfo
	Status int8
}

// The values of GoalStatus.Status.
const (
	GoalUnknown   int8 = 0
	GoalAccepted  int8 = 1
	GoalExecuting int8 = 2
	GoalCanceling int8 = 3
	GoalSucceeded int8 = 4
	GoalCanceled  int8 = 5
	GoalAborted   int8 = 6
)

// The return codes of a CancelGoal response.
const (
	CancelNone           int8 = 0
	CancelRejected       int8 = 1
	CancelUnknownGoal    int8 = 2
	CancelGoalTerminated int8 = 3
)

func readUUID(r *cdr.Reader) UUID {
	var id UUID
	for i := range id {
		id[i] = r.Uint8()
	}
	return id
}

func writeGoalInfo(w *cdr.Writer, g GoalInfo) {
	w.Buf = append(w.Buf, g.ID[:]...)
	w.Time(g.Stamp)
}

func readGoalInfo(r *cdr.Reader) GoalInfo { return GoalInfo{ID: readUUID(r), Stamp: r.Time()} }

// AppendSendGoalRequest appends a SimulateSteps_SendGoal request (goal id,
// steps).
func AppendSendGoalRequest(dst []byte, h ServiceHeader, id UUID, steps uint64) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Buf = append(w.Buf, id[:]...)
	w.Uint64(steps)
	return w.Buf
}

// DecodeSendGoalRequest reads a SimulateSteps_SendGoal request.
func DecodeSendGoalRequest(sample []byte) (ServiceHeader, UUID, uint64, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	id := readUUID(&r)
	steps := r.Uint64()
	return h, id, steps, done(&r, "SimulateSteps_SendGoal request")
}

// AppendSendGoalResponse appends a SendGoal response (accepted, stamp in
// ns).
func AppendSendGoalResponse(dst []byte, h ServiceHeader, accepted bool, stamp int64) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Bool(accepted)
	w.Time(stamp)
	return w.Buf
}

// DecodeSendGoalResponse reads a SendGoal response.
func DecodeSendGoalResponse(sample []byte) (ServiceHeader, bool, int64, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	acc := r.Bool()
	stamp := r.Time()
	return h, acc, stamp, done(&r, "SendGoal response")
}

// AppendGoalIDRequest appends a GetResult request (goal id).
func AppendGoalIDRequest(dst []byte, h ServiceHeader, id UUID) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Buf = append(w.Buf, id[:]...)
	return w.Buf
}

// DecodeGoalIDRequest reads a GetResult request.
func DecodeGoalIDRequest(sample []byte) (ServiceHeader, UUID, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	id := readUUID(&r)
	return h, id, done(&r, "GetResult request")
}

// AppendGetResultResponse appends a SimulateSteps_GetResult response: the
// goal's status and its Result.
func AppendGetResultResponse(dst []byte, h ServiceHeader, status int8, res Result) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Int8(status)
	writeResult(&w, res)
	return w.Buf
}

// DecodeGetResultResponse reads a SimulateSteps_GetResult response.
func DecodeGetResultResponse(sample []byte) (ServiceHeader, int8, Result, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	status := r.Int8()
	res := readResult(&r)
	return h, status, res, done(&r, "GetResult response")
}

// AppendCancelGoalRequest appends an action_msgs/CancelGoal request.
func AppendCancelGoalRequest(dst []byte, h ServiceHeader, g GoalInfo) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	writeGoalInfo(&w, g)
	return w.Buf
}

// DecodeCancelGoalRequest reads a CancelGoal request.
func DecodeCancelGoalRequest(sample []byte) (ServiceHeader, GoalInfo, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	g := readGoalInfo(&r)
	return h, g, done(&r, "CancelGoal request")
}

// AppendCancelGoalResponse appends a CancelGoal response.
func AppendCancelGoalResponse(dst []byte, h ServiceHeader, code int8, canceling []GoalInfo) []byte {
	var w cdr.Writer
	beginService(&w, dst, h)
	w.Int8(code)
	w.Len(len(canceling))
	for _, g := range canceling {
		writeGoalInfo(&w, g)
	}
	return w.Buf
}

// DecodeCancelGoalResponse reads a CancelGoal response.
func DecodeCancelGoalResponse(sample []byte) (ServiceHeader, int8, []GoalInfo, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readServiceHeader(&r)
	code := r.Int8()
	n := r.Len(16 + 8)
	var gs []GoalInfo
	for i := 0; i < n && r.Err() == nil; i++ {
		gs = append(gs, readGoalInfo(&r))
	}
	return h, code, gs, done(&r, "CancelGoal response")
}

// AppendStepsFeedback appends a SimulateSteps_FeedbackMessage.
func AppendStepsFeedback(dst []byte, id UUID, completed, remaining uint64) []byte {
	var w cdr.Writer
	w.Begin(dst)
	w.Buf = append(w.Buf, id[:]...)
	w.Uint64(completed)
	w.Uint64(remaining)
	return w.Buf
}

// DecodeStepsFeedback reads a SimulateSteps_FeedbackMessage.
func DecodeStepsFeedback(sample []byte) (id UUID, completed, remaining uint64, err error) {
	var r cdr.Reader
	r.Reset(sample)
	id = readUUID(&r)
	completed = r.Uint64()
	remaining = r.Uint64()
	return id, completed, remaining, done(&r, SimulateStepsFeedback)
}

// AppendGoalStatusArray appends an action_msgs/GoalStatusArray.
func AppendGoalStatusArray(dst []byte, st []GoalStatus) []byte {
	var w cdr.Writer
	w.Begin(dst)
	w.Len(len(st))
	for _, s := range st {
		writeGoalInfo(&w, s.Info)
		w.Int8(s.Status)
	}
	return w.Buf
}

// DecodeGoalStatusArray reads an action_msgs/GoalStatusArray.
func DecodeGoalStatusArray(sample []byte) ([]GoalStatus, error) {
	var r cdr.Reader
	r.Reset(sample)
	n := r.Len(16 + 8 + 1)
	var st []GoalStatus
	for i := 0; i < n && r.Err() == nil; i++ {
		st = append(st, GoalStatus{Info: readGoalInfo(&r), Status: r.Int8()})
	}
	return st, done(&r, GoalStatusArray)
}
