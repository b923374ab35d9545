//go:build ros2

package ros2

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// SimConf configures a SimServer.
type SimConf struct {
	// Node is the participant the services are served on (required).
	Node *Node
	// Control carries the requests to the run's dispatch loop (required).
	Control *simcontrol.Controller
	// Resettable says the world can be put back in its initial state:
	// ResetSimulation with SCOPE_STATE is then served (simcontrol.Reset).
	// Default false: every reset is FEATURE_UNSUPPORTED.
	Resettable bool
	// Namespace is where the services are; default "/tcs".
	Namespace string
	// Log receives what goes wrong (malformed requests, clients whose
	// reply reader never matched). Default: discarded.
	Log zerolog.Logger
	// ReplyWait bounds how long a reply waits for the client's reply
	// reader to be matched; default 2 s.
	ReplyWait time.Duration
	// Changed, when not nil, is called with the dispatch loop's reply to
	// every request other than a state query that took effect
	// (simcontrol.Reply.TookEffect), before the reply is sent: the bridge
	// publishes /tcs/status at once with the run's new state.
	Changed func(simcontrol.Reply)
}

// The services and the action a SimServer serves, under its namespace.
const (
	SrvGetSimulatorFeatures = "get_simulator_features"
	SrvGetSimulationState   = "get_simulation_state"
	SrvSetSimulationState   = "set_simulation_state"
	SrvStepSimulation       = "step_simulation"
	SrvResetSimulation      = "reset_simulation"
	ActSimulateSteps        = "simulate_steps"
)

// getTimeout bounds a request other than a step: the dispatch loop
// answers those at its next turn.
const getTimeout = 30 * time.Second

// resultGrace is how long a SimulateSteps result waits after its last
// feedback was acknowledged (execute).
const resultGrace = 50 * time.Millisecond

// maxGoals is how many SimulateSteps goals the server remembers (for
// get_result, cancel and the status topic); the oldest finished ones go.
const maxGoals = 64

// SimServer serves simulation_interfaces on the bridge's participant, as
// an rmw_cyclonedds node would: GetSimulatorFeatures, GetSimulationState,
// SetSimulationState, StepSimulation, ResetSimulation and the
// SimulateSteps action. Each request is served in a goroutine of its own,
// which calls Controller.Do and waits for the dispatch loop's answer;
// Cyclone's threads only write to an eventfd.
type SimServer struct {
	conf     SimConf
	n        *Node
	efd      *os.File
	services []*service
	feedback *Writer
	status   *Writer
	nextID   atomic.Uint32

	ctx    context.Context
	cancel context.CancelFunc
	loopWG sync.WaitGroup
	reqWG  sync.WaitGroup

	mu      sync.Mutex
	goals   []*goal
	warned  map[string]bool
	closing bool
}

// service is one served service: its request reader, its reply writer.
type service struct {
	name  string // the ROS 2 name
	rd    *Reader
	wr    *Writer
	serve func(req *request) []byte // the reply sample, nil for none
}

// request is one request taken from a service's reader.
type request struct {
	svc    *service
	sample []byte
	pub    Guid   // the client's request writer
	client string // its clientid (USER_DATA), "" when it has none
}

// goal is an accepted SimulateSteps goal.
type goal struct {
	info   rmsgs.GoalInfo
	steps  uint64
	client [12]byte // the participant that sent it

	status int8 // guarded by SimServer.mu
	result rmsgs.Result

	progress   atomic.Uint64 // steps made, set on the dispatch thread
	kick       chan struct{} // progress moved
	cancel     chan struct{} // closed by a cancel request
	cancelOnce sync.Once
	done       chan struct{} // closed when the goal ended (status final)
}

// NewSimServer creates the services' readers and writers on conf.Node,
// announces them and starts serving.
func NewSimServer(conf SimConf) (s *SimServer, err error) {
	if conf.Node == nil || conf.Control == nil {
		return nil, errors.New("ros2: simulation services: a node and a controller are required")
	}
	if conf.Namespace == "" {
		conf.Namespace = "/tcs"
	}
	if conf.ReplyWait <= 0 {
		conf.ReplyWait = 2 * time.Second
	}
	fd, err := linux.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("ros2: simulation services: %w", err)
	}
	s = &SimServer{conf: conf, n: conf.Node, efd: os.NewFile(uintptr(fd), "simulation services eventfd"), warned: map[string]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ns := strings.TrimSuffix(conf.Namespace, "/")
	sendGoal, getResult, cancelGoal, feedback, status := rmsgs.ActionNames(ns + "/" + ActSimulateSteps)
	for _, d := range []struct {
		name, typ string
		serve     func(*request) []byte
	}{
		{ns + "/" + SrvGetSimulatorFeatures, rmsgs.GetSimulatorFeatures, s.serveFeatures},
		{ns + "/" + SrvGetSimulationState, rmsgs.GetSimulationState, s.serveGetState},
		{ns + "/" + SrvSetSimulationState, rmsgs.SetSimulationState, s.serveSetState},
		{ns + "/" + SrvStepSimulation, rmsgs.StepSimulation, s.serveStep},
		{ns + "/" + SrvResetSimulation, rmsgs.ResetSimulation, s.serveReset},
		{sendGoal, rmsgs.SimulateStepsSendGoal, s.serveSendGoal},
		{getResult, rmsgs.SimulateStepsGetResult, s.serveGetResult},
		{cancelGoal, rmsgs.CancelGoal, s.serveCancel},
	} {
		svc, err := s.newService(d.name, d.typ)
		if err != nil {
			return nil, err
		}
		svc.serve = d.serve
		s.services = append(s.services, svc)
	}
	// rcl_action's QoS: feedback as a default topic, status latched.
	if s.feedback, err = s.n.Writer(feedback, rmsgs.SimulateStepsFeedback, QoS{Reliable: true, Depth: 100}); err != nil {
		return nil, err
	}
	if s.status, err = s.n.Writer(status, rmsgs.GoalStatusArray, Latched); err != nil {
		return nil, err
	}
	if err := s.n.Announce(); err != nil {
		return nil, err
	}
	s.loopWG.Add(1)
	go s.loop()
	return s, nil
}

// newService creates service name's request reader and reply writer
// (rmw's service QoS: reliable, volatile), both carrying the same
// serviceid, by which an rmw_cyclonedds client pairs them.
func (s *SimServer) newService(name, typ string) (*service, error) {
	rq, rr, err := rmsgs.ServiceTopics(name)
	if err != nil {
		return nil, err
	}
	g := s.n.Guid()
	k := s.nextID.Add(1)
	id := fmt.Sprintf("%02x", g[0])
	for _, b := range append(g[1:12:12], byte(k>>24), byte(k>>16), byte(k>>8), byte(k)) {
		id += fmt.Sprintf(".%x", b)
	}
	ud := "serviceid=" + id + ";"
	q := QoS{Reliable: true, Depth: 64}
	rd, err := s.n.reader(endpointConf{dds: rq, label: name, rosType: rmsgs.Request(typ), userData: ud, q: q, listed: true,
		notify: true, efd: int(s.efd.Fd())})
	if err != nil {
		return nil, err
	}
	wr, err := s.n.writer(endpointConf{dds: rr, label: name, rosType: rmsgs.Response(typ), userData: ud, q: QoS{Reliable: true, Depth: 64}, listed: true})
	if err != nil {
		return nil, err
	}
	return &service{name: name, rd: rd, wr: wr}, nil
}

// loop takes the requests as they arrive and serves each in a goroutine.
func (s *SimServer) loop() {
	defer s.loopWG.Done()
	buf := make([]byte, 64<<10)
	ud := make([]byte, userDataMax)
	var b [8]byte
	for {
		if _, err := s.efd.Read(b[:]); err != nil {
			return // closed
		}
		for _, svc := range s.services {
			for {
				var pub Guid
				n, ok, err := svc.rd.take(buf, &pub, ud)
				if err != nil {
					s.warn("take "+svc.name, func(e *zerolog.Event) { e.Err(err).Msg("ros2: cannot take a request") })
					break
				}
				if !ok {
					break
				}
				if n > len(buf) {
					s.warn("big "+svc.name, func(e *zerolog.Event) { e.Str("service", svc.name).Msg("ros2: a request over 64 KiB was dropped") })
					continue
				}
				req := &request{svc: svc, sample: append([]byte(nil), buf[:n]...), pub: pub, client: rmsgs.UserDataValue(cString(ud), "clientid")}
				s.mu.Lock()
				closing := s.closing
				if !closing {
					s.reqWG.Add(1)
				}
				s.mu.Unlock()
				if closing {
					return
				}
				go func() {
					defer s.reqWG.Done()
					if rep := svc.serve(req); rep != nil {
						s.reply(svc.wr, req, rep)
					}
				}()
			}
		}
	}
}

// cString is b up to its first NUL.
func cString(b []byte) []byte {
	if i := slices.Index(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// warn logs once per key.
func (s *SimServer) warn(key string, f func(*zerolog.Event)) {
	s.mu.Lock()
	seen := s.warned[key]
	s.warned[key] = true
	s.mu.Unlock()
	if !seen {
		f(s.conf.Log.Warn())
	}
}

// malformed logs a request that does not decode; it gets no reply (its
// header may be what is wrong).
func (s *SimServer) malformed(req *request, err error) []byte {
	s.warn("malformed "+req.svc.name, func(e *zerolog.Event) {
		e.Err(err).Str("service", req.svc.name).Msg("ros2: a malformed request was dropped (reported once per service)")
	})
	return nil
}

// reply writes rep once w has matched the reply reader of the client that
// sent req. rmw_cyclonedds does the same (up to 100 ms): a reply written
// before that reader is matched never reaches it, and the client waits
// forever.
func (s *SimServer) reply(w *Writer, req *request, rep []byte) {
	if !s.waitReader(w, req.client, Prefix(req.pub)) {
		s.warn("unmatched "+req.svc.name, func(e *zerolog.Event) {
			e.Str("service", req.svc.name).Dur("waited", s.conf.ReplyWait).
				Msg("ros2: a client's reply reader was not matched in time; its reply was dropped (reported once per service)")
		})
		return
	}
	if err := w.Write(rep); err != nil {
		s.warn("write "+req.svc.name, func(e *zerolog.Event) { e.Err(err).Str("service", req.svc.name).Msg("ros2: cannot send a reply") })
	}
}

// waitReader waits, up to ReplyWait, until w has matched a reader whose
// USER_DATA says clientid=client, or, for a client without an id, any
// reader of participant pp.
func (s *SimServer) waitReader(w *Writer, client string, pp [12]byte) bool {
	deadline := time.Now().Add(s.conf.ReplyWait)
	for {
		ms, err := w.MatchedUserData()
		if err == nil && slices.ContainsFunc(ms, func(m Match) bool {
			if client != "" {
				return rmsgs.UserDataValue([]byte(m.UserData), "clientid") == client
			}
			return Prefix(m.Participant) == pp
		}) {
			return true
		}
		if time.Now().After(deadline) || s.ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// do sends a request to the dispatch loop; a request other than a step
// gives up after getTimeout.
func (s *SimServer) do(req simcontrol.Request) simcontrol.Reply {
	ctx := s.ctx
	if req.Op != simcontrol.Step {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, getTimeout)
		defer cancel()
	}
	rep := s.conf.Control.Do(ctx, req)
	if req.Op != simcontrol.Get {
		s.changed(rep)
	}
	return rep
}

// changed hands a reply that took effect to SimConf.Changed.
func (s *SimServer) changed(rep simcontrol.Reply) {
	if s.conf.Changed != nil && rep.TookEffect() {
		s.conf.Changed(rep)
	}
}

func result(rep simcontrol.Reply) rmsgs.Result {
	return rmsgs.Result{Code: uint8(rep.Code), Message: rep.Message}
}

// Features lists what the server supports (GetSimulatorFeatures).
func (s *SimServer) Features() rmsgs.SimulatorFeatures {
	f := rmsgs.SimulatorFeatures{Features: []uint16{
		rmsgs.FeatureSimulationStateGetting, rmsgs.FeatureSimulationStateSetting, rmsgs.FeatureSimulationStatePause,
		rmsgs.FeatureStepSimulationSingle, rmsgs.FeatureStepSimulationMultiple, rmsgs.FeatureStepSimulationAction}}
	if s.conf.Resettable {
		f.Features = append(f.Features, rmsgs.FeatureSimulationReset, rmsgs.FeatureSimulationResetState)
	}
	f.CustomInfo = "tcs: nodes' CPU time is charged to simulated time. Stopping (or quitting) ends the run; " +
		"time cannot be reset (the nodes' clocks cannot go back)"
	return f
}

func (s *SimServer) serveFeatures(req *request) []byte {
	h, err := rmsgs.DecodeEmptyRequest(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	f := s.Features()
	return rmsgs.AppendFeaturesResponse(nil, h, &f)
}

func (s *SimServer) serveGetState(req *request) []byte {
	h, err := rmsgs.DecodeEmptyRequest(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	rep := s.do(simcontrol.Request{Op: simcontrol.Get})
	return rmsgs.AppendStateResponse(nil, h, uint8(rep.State), result(rep))
}

// stopMessage is the reply to a stop when the dispatch loop said nothing:
// in tcs a stopped run does not start again.
const stopMessage = "stopping ends the run: tcs cannot rewind the nodes' clocks, so the run does not play again; " +
	"its summary and recording are written"

func (s *SimServer) serveSetState(req *request) []byte {
	h, state, err := rmsgs.DecodeUint8Request(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	var op simcontrol.Op
	switch simcontrol.State(state) {
	case simcontrol.Playing:
		op = simcontrol.Play
	case simcontrol.Paused:
		op = simcontrol.Pause
	case simcontrol.Stopped, simcontrol.Quitting:
		op = simcontrol.Stop
	default:
		return rmsgs.AppendResultResponse(nil, h, rmsgs.Result{Code: uint8(simcontrol.IncorrectTransition),
			Message: fmt.Sprintf("state %d: tcs has one world, always loaded; set 0 (stop), 1 (play), 2 (pause) or 3 (quit)", state)})
	}
	rep := s.do(simcontrol.Request{Op: op})
	res := result(rep)
	if op == simcontrol.Stop && rep.Code == simcontrol.OK && res.Message == "" {
		res.Message = stopMessage
	}
	return rmsgs.AppendResultResponse(nil, h, res)
}

func (s *SimServer) serveStep(req *request) []byte {
	h, steps, err := rmsgs.DecodeUint64Request(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	rep := s.do(simcontrol.Request{Op: simcontrol.Step, Steps: steps})
	return rmsgs.AppendResultResponse(nil, h, result(rep))
}

// The scopes of ResetSimulation (a bit field; 0 is SCOPE_ALL).
const (
	scopeTime    = 1
	scopeState   = 2
	scopeSpawned = 4
)

// ResetUnsupported says why a ResetSimulation of scope cannot be served
// ("" when it can): time cannot be reset, nothing is spawned, and the
// state only when the world can be reset.
func ResetUnsupported(scope uint8, resettable bool) string {
	if scope == 0 {
		scope = 255
	}
	var why []string
	if scope&scopeTime != 0 {
		why = append(why, "SCOPE_TIME: the nodes' clocks cannot go back")
	}
	if scope&scopeState != 0 && !resettable {
		why = append(why, "SCOPE_STATE: this run's world cannot be put back in its initial state")
	}
	if scope&scopeSpawned != 0 {
		why = append(why, "SCOPE_SPAWNED: tcs spawns no entities")
	}
	if rest := scope &^ (scopeTime | scopeState | scopeSpawned); rest != 0 && scope != 255 {
		why = append(why, fmt.Sprintf("scope bits %#x: not defined", rest))
	}
	if len(why) == 0 {
		return ""
	}
	return "unsupported: " + strings.Join(why, "; ")
}

func (s *SimServer) serveReset(req *request) []byte {
	h, scope, err := rmsgs.DecodeUint8Request(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	if why := ResetUnsupported(scope, s.conf.Resettable); why != "" {
		return rmsgs.AppendResultResponse(nil, h, rmsgs.Result{Code: uint8(simcontrol.FeatureUnsupported), Message: why})
	}
	return rmsgs.AppendResultResponse(nil, h, result(s.do(simcontrol.Request{Op: simcontrol.Reset})))
}

// ---- the SimulateSteps action ----

func (s *SimServer) serveSendGoal(req *request) []byte {
	h, id, steps, err := rmsgs.DecodeSendGoalRequest(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	now := time.Now().UnixNano()
	if steps == 0 {
		return rmsgs.AppendSendGoalResponse(nil, h, false, now)
	}
	g := &goal{info: rmsgs.GoalInfo{ID: id, Stamp: now}, steps: steps, client: Prefix(req.pub), status: rmsgs.GoalAccepted,
		kick: make(chan struct{}, 1), cancel: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	if s.find(id) != nil {
		s.mu.Unlock()
		return rmsgs.AppendSendGoalResponse(nil, h, false, now) // a goal id is used once
	}
	s.goals = append(s.goals, g)
	s.trimGoals()
	s.mu.Unlock()
	s.reply(req.svc.wr, req, rmsgs.AppendSendGoalResponse(nil, h, true, now))
	s.execute(g)
	return nil
}

// find returns the goal with id (s.mu held).
func (s *SimServer) find(id rmsgs.UUID) *goal {
	for _, g := range s.goals {
		if g.info.ID == id {
			return g
		}
	}
	return nil
}

// trimGoals forgets the oldest finished goals beyond maxGoals (s.mu held).
func (s *SimServer) trimGoals() {
	for i := 0; len(s.goals) > maxGoals && i < len(s.goals); {
		if final(s.goals[i].status) {
			s.goals = slices.Delete(s.goals, i, i+1)
			continue
		}
		i++
	}
}

func final(status int8) bool {
	return status == rmsgs.GoalSucceeded || status == rmsgs.GoalCanceled || status == rmsgs.GoalAborted
}

// publishStatus writes every remembered goal's status (latched).
func (s *SimServer) publishStatus() {
	s.mu.Lock()
	st := make([]rmsgs.GoalStatus, len(s.goals))
	for i, g := range s.goals {
		st[i] = rmsgs.GoalStatus{Info: g.info, Status: g.status}
	}
	s.mu.Unlock()
	if err := s.status.Write(rmsgs.AppendGoalStatusArray(nil, st)); err != nil {
		s.warn("status", func(e *zerolog.Event) { e.Err(err).Msg("ros2: cannot publish the action's status") })
	}
}

func (s *SimServer) setStatus(g *goal, status int8) {
	s.mu.Lock()
	if !final(g.status) {
		g.status = status
	}
	s.mu.Unlock()
	s.publishStatus()
}

// execute steps the world for goal g: feedback after each step, then its
// result.
func (s *SimServer) execute(g *goal) {
	// The client's feedback reader must be matched before the first
	// feedback is written, or it misses it.
	if !s.waitReader(s.feedback, "", g.client) {
		s.warn("feedback", func(e *zerolog.Event) {
			e.Msg("ros2: an action client's feedback reader was not matched in time; it may miss feedback")
		})
	}
	s.setStatus(g, rmsgs.GoalExecuting)
	stepped := make(chan struct{})
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		var sent uint64
		flush := func() {
			for p := g.progress.Load(); sent < p && sent < g.steps; {
				sent++
				if err := s.feedback.Write(rmsgs.AppendStepsFeedback(nil, g.info.ID, sent, g.steps-sent)); err != nil {
					s.warn("feedback write", func(e *zerolog.Event) { e.Err(err).Msg("ros2: cannot publish the action's feedback") })
				}
			}
		}
		for {
			select {
			case <-g.kick:
				flush()
			case <-stepped:
				flush()
				return
			}
		}
	}()
	rep := s.conf.Control.Do(s.ctx, simcontrol.Request{Op: simcontrol.Step, Steps: g.steps, Progress: g.onStep, Cancel: g.cancel})
	s.changed(rep)
	close(stepped)
	<-fed
	// Feedback and result travel on different topics, and rclpy's action
	// client takes one feedback per wake-up and stops listening at the
	// result: a result right behind the last feedbacks loses them. It waits
	// until the client has the feedback, and a little more.
	if err := s.feedback.WaitAcks(time.Second); err != nil {
		s.warn("feedback acks", func(e *zerolog.Event) { e.Err(err).Msg("ros2: the action's feedback was not acknowledged in time") })
	}
	select {
	case <-time.After(resultGrace):
	case <-s.ctx.Done():
	}
	status := rmsgs.GoalAborted
	canceled := false
	select {
	case <-g.cancel:
		canceled = true
	default:
	}
	switch {
	case rep.Code == simcontrol.OK && rep.Steps >= g.steps:
		status = rmsgs.GoalSucceeded
	case canceled:
		status = rmsgs.GoalCanceled
		if rep.Message == "" {
			rep.Message = fmt.Sprintf("canceled after %d of %d steps", rep.Steps, g.steps)
		}
	}
	s.mu.Lock()
	g.status = status
	g.result = result(rep)
	s.mu.Unlock()
	close(g.done)
	s.publishStatus()
}

// onStep is the step request's Progress: it runs on the dispatch thread,
// so it only records the count and nudges the feedback writer.
func (g *goal) onStep(done, _ uint64) {
	g.progress.Store(done)
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (s *SimServer) serveGetResult(req *request) []byte {
	h, id, err := rmsgs.DecodeGoalIDRequest(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	s.mu.Lock()
	g := s.find(id)
	s.mu.Unlock()
	if g == nil {
		return rmsgs.AppendGetResultResponse(nil, h, rmsgs.GoalUnknown, rmsgs.Result{Code: uint8(simcontrol.NotFound), Message: "no such goal"})
	}
	select {
	case <-g.done:
	case <-s.ctx.Done():
		return nil
	}
	s.mu.Lock()
	status, res := g.status, g.result
	s.mu.Unlock()
	return rmsgs.AppendGetResultResponse(nil, h, status, res)
}

func (s *SimServer) serveCancel(req *request) []byte {
	h, gi, err := rmsgs.DecodeCancelGoalRequest(req.sample)
	if err != nil {
		return s.malformed(req, err)
	}
	var canceling []rmsgs.GoalInfo
	code := rmsgs.CancelNone
	s.mu.Lock()
	byID := gi.ID != rmsgs.UUID{}
	for _, g := range s.goals {
		if final(g.status) || g.status == rmsgs.GoalCanceling {
			continue
		}
		all := !byID && gi.Stamp == 0
		before := gi.Stamp != 0 && g.info.Stamp <= gi.Stamp
		if all || before || byID && g.info.ID == gi.ID {
			g.status = rmsgs.GoalCanceling
			g.cancelOnce.Do(func() { close(g.cancel) })
			canceling = append(canceling, g.info)
		}
	}
	if len(canceling) == 0 {
		code = rmsgs.CancelRejected
		if byID {
			if g := s.find(gi.ID); g == nil {
				code = rmsgs.CancelUnknownGoal
			} else if final(g.status) {
				code = rmsgs.CancelGoalTerminated
			}
		}
	}
	s.mu.Unlock()
	if len(canceling) > 0 {
		s.publishStatus()
	}
	return rmsgs.AppendCancelGoalResponse(nil, h, code, canceling)
}

// Close stops serving: requests waiting for the dispatch loop are
// abandoned (their clients get no reply). The node stays open.
func (s *SimServer) Close() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	s.mu.Unlock()
	s.cancel()
	// Delete the readers before closing the eventfd: their listener writes
	// to it from Cyclone's threads.
	for _, svc := range s.services {
		svc.rd.Close()
	}
	s.efd.Close()
	s.loopWG.Wait()
	s.reqWG.Wait()
}
