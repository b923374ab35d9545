package driver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/coordinator/native"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// RunConf configures one run of a scenario.
type RunConf struct {
	// Scenario is the validated scenario to run.
	Scenario *config.Scenario
	// OutDir receives summary.json and logs/ (created if missing).
	OutDir string
	// SelfExe is the tcs binary (clients' "tcs" argv[0], the trampoline and
	// the detector). Default os.Executable().
	SelfExe string
	// Status receives the live status line (nil: none). When it is not a
	// terminal the line is printed every StatusEvery instead of redrawn.
	Status io.Writer
	// StatusEvery is the status line's period; default 250 ms on a terminal,
	// 5 s otherwise.
	StatusEvery time.Duration
	// Stop ends the run early when closed (SIGINT, SIGTERM); the summary is
	// still written, with ended = "interrupted".
	Stop <-chan struct{}
	// Log receives the run's log lines. Default: discarded.
	Log *zerolog.Logger
	// LockTimeout is how long to wait for another run holding the
	// simulation CPU; 0 fails at once naming the holder.
	LockTimeout time.Duration
	// Compensation overrides the scenario's timer error compensation when
	// not nil.
	Compensation *bool
	// Bridge is the ROS side of the run; required when a client has
	// api: ros.
	Bridge Bridge
	// NoRecord turns off the run's recording, OutDir/run.mcap (recorded
	// by default; see record.go).
	NoRecord bool
	// Trace, when not nil, receives per-activation and per-slice records
	// up to its capacity (trace.go; nil: none).
	Trace *Trace
	// Control, when not nil, brings requests to pause, play, step, reset or
	// stop the run (simulation_interfaces, /tcs services); the loop answers
	// each once it has taken effect and closes it when the run ends.
	Control *simcontrol.Controller
	// Notices receives, besides the log, what the user must know of the
	// run's set-up (what protects the machine less than it should); nil:
	// Status.
	Notices io.Writer
	// User, when not empty, overrides the scenario's user: (tcs run
	// --user): whom the clients run as.
	User string
	// Paused starts the run paused at virtual time 0: the clients start,
	// the world waits for a play or step request.
	Paused bool
	// World is the run's world, at its time 0, when the caller made it
	// (dynamics.New of the scenario's dynamics: the bridge's layout was
	// read from it) and closes it after Run; nil: Run makes and closes
	// its own.
	World dynamics.World
}

const (
	tagStop = uint64(1) << 31 // the stop eventfd; client request fds use their index
	// tagMaster is the embedded ROS master's listener (edge-triggered):
	// a connection arrived (waitMaster).
	tagMaster = uint64(1) << 28
	// tagHangup is the ROS 1 bridge's set of private clock connections: a
	// client closed its own (hangupWatcher).
	tagHangup = uint64(1) << 27
	// maxSlots is the number of actuator commands the driver can hold for
	// the policy (the policy's queue is smaller).
	maxSlots = 512
	// inboxDepth is how many messages per channel a native subscriber keeps.
	inboxDepth = 16
)

type message struct {
	used  bool
	stamp int64
	n     int
	vals  [native.MaxValues]float64
}

// inbox is one subscriber's ring of messages on one channel.
type inbox struct {
	ch   uint32
	ring [inboxDepth]message
	next int
}

// lateEvent is an activation that began more than a quarter period late,
// kept for the log.
type lateEvent struct {
	client            int
	due, begin, world int64
	wall              int64
	steps             int64 // the world's steps so far
}

// overEvent is a dispatch in which the client used much more CPU than
// the timer was armed for, kept for the log.
// overEvent is one dispatch, for the log: what was asked and measured,
// and where the client and the world stood once the policy had taken it
// (and served the request it ended with).
type overEvent struct {
	client                           int
	budget, arm, cpu, late, wall, at int64
	away                             int64 // of cpu: used while the coordinator was away
	timer, blocked                   bool
	stop                             coordinator.Stop
	state                            string // the client's state then
	progress, world, steps           int64
}

type runClient struct {
	conf      config.Client
	robot     int
	proc      *Proc
	ep        *native.Endpoint
	hello     bool
	base      int64 // process CPU clock before its first dispatch
	based     bool
	ran       int64 // CPU measured across dispatches
	uncharged int64 // CPU the policy left to the host (Policy.Split)
	away      int64 // CPU used raised while the dispatch goroutine was preempted (charged)
	last      int64 // free mode: CPU at the last usage report
	final     int64 // process CPU clock at exit or at the end
	relayIn   int64 // messages between clients handed to it
	relayLost int64 // ... that did not reach it (not connected any more)
	unsettled int64 // at the end: CPU used raised after the last wake, never charged (Mechanism.Unsettled)
	period    *report.PeriodStats
	inbox     []inbox
	exit      *int
	gone      bool
	idleOp    native.Op // the op (Idle or WriteIdle) an activation answers
	posts     bool      // native: allowed to post messages (takePosts)
	posted    int64     // messages it posted
	badPost   bool      // a bad post was logged
	// badRequests counts the requests refused as bad (unknown op,
	// arguments out of range).
	badRequests int64
	// A native client's release answered at its next dispatch (see
	// answer): the wait it ends and the client's time then.
	pending     bool
	pendingWait coordinator.WaitKind
	pendingNow  int64

	ros      bool  // a ROS node (api: ros)
	rosBE    bool  // a best-effort ROS node: its private clock follows its progress
	holds    int64 // dispatches held over a wait on the host or a ROS library's short sleep
	holdWall int64 // wall ns the world waited for those
	// pollerSeen is the thread a hold of a short sleep last found
	// sleeping (holdOver): one with a relative timeout, found again by a
	// later hold, is made the node's poller (Proc.HoldBack).
	pollerSeen int
	noClock    int64 // ROS: releases whose clock did not reach the node
	shutdown   bool  // let finish its shutdown ungated after the run (finishShutdowns)
	diagName   string
}

// runner is the state of one run; its loop runs on the locked dispatch
// thread and must not allocate.
type runner struct {
	rc      RunConf
	sc      *config.Scenario
	log     zerolog.Logger
	pol     *coordinator.Policy
	mech    *Mechanism
	world   dynamics.World
	failer  dynamics.Failer // world, when it can fail as it steps
	clients []*runClient
	stopFd  int

	bridge    Bridge
	hangups   hangupWatcher // the bridge's, when it has one
	scanner   *linux.SleepScanner
	diagW     msgs.DiagWriter
	diagSeq   uint32
	diagEvery int64
	diagNext  int64
	hwid      string
	loopCPU0  int64 // the dispatch thread's CPU clock when the loop began
	threadClk int32 // the dispatch thread's CPU clock (Mechanism.ThreadClock)
	loopDet0  int64 // the detector's CPU then
	procClk   int32 // tcs's process CPU clock (every thread of it)
	loopProc0 int64 // tcs's process CPU then
	detSoFar  int64 // the detector's CPU since then, as coordinatorSoFar last read it
	detCalls  int64 // coordinatorSoFar calls
	inStartup bool
	attachLn  *net.UnixListener // tcs attach, during start-up
	attachErr error             // the first refused tcs attach: start-up stops
	actuateFn func(robot, client int, cmd []float64)
	relayFn   func(relay, client int, body []byte)
	msgBuf    [coordinator.MaxRelayed]relayMsg
	frameBuf  []byte
	deliverFn func(client int)
	sampleFn  func(client int) bool // r.sampleNow, bound once

	obs  [][native.MaxValues]float64 // held sensor sample per body, at the last boundary
	obsN []int
	obsT int64 // virtual time of the held sample
	cmd  [maxSlots][native.MaxValues]float64
	cmdN [maxSlots]int

	drift report.Quantiles
	late  report.Quantiles
	dynNs int64
	// dynSelf is the dispatch thread's own CPU in the world's steps, what
	// the coordinator's cost leaves out: dynNs for a world in this
	// process; for one served elsewhere (elsewhere) only the exchange's.
	dynSelf int64
	// elsewhere: the world runs in another process (dynamics.Process),
	// whose time the steps wait for; worldPid is that process when tcs
	// started it (kept off the simulation CPU, killed by the watchdog).
	elsewhere bool
	worldPid  int
	detNs     int64
	coordNs   int64
	threadsNs int64 // tcs's other threads' CPU over the loop (threadsSoFar)
	thrSoFar  int64 // threadsSoFar as coordinatorSoFar last read it
	missesAll int64
	ended     string
	endClient int
	wallStart int64
	wallEnd   int64
	deadline  int64
	clk       linux.Clock
	part      atomic.Int32 // partStart, partLoop, partEnd: for the guard

	lateEv        [32]lateEvent
	ring          [8]overEvent // the last dispatches, for the first late activation
	ringN         int
	ringLog       [8]overEvent
	ringLogN      int
	stealSeen     int64
	stealNs       int64
	hostOverrunNs int64
	overrunEv     [32][2]int64
	noverrun      int
	overEv        [32]overEvent
	nover         int
	nlate         int

	// published for the status goroutine and the watchdog
	pubT, pubDrift, pubMisses, pubDispatches atomic.Int64
	pubCur                                   atomic.Int64 // the client dispatched, -1 between dispatches
	stall                                    stallState   // set by the watchdog (watchdog.go)
	ctl                                      control      // RunConf.Control (control.go)

	recH   recHook      // the recording (record.go)
	settle settler      // the bridge, when it must settle before a block is final (DDS)
	master masterWaiter // the ROS 1 bridge: its master answers before a block is final
	// masterKnock: a connection reached the master's listener since
	// waitMaster last looked (tagMaster); masterWatched: the listener is
	// in the wait set. waitMaster looks at the listener only after a knock,
	// or always when it is not watched.
	masterKnock, masterWatched bool
	masterKnocks               int64 // connections reported (tagMaster)
	adoptSeen                  int   // the mechanism's adoptions the policy was told of
	// masterWaits, masterWaitNs: blocks the loop let the master answer
	// first, and the wall time that took.
	masterWaits, masterWaitNs int64
	// settles, settleNs, settleTimeouts: blocks of a ROS client after
	// which the DDS bridge's receive path was settled, the wall time that
	// took, and the blocks where it gave up.
	settles, settleNs, settleTimeouts int64
	// holdScans, holdScanNs: blocks after which the hold-over rule read
	// what the client's threads wait on, and the wall time those reads
	// took.
	holdScans, holdScanNs int64
	// stops counts the dispatches by why they ended (coordinator.Stop),
	// for the log: what a client's activation costs in dispatches.
	stops [5]int64
}

// recorder adapts the runner to coordinator.Recorder.
type recorder struct{ r *runner }

func (rec recorder) Activation(c int, begin, due int64) {
	rc := rec.r.clients[c]
	if r := rec.r; begin-due > rc.conf.Period.Nanoseconds()/4 && r.nlate < len(r.lateEv) {
		if r.nlate == 0 {
			r.ringLog, r.ringLogN = r.ring, r.ringN
		}
		r.lateEv[r.nlate] = lateEvent{client: c, due: due, begin: begin, world: r.pol.Now(),
			wall: r.clk.Monotonic() - r.wallStart, steps: r.pol.Steps()}
		r.nlate++
	}
	if p := rc.period.Period(); p > 0 {
		rc.period.Activation(due/p, begin)
	}
	rec.r.recEvent(c, record.EventActivation, due, begin) // recording
	rec.r.traceActivation(c, begin, due)                  // trace (trace.go)
}

func (rec recorder) Miss(c int, due int64) {
	rec.r.missesAll++
	rec.r.recEvent(c, record.EventMiss, due, 0) // recording
}
func (rec recorder) Drift(d int64) { rec.r.drift.Add(d); rec.r.recDrift(d) }

// Run runs a scenario to its end and returns its summary, which it also
// writes to OutDir/summary.json. The error is non-nil when the run could not
// start or the machinery failed; a client that crashes is not an error (the
// summary says so).
func Run(rc RunConf) (*report.Summary, error) {
	if rc.Scenario == nil {
		return nil, errors.New("run: no scenario")
	}
	sc := rc.Scenario
	if rc.OutDir == "" {
		rc.OutDir = filepath.Join("out", sc.Name)
	}
	if err := os.MkdirAll(filepath.Join(rc.OutDir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("run: create output folder: %w", err)
	}
	log := zerolog.Nop()
	if rc.Log != nil {
		log = *rc.Log
	}
	r := &runner{rc: rc, sc: sc, log: log, endClient: -1}
	if err := r.prepare(); err != nil {
		return nil, err
	}

	// The dispatch loop owns a locked OS thread for the whole run; the
	// mechanism raises and pins exactly that thread.
	type result struct {
		s   *report.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread ends with the goroutine: it was pinned and raised, and
		// must not go back to Go's pool.
		s, err := r.run()
		done <- result{s, err}
	}()
	stopGuard := make(chan struct{})
	go r.guard(stopGuard, r.guardLimit())
	res := <-done
	close(stopGuard)
	if rc.World == nil {
		dynamics.Close(r.world) // the summary has read it
	}
	return res.s, res.err
}

// prepare builds the policy and the world: everything that can fail on bad
// input fails here, before any process starts.
func (r *runner) prepare() error {
	sc := r.sc
	mode := map[config.Mode]coordinator.Mode{
		config.ModeConsistent: coordinator.Consistent,
		config.ModeLockstep:   coordinator.Lockstep,
		config.ModeFree:       coordinator.Free,
	}[sc.Mode]
	comp := sc.Compensation
	if r.rc.Compensation != nil {
		comp = *r.rc.Compensation
	}
	pc := coordinator.Conf{
		Mode:           mode,
		Quantum:        sc.Quantum.Nanoseconds(),
		Step:           sc.Dynamics.Step.Nanoseconds(),
		Duration:       sc.Duration.Nanoseconds(),
		Robots:         len(sc.Robots),
		Compensation:   comp,
		RTF:            sc.Free.RTF,
		MaxRTF:         sc.MaxRTF,
		ContinueOnExit: sc.OnExit == config.OnExitContinue,
		RCLClocks:      sc.ROS.Transport == config.TransportROS2,
	}
	if sc.Actuation == config.ActuationHold {
		pc.Actuation = coordinator.Hold
	}
	for j, rb := range sc.Robots {
		for _, c := range rb.Clients {
			cc := coordinator.ClientConf{
				Name: c.Name, Robot: j, Priority: c.Priority, Period: c.Period.Nanoseconds(),
				CPUScale: c.CPUScale, Class: coordinator.Periodic,
			}
			if c.Class == config.ClassBestEffort {
				cc.Class = coordinator.BestEffort
			}
			switch c.API {
			case config.APIPlain:
				cc.API = coordinator.Plain
			case config.APIROS:
				cc.API = coordinator.ROS
			}
			// tcs sees a native client's messages, and a ROS node's only on
			// the topics it relays.
			cc.Observed = c.API == config.APINative
			cc.SamplesAtActivation = c.Samples == config.SamplesAtActivation
			for _, rl := range sc.ROS.Relay {
				if rl.From == c.Name {
					cc.Observed = true
				}
			}
			pc.Clients = append(pc.Clients, cc)
			rcl := &runClient{conf: c, robot: j, period: report.NewPeriodStats(c.Period.Nanoseconds()), ros: c.API == config.APIROS,
				rosBE: c.API == config.APIROS && c.Class == config.ClassBestEffort}
			for _, ch := range c.Subscribes {
				rcl.inbox = append(rcl.inbox, inbox{ch: uint32(ch)})
			}
			r.clients = append(r.clients, rcl)
		}
	}
	if sc.HasROS() && r.rc.Bridge == nil {
		return fmt.Errorf("%s: clients with api: ros need the ROS bridge", sc.File)
	}
	r.bridge = r.rc.Bridge
	r.settle, _ = r.bridge.(settler)
	r.master, _ = r.bridge.(masterWaiter)
	r.diagEvery = sc.ROS.DiagnosticsPeriod.Nanoseconds()
	if r.diagEvery <= 0 {
		r.diagEvery = 1e9
	}
	for _, c := range r.clients {
		c.diagName = "tcs: " + c.conf.Name
	}
	r.actuateFn = r.actuate
	r.relayFn = r.relay
	// What a client's threads wait on when it blocks outside tcs (the
	// hold-over rule, Policy.HoldOver): a wait on the host, or a ROS
	// library's short wall-clock sleep.
	scan, err := linux.NewSleepScanner()
	if err != nil {
		r.log.Warn().Err(err).Msg("no hold-over: a client waiting on the host (disk) lets the world run on, and a roscpp client's activations may end at its first 1 ms poll")
	}
	r.scanner = scan
	pol, err := coordinator.New(pc, recorder{r})
	if err != nil {
		return fmt.Errorf("%s: %w", sc.File, err)
	}
	r.pol = pol
	r.deliverFn = pol.Delivered
	r.sampleFn = r.sampleNow
	if r.rc.Paused {
		pol.Pause()
	}
	world := r.rc.World
	if world == nil {
		if world, err = dynamics.New(sc.Dynamics.Model, len(sc.Robots), sc.Dynamics.Step.Nanoseconds(), sc.Dynamics.Params); err != nil {
			return fmt.Errorf("%s: dynamics: %w", sc.File, err)
		}
	} else if world.Bodies() < len(sc.Robots) {
		return fmt.Errorf("%s: dynamics: the world given has %d bodies for %d robots", sc.File, world.Bodies(), len(sc.Robots))
	}
	if err := fitsNative(world, sc.Dynamics.Model); err != nil {
		if r.rc.World == nil {
			dynamics.Close(world)
		}
		return fmt.Errorf("%s: dynamics: %w", sc.File, err)
	}
	r.world = world
	r.failer, _ = world.(dynamics.Failer)
	if p, ok := world.(dynamics.Process); ok {
		r.elsewhere, r.worldPid = true, p.Pid()
	}
	r.obs = make([][native.MaxValues]float64, world.Bodies())
	r.obsN = make([]int, world.Bodies())
	for b := range r.obs {
		r.obsN[b] = world.Observe(b, r.obs[b][:])
	}
	return nil
}

// fitsNative checks that every body's observation and command fit the
// native protocol's MaxValues (the held samples, the commands and the
// recording are that size): a larger world would be cut without a word.
func fitsNative(w dynamics.World, model string) error {
	for b := 0; b < w.Bodies(); b++ {
		if n := w.ObservationLen(b); n > native.MaxValues {
			return fmt.Errorf("model %s: body %d observes %d values (positions and velocities of %d joints); tcs carries at most %d (%d joints)",
				model, b, n, n/2, native.MaxValues, native.MaxValues/2)
		}
		if n := w.CommandLen(b); n > native.MaxValues {
			return fmt.Errorf("model %s: body %d takes %d command values (actuators); tcs carries at most %d", model, b, n, native.MaxValues)
		}
	}
	return nil
}

// run starts the machinery and the clients, runs the loop and cleans up. It
// runs on the locked dispatch thread.
func (r *runner) run() (sum *report.Summary, err error) {
	sc := r.sc
	user, err := r.clientUser()
	if err != nil {
		return nil, err
	}
	mech, err := New(Conf{
		CPU: sc.CPU, Base: sc.BasePriority, LogDir: filepath.Join(r.rc.OutDir, "logs"),
		SelfExe: r.rc.SelfExe, LockTimeout: r.rc.LockTimeout,
		User: &user,
	})
	if err != nil {
		return nil, fmt.Errorf("start the coordinator: %w", err)
	}
	r.mech = mech
	if r.worldPid != 0 {
		// The world's process was started before the simulation CPU was
		// taken: it must not run there.
		if err := mech.KeepOff(r.worldPid); err != nil {
			return nil, fmt.Errorf("the world's process %d: %w", r.worldPid, err)
		}
	}
	for _, n := range mech.CgroupNotes() {
		r.notice(n)
	}
	if r.scanner != nil {
		defer r.scanner.Close()
	}
	r.hwid = "tcs cpu" + strconv.Itoa(mech.CPU())
	r.log.Info().Int("pid", os.Getpid()).Int("detector_tid", mech.DetectorTid()).Int("cpu", mech.CPU()).
		Int("base_priority", mech.Base()).Msg("coordinator started")
	defer func() {
		if cerr := mech.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("stop the coordinator: %w", cerr)
		}
		if n := mech.Leftovers(); n > 0 {
			r.notice(fmt.Sprintf("killed %d processes the clients had started that outlived them (they had left their process groups)", n))
		}
		if n := mech.Adopted(); n > 0 {
			r.log.Info().Int("processes", n).Msg("adopted the processes the clients started: run and charged with them")
		}
		if n := mech.EventsLost(); n > 0 {
			r.notice(fmt.Sprintf("the kernel dropped process events %d times: a process a client started may have run unadopted", n))
		}
	}()
	r.stopFd, err = linux.Eventfd(0, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.NewFile(uintptr(r.stopFd), "stop").Close() }()
	if err := mech.AddFd(r.stopFd, tagStop); err != nil {
		return nil, err
	}
	closeCtl, err := r.openControl()
	if err != nil {
		return nil, err
	}
	defer closeCtl()
	defer r.closeControl()
	// Recording (record.go): closed on every way out of run.
	if err := r.recOpen(); err != nil {
		return nil, err
	}
	defer r.recAbort()
	if r.bridge != nil {
		// The latched first sample and clocks are out before any client
		// starts.
		r.publish(0)
		if err := mech.AddFd(r.bridge.Fd(), tagBridge); err != nil {
			return nil, err
		}
		if hw, ok := r.bridge.(hangupWatcher); ok {
			if err := mech.AddFd(hw.HangupFd(), tagHangup); err != nil {
				return nil, err
			}
			r.hangups = hw
		}
	}
	if r.master != nil {
		r.masterKnock = true
		if fd := r.master.MasterFd(); fd >= 0 {
			if err := mech.AddFdEdge(fd, tagMaster); err != nil {
				return nil, err
			}
			r.masterWatched = true
		}
	}
	r.recStep(0) // recording
	if err := r.spawnAll(); err != nil {
		return nil, err
	}

	stopWatch := make(chan struct{})
	var wg sync.WaitGroup
	if r.rc.Stop != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-r.rc.Stop:
				var b [8]byte
				_ = linux.WriteU64(r.stopFd, &b, 1)
			case <-stopWatch:
			}
		}()
	}
	if r.rc.Status != nil {
		wg.Add(1)
		go func() { defer wg.Done(); r.status(stopWatch) }()
	}

	// Garbage collection would stop the dispatch thread; the loop does not
	// allocate, so collect rarely during the run.
	old := debug.SetGCPercent(800)
	defer debug.SetGCPercent(old)

	if r.bridge != nil {
		r.inStartup = true
		err := r.startup()
		r.inStartup = false
		r.closeAttach()
		if err != nil && !errors.Is(err, errStartupStop) {
			close(stopWatch)
			wg.Wait()
			return nil, err
		}
	}
	if r.sc.Mode == config.ModeFree {
		// After the ROS start-up, whose end puts every ROS node under
		// control and resumes the detector: done before it, the nodes sat
		// at ℓ3 under the spinning detector for the whole run.
		if err := r.freeSetup(); err != nil {
			close(stopWatch)
			wg.Wait()
			return nil, err
		}
	}

	r.wallStart = r.clk.Monotonic()
	r.stealSeen, _ = linux.ReadSteal(mech.CPU())
	limit := sc.EffectiveWallLimit().Nanoseconds()
	r.deadline = r.wallStart + limit
	r.threadClk = mech.ThreadClock()
	r.loopCPU0, _ = r.clk.Ns(r.threadClk)
	r.loopDet0 = mech.DetectorCPU()
	r.procClk = linux.ProcessCPUClock(os.Getpid())
	r.loopProc0, _ = r.clk.Ns(r.procClk)
	if r.bridge != nil && r.ended == "" {
		r.diagnostics(0)
		r.diagNext = r.diagEvery
	}
	var loopErr error
	if r.ended == "" {
		r.pubCur.Store(-1)
		stopWatchdog := r.startWatchdog(time.Duration(sc.EffectiveStallTimeout()))
		r.part.Store(partLoop)
		loopErr = r.loop()
		stopWatchdog()
	}
	r.part.Store(partEnd)
	r.wallEnd = r.clk.Monotonic()
	r.coordNs = r.coordinatorNs()
	r.threadsNs = r.threadsSoFar()
	r.detNs = mech.DetectorCPU() - r.loopDet0
	r.finishShutdowns()
	if werr := mech.WakerErr(); werr != nil {
		r.log.Warn().Err(werr).Msg("the waker ended early: every long slice after it passed through Go's scheduler as a yield, not a park")
	}

	// Final CPU of every live client, before the mechanism ends them.
	for i, c := range r.clients {
		if c.exit == nil && c.proc != nil && !r.pol.Stats(i).ClockLost {
			c.final = c.proc.CPU()
			c.unsettled = mech.Unsettled(c.proc)
			if c.leak(c.final, c.unsettled) > 0 {
				r.logThreads(c)
			}
		}
	}
	// End the clients and leave the simulation CPU before any file is
	// written: an fsync from this thread at ℓ0 on the simulation CPU waits
	// for writeback that needs that CPU's kernel workers, which clients
	// still runnable at ℓ3 starve (64 clients at start-up held a run's end
	// for minutes).
	if cerr := mech.Close(); cerr != nil {
		r.log.Warn().Err(cerr).Msg("end the clients")
	}
	close(stopWatch)
	wg.Wait()
	if r.rc.Status != nil {
		fmt.Fprintln(r.rc.Status)
	}
	yields, yieldNs, parks, parkNs := r.mech.Yields()
	var posts int64
	for _, c := range r.clients {
		posts += c.posted
	}
	r.log.Info().Int64("coordinator_thread_ns", r.coordNs-r.detNs).Int64("detector_ns", r.detNs).Int64("threads_ns", r.threadsNs).
		Int64("dynamics_ns", r.dynNs).Int64("yields", yields).Int64("yield_ns", yieldNs).
		Int64("parks", parks).Int64("park_ns", parkNs).Int64("timer_early_fires", r.mech.EarlyFires()).Int64("posts", posts).
		Int64("master_knocks", r.masterKnocks).Int64("master_waits", r.masterWaits).Int64("master_wait_ns", r.masterWaitNs).
		Int64("settles", r.settles).Int64("settle_ns", r.settleNs).Int64("settle_timeouts", r.settleTimeouts).
		Int64("hold_scans", r.holdScans).Int64("hold_scan_ns", r.holdScanNs).
		Int64("stops_blocked", r.stops[coordinator.Blocked]).Int64("stops_preempted", r.stops[coordinator.Preempted]).
		Int64("stops_request", r.stops[coordinator.Request]).Int64("stops_interrupted", r.stops[coordinator.Interrupted]).Msg("overhead")
	for _, c := range r.clients {
		if c.proc == nil {
			continue
		}
		if tid, turns := c.proc.Sysmon(); tid != 0 {
			r.log.Info().Str("client", c.proc.Name).Int("tid", tid).Int64("turns", turns).
				Msg("the Go runtime's sysmon thread of this client waited at ℓ3 except in its turns")
		}
	}
	if r.settleTimeouts > 0 {
		r.log.Warn().Int64("settle_timeouts", r.settleTimeouts).Msg("the DDS bridge's receive threads did not hand on what was in their sockets within 1 s of a client's block: commands sent then were stamped late")
	}
	for _, e := range r.overrunEv[:r.noverrun] {
		r.log.Warn().Float64("wall_s", float64(e[0])/1e9).Int64("uncharged_ns", e[1]).Msg("a slice ended far too late (the host held a CPU): the client ran past it; the excess is not charged")
	}
	for _, e := range r.lateEv[:r.nlate] {
		r.log.Warn().Str("client", r.clients[e.client].conf.Name).Int64("due_ns", e.due).Int64("late_ns", e.begin-e.due).
			Int64("world_ns", e.world).Int64("steps", e.steps).Float64("wall_s", float64(e.wall)/1e9).Msg("late activation")
	}
	for k := max(r.ringLogN-len(r.ringLog), 0); k < r.ringLogN; k++ {
		e := r.ringLog[k%len(r.ringLog)]
		r.log.Warn().Str("client", r.clients[e.client].conf.Name).Int64("budget_ns", e.budget).Int64("arm_ns", e.arm).
			Int64("cpu_ns", e.cpu).Int64("away_ns", e.away).Int64("late_ns", e.late).Int64("run_wall_ns", e.wall).Bool("timer", e.timer).
			Bool("blocked", e.blocked).Str("stop", e.stop.String()).Str("then", e.state).Int64("progress_ns", e.progress).
			Int64("world_ns", e.world).Int64("steps", e.steps).Float64("wall_s", float64(e.at)/1e9).Msg("dispatch before the first late activation")
	}
	for _, e := range r.overEv[:r.nover] {
		r.log.Warn().Str("client", r.clients[e.client].conf.Name).Int64("budget_ns", e.budget).Int64("arm_ns", e.arm).
			Int64("cpu_ns", e.cpu).Int64("late_ns", e.late).Int64("run_wall_ns", e.wall).Bool("timer", e.timer).
			Bool("blocked", e.blocked).Float64("wall_s", float64(e.at)/1e9).Msg("overran its slice")
	}
	sum = r.summary()
	if rerr := r.recFinish(sum); rerr != nil { // recording
		r.log.Warn().Err(rerr).Msg("record: the recording may be incomplete")
	}
	// Written through an unnamed file: a SIGKILL while it is written
	// leaves no temporary file in the output folder (a named one stayed).
	js, werr := sum.JSON()
	if werr == nil {
		werr = linux.WriteFileAtomic(filepath.Join(r.rc.OutDir, "summary.json"), js, 0o644)
	}
	if werr != nil && loopErr == nil {
		loopErr = werr
	}
	return sum, loopErr
}

// shutdownGrace is how long a node that was shutting down when the run
// ended (it stopped listening to its clock) may take, ungated, to exit by
// itself, so that its own exit code is reported: rospy takes about 0.7 s
// of wall time here (it joins its threads with wall-clock timeouts).
const shutdownGrace = 3 * time.Second

// finishShutdowns lets every node that stopped listening to its clock and
// has not exited yet finish its shutdown outside virtual time (ungated, at
// the normal scheduler's level) for up to shutdownGrace, and reports the
// exits it sees. The others are ended with the run (Mechanism.Close).
func (r *runner) finishShutdowns() {
	var waiting int
	for i, c := range r.clients {
		if c.exit == nil && c.proc != nil && r.pol.Stats(i).ClockLost {
			if waiting == 0 {
				if err := r.mech.ParkDetector(true); err != nil {
					r.log.Warn().Err(err).Msg("park the detector for the shutdowns")
					return
				}
			}
			c.final, c.shutdown = c.proc.CPU(), true
			if err := r.mech.Release(c.proc); err != nil {
				r.log.Warn().Err(err).Str("client", c.conf.Name).Msg("release a node that is shutting down")
				continue
			}
			waiting++
		}
	}
	deadline := r.clk.Monotonic() + shutdownGrace.Nanoseconds()
	for waiting > 0 {
		now := r.clk.Monotonic()
		if now >= deadline {
			r.log.Warn().Int("clients", waiting).Msg("nodes still shutting down after the grace: they are ended with the run")
			return
		}
		w, err := r.mech.Poll(min(deadline-now, int64(50*time.Millisecond)))
		if err != nil {
			r.log.Warn().Err(err).Msg("wait for the shutdowns")
			return
		}
		if w.Exited != nil {
			r.exited(w.Exited)
			waiting--
		}
	}
}

// coordinatorNs is the coordinator's cost since the loop began: the
// dispatch thread's CPU less the world's steps, plus the detector's
// spinning.
func (r *runner) coordinatorNs() int64 {
	return r.coordinatorWith(r.mech.DetectorCPU() - r.loopDet0)
}

// coordinatorWith is the coordination's CPU since the loop began, given the
// detector's part: the dispatch thread's CPU less the dynamics', plus det.
func (r *runner) coordinatorWith(det int64) int64 {
	thread, _ := r.clk.Ns(r.threadClk)
	return thread - r.loopCPU0 - r.dynSelf + det
}

// detectorEvery is how many calls of coordinatorSoFar read the detector's
// CPU once: reading it (its /proc schedstat) cost the dispatch thread
// about 5 µs, 100 times a virtual second for the status series (/tcs/run_status, /tcs/status).
const detectorEvery = 10

// coordinatorSoFar is all of tcs's CPU since the loop began, for
// progress reports (/tcs/run_status, /tcs/status): coordinatorNs and the
// other threads' (threadsSoFar), with the detector's and
// the other threads' parts read every detectorEvery calls: it lags by up
// to that many reports.
func (r *runner) coordinatorSoFar() int64 {
	if r.detCalls%detectorEvery == 0 {
		r.detSoFar = r.mech.DetectorCPU() - r.loopDet0
		r.thrSoFar = r.threadsSoFar()
	}
	r.detCalls++
	return r.coordinatorWith(r.detSoFar) + r.thrSoFar
}

// threadsSoFar is the CPU tcs's threads other than the dispatch thread and
// the block detector's (both counted on the simulation CPU) used since the
// loop began: the waker, the ROS bridges' receive threads and the embedded
// master, the recorder, the Go runtime, a DDS library's threads, on any
// CPU. Coordinating costs them too (DESIGN §6: every cost counted).
func (r *runner) threadsSoFar() int64 {
	proc, err := r.clk.Ns(r.procClk)
	if err != nil {
		return 0
	}
	thread, _ := r.clk.Ns(r.threadClk)
	det := r.mech.DetectorCPU() - r.loopDet0
	return max(proc-r.loopProc0-(thread-r.loopCPU0)-det, 0)
}

// leak is the CPU client c used while it was not dispatched, given its
// process CPU clock now and the CPU it used raised since its last wake
// (Mechanism.Unsettled): 0 before its first dispatch.
func (c *runClient) leak(cpu, unsettled int64) int64 {
	if !c.based || cpu <= 0 {
		return 0
	}
	return max(cpu-c.base-c.ran-c.uncharged-unsettled, 0)
}

// relayMsg is a message between clients on its way (a policy slot).
type relayMsg struct {
	relay int
	frame []byte // TCPROS frame: length prefix and body
}

// logThreads logs every thread of c with its CPU, policy and affinity: a
// leak (CPU used while not dispatched) comes from a thread that escaped the
// levels (not SCHED_FIFO, or off the simulation CPU) or from CPU the kernel
// charged to a thread while it was not running.
func (r *runner) logThreads(c *runClient) {
	for _, t := range r.mech.Threads(c.proc) {
		r.log.Warn().Str("client", c.conf.Name).Int("tid", t.Tid).Str("comm", t.Comm).Int("policy", t.Policy).
			Int("prio", t.Prio).Ints("cpus", t.CPUs).Int64("cpu_ns", t.RuntimeNs).Msg("thread of a client whose CPU does not add up")
	}
}

// settler is a Bridge whose received messages reach its fd through
// threads of its own (DDS): Settle waits until they have handed on what
// is already in its sockets and reports whether they did (ok false: it
// gave up waiting) and whether a message waits at the fd (pending).
type settler interface{ Settle() (ok, pending bool) }

// masterWaiter is the ROS 1 bridge with its embedded master: MasterBusy
// reports whether the master has a call to answer (look: also a
// connection not accepted yet, a system call); MasterFd is the master's
// listening socket (-1: none), waited on for arriving connections.
type masterWaiter interface {
	MasterBusy(look bool) bool
	MasterFd() int
}

// hangupWatcher is a bridge whose gated clock connections report their
// subscribers' hang-ups as events instead of a check before each delivery:
// HangupFd is readable when one closed, and Hangups drops it.
type hangupWatcher interface {
	HangupFd() int
	Hangups()
}

// threadCPUClock is CLOCK_THREAD_CPUTIME_ID.
const threadCPUClock = 3

func (r *runner) spawnAll() error {
	if err := r.openAttach(); err != nil {
		return err
	}
	for i, c := range r.clients {
		if c.conf.Attach {
			continue // started by its launcher through tcs attach
		}
		env := make([]string, 0, len(c.conf.Env)+2)
		for k, v := range c.conf.Env {
			env = append(env, k+"="+v)
		}
		spec := SpawnSpec{Name: c.conf.Name, Argv: c.conf.Cmd, Dir: c.conf.Dir, LogPath: r.logPath(c)}
		if c.ros {
			spec.Argv = append(append([]string(nil), c.conf.Cmd...), r.bridge.Args(i)...)
			env = append(env, r.bridge.Env(i)...)
			if _, set := c.conf.Env["ROS_HOME"]; !set {
				// rospy and roscpp write their own logs there.
				env = append(env, "ROS_HOME="+filepath.Join(r.rc.OutDir, "logs", "ros"))
			}
		}
		var childFiles []*os.File
		if c.conf.API == config.APINative {
			ep, files, err := native.NewEndpoint()
			if err != nil {
				return fmt.Errorf("client %q: %w", c.conf.Name, err)
			}
			c.ep = ep
			childFiles = files
			spec.Files = files
			env = append(env, native.Env(3))
		}
		spec.Env = env
		p, err := r.mech.Spawn(spec)
		for _, f := range childFiles {
			_ = f.Close()
		}
		if err != nil {
			return fmt.Errorf("start client %q (%s): %w", c.conf.Name, strings.Join(c.conf.Cmd, " "), err)
		}
		c.proc = p
		p.Requeue = c.rosBE
		// A native client's threads besides the one that computes are
		// its language runtime's (Mechanism.look).
		p.Dormancy = c.ep != nil && r.sc.Mode != config.ModeFree
		// A native client waits for replies to its requests: a probe
		// must not take its runnable sysmon for it waking (sysmon.go).
		p.SysmonTurns = c.ros
		if c.ep != nil {
			if err := r.mech.AddFd(c.ep.RequestFd(), uint64(i)); err != nil {
				return fmt.Errorf("client %q: %w", c.conf.Name, err)
			}
		}
		r.log.Info().Str("client", c.conf.Name).Int("pid", p.Pid).Str("log", p.LogPath).Msg("started")
	}
	return nil
}

// notice logs msg as a warning and prints it on the status stream.
func (r *runner) notice(msg string) {
	r.log.Warn().Msg(msg)
	w := r.rc.Notices
	if w == nil {
		w = r.rc.Status
	}
	if w != nil {
		fmt.Fprintf(w, "tcs: %s\n", msg)
	}
}

// clientUser says whom the clients run as (RunConf.User, the scenario's
// user:, else the invoker), logs it, and gives that user the folder where
// ROS nodes write their own logs.
func (r *runner) clientUser() (ClientUser, error) {
	named, field := r.rc.User, "--user"
	if named == "" {
		named, field = r.sc.User, r.sc.File+": user"
	}
	inv, err := linux.Invoker()
	if err != nil {
		return ClientUser{}, fmt.Errorf("who invoked tcs: %w", err)
	}
	u, note, err := ResolveClientUser(named, inv, SystemUsers)
	if err != nil {
		return ClientUser{}, fmt.Errorf("%s: %w", field, err)
	}
	r.log.Info().Int("uid", u.Uid).Int("gid", u.Gid).Str("user", u.Name).Bool("privileged", u.Privileged).Msg("clients run as " + u.String())
	if note != "" {
		r.notice(note)
	}
	if u.Uid != os.Geteuid() {
		dir := filepath.Join(r.rc.OutDir, "logs", "ros")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return ClientUser{}, fmt.Errorf("ROS log folder: %w", err)
		}
		if err := os.Chown(dir, u.Uid, u.Gid); err != nil {
			return ClientUser{}, fmt.Errorf("ROS log folder %s for %s: %w", dir, u, err)
		}
	}
	return u, nil
}

func (r *runner) logPath(c *runClient) string {
	if c.conf.Attach {
		return "(attached: its launcher's output)"
	}
	if c.conf.Log == "" {
		return filepath.Join(r.rc.OutDir, "logs", c.conf.Name+".log")
	}
	if filepath.IsAbs(c.conf.Log) {
		return c.conf.Log
	}
	return filepath.Join(r.rc.OutDir, c.conf.Log)
}

// freeSetup lets every client run ungated: SCHED_OTHER on the simulation
// CPU, detector parked.
func (r *runner) freeSetup() error {
	if err := r.mech.ParkDetector(true); err != nil {
		return err
	}
	for _, c := range r.clients {
		c.base, c.based = c.proc.CPU(), true
		c.last = c.base
		if err := r.mech.Release(c.proc); err != nil {
			return err
		}
	}
	return nil
}

// loop is the dispatch loop. It must not allocate.
func (r *runner) loop() error {
	defer r.pauseEnd()
	for {
		r.pauseEnd()
		now := r.clk.Monotonic()
		if now > r.deadline && !r.ctl.paused.Load() {
			r.ended = report.EndWallLimit
			return nil
		}
		if r.stall.fired.Load() {
			r.ended = report.EndStalled + ": " + *r.stall.diag.Load()
			return nil
		}
		a := r.pol.Next(now)
		switch a.Kind {
		case coordinator.KindDispatch:
			if err := r.dispatch(a); err != nil {
				return err
			}
		case coordinator.KindStep:
			r.step(a)
		case coordinator.KindHold:
			if err := r.hold(a.Until); err != nil {
				return err
			}
		case coordinator.KindPause:
			if err := r.pause(a); err != nil {
				return err
			}
		case coordinator.KindDeliver:
			r.deliverMsg(a)
		case coordinator.KindApply:
			r.apply(a)
		case coordinator.KindRelease:
			r.release(a)
		case coordinator.KindProbe:
			r.probe()
		case coordinator.KindWait:
			if err := r.wait(a.Until - now); err != nil {
				return err
			}
		case coordinator.KindFinish:
			switch a.End {
			case coordinator.EndCompleted:
				r.ended = report.EndCompleted
			default:
				r.endClient = a.Client
			}
			return nil
		}
		if r.ended != "" {
			return nil
		}
	}
}

func (r *runner) dispatch(a coordinator.Action) error {
	for {
		resume, err := r.dispatchOnce(a)
		if err != nil || !resume {
			return err
		}
		// Interrupted only by messages from the bridge, now stamped (the
		// client's command where its bytes arrived): the slice goes on if
		// the policy says so (Policy.Resume).
		next, ok := r.pol.Resume(a.Client)
		if !ok {
			return nil
		}
		a = next
	}
}

// dispatchOnce runs one dispatch of a (dispatch) and reports whether it
// ended interrupted only by a message from the bridge.
func (r *runner) dispatchOnce(a coordinator.Action) (bool, error) {
	c := r.clients[a.Client]
	if !c.based {
		c.base, c.based = c.proc.CPU(), true
	}
	if t, ok := r.pol.DispatchClock(a.Client); ok {
		r.bridge.ClientClock(a.Client, t)
	}
	r.answer(a.Client)
	w0 := r.clk.Monotonic()
	r.pubCur.Store(int64(a.Client))
	w, err := r.mech.Run(c.proc, a.Arm)
	if err != nil {
		return false, fmt.Errorf("dispatch %q: %w", c.conf.Name, err)
	}
	sent := false
	for {
		// A wait on the host (a read from disk) or a short wall-clock
		// sleep (roscpp polling for its clock): the client goes on by
		// itself; the world waits for it, as long as the policy says
		// (a native client's reads block once each).
		sent = r.settleBlock(c, w)
		budget := r.holdOver(a, c, w, sent)
		if budget <= 0 {
			break
		}
		h0 := r.clk.Monotonic()
		w2, err := r.mech.Hold(c.proc, budget)
		if err != nil {
			return false, fmt.Errorf("dispatch %q: %w", c.conf.Name, err)
		}
		c.holds++
		c.holdWall += r.clk.Monotonic() - h0
		w2.CPU += w.CPU
		w2.Extra += w.Extra
		w = w2
	}
	if c.ros && w.Blocked && r.master != nil {
		r.waitMaster()
	}
	return r.charge(a, w, w0, sent), nil
}

// settleBlock lets the DDS bridge's receive threads hand on, when ROS
// client c's Run or Hold w ended in a block, what c sent before it
// (bridge/ros2.Gate.Settle), so that a command sent just before blocking
// is drained and stamped with this dispatch's progress (charge). Also
// when some already arrived (tagBridge): the first datagrams of a burst
// wake the fd while the receive thread, on the other CPU, still works
// through the rest. It reports whether a message is waiting at the
// bridge's fd: the block then ended with something ready, as a ROS 1
// command that reached the gate during the dispatch.
func (r *runner) settleBlock(c *runClient, w Wake) (pending bool) {
	if !c.ros || !w.Blocked || r.settle == nil {
		return false
	}
	t0 := r.clk.Monotonic()
	ok, pending := r.settle.Settle()
	if !ok {
		r.settleTimeouts++
	}
	r.settles++
	r.settleNs += r.clk.Monotonic() - t0
	return pending
}

// holdOver applies the policy's hold-over rule (Policy.HoldOver) to the
// dispatch of a that ended in w (sent: a message from it waits at the
// bridge, settleBlock): it reads what c's threads wait on only when the
// policy asks, and returns the budget the dispatch goes on for (0: it
// does not).
func (r *runner) holdOver(a coordinator.Action, c *runClient, w Wake, sent bool) int64 {
	alone := w.Blocked && w.N == 0 && w.Exited == nil && !sent
	if !r.pol.HoldOver(a.Client, alone, w.CPU, a.Arm) {
		return 0
	}
	var ws coordinator.Waits
	poller, exact := 0, false
	if r.scanner != nil {
		t0 := r.clk.Monotonic()
		if w.Polled {
			// The poller has seen the clock: the rule holds only for a
			// wait on the host, which the threads' states tell without
			// reading what each sleeps in.
			if s, err := r.scanner.States(c.proc.Pid, c.proc.workTids()); err == nil {
				ws = coordinator.Waits{Host: s.Host+s.Running > 0, Polled: true}
			}
		} else if s, err := r.scanner.Scan(c.proc.Pid, c.proc.workTids()); err == nil {
			ws = coordinator.Waits{Timed: s.Timed > 0, Sleep: s.Shortest, Host: s.Host+s.Running > 0}
			poller, exact = s.ShortestTid, s.ShortestExact
		}
		r.holdScans++
		r.holdScanNs += r.clk.Monotonic() - t0
	}
	budget := r.pol.HoldBudget(a.Client, ws, w.CPU, a.Arm)
	if budget > 0 && ws.Timed && !ws.Host {
		// Held for a thread's short sleep. A thread sleeping until an
		// absolute instant polls for time (a condition variable's timed
		// wait: roscpp's timer thread) and its next raises wait for the
		// others (Proc.HoldBack) from now on, its node's first
		// activations included. A relative timeout is only a wait for
		// something a few ms away (a Go runtime thread in its poller,
		// waiting for a timer), made the HoldBack only once a second
		// hold finds the same thread: raised last at every dispatch, a
		// thread that is no poller would cost each dispatch a wait round
		// and each activation a look at the threads' states (Wake.Polled).
		if exact || poller == c.pollerSeen {
			c.proc.HoldBack = poller
		}
		c.pollerSeen = poller
	}
	return budget
}

// started tells the policy which clients started a process since it
// last looked (Policy.Started). The mechanism adopts a process when its
// fork is seen, during the dispatch of the client that forked it; the
// policy hears of it before that dispatch's stop (Ran), so a native client
// that waits next runs its child's work at once.
func (r *runner) started() {
	n := r.mech.Adopted()
	if n == r.adoptSeen {
		return
	}
	r.adoptSeen = n
	for i, c := range r.clients {
		if c.proc != nil && c.proc.TakeStarted() {
			r.pol.Started(i)
		}
	}
}

// waitMaster lets the embedded ROS master answer the calls it has before
// a ROS client's block is taken as final: a node blocked in a call to the
// master waits for tcs, not for time, and what the call says (rospy's
// shutdown unregisters its clock first, Gate.Unsubscribed) must be known
// before its next release. The master runs on the other CPUs; the loop
// naps meanwhile, up to masterWaitMax.
//
// Calls in progress are counted by the master; a connection not accepted
// yet is seen only on its listener, which costs a system call, so the loop
// looks there only when the wait set reported a connection arriving since
// the last look (tagMaster). A node's connect reaches the listener while
// it is dispatched, so the report comes before its block.
func (r *runner) waitMaster() {
	look := r.masterKnock || !r.masterWatched
	r.masterKnock = false
	if !r.master.MasterBusy(look) {
		return
	}
	t0 := r.clk.Monotonic()
	for r.master.MasterBusy(true) && r.clk.Monotonic()-t0 < masterWaitMax {
		linux.Nap(masterNap)
	}
	r.masterWaits++
	r.masterWaitNs += r.clk.Monotonic() - t0
}

// masterWaitMax bounds waitMaster; masterNap is its poll interval.
const (
	masterWaitMax = 200_000_000
	masterNap     = 20_000
)

// charge does what follows the Run w of dispatch a, begun at w0: it charges
// the CPU to the client and tells the policy, and serves what the wake
// brought (sent: a message waits at the DDS bridge, settleBlock).
func (r *runner) charge(a coordinator.Action, w Wake, w0 int64, sent bool) (onlyMsg bool) {
	c := r.clients[a.Client]
	// Keep the last dispatches (for the first late activation) and the
	// overrun ones, for the log.
	ev := overEvent{client: a.Client, budget: a.Budget, arm: a.Arm, cpu: w.CPU, away: w.Extra, late: w.Late,
		wall: r.clk.Monotonic() - w0, at: w0 - r.wallStart, timer: w.Timer, blocked: w.Blocked}
	ring := &r.ring[r.ringN%len(r.ring)]
	*ring = ev
	r.ringN++
	if w.CPU > a.Arm+200_000 && r.nover < len(r.overEv) {
		r.overEv[r.nover] = ev
		r.nover++
	}
	// What of the slice is charged and what is the host's is the policy's
	// decision (Policy.Split); the uncharged part is reported.
	sl := coordinator.Slice{CPU: w.CPU, Timer: w.Timer, Late: w.Late, Away: w.Extra}
	ch := r.pol.Split(a.Client, sl)
	if ch.Host > 0 {
		r.uncharge(c, ch.Host, w0)
		w.CPU, w.Extra, w.From = ch.CPU, w.Extra-ch.AwayHost, w.From+ch.AwayHost
	}
	if c.posts {
		// Before Ran: each post is stamped with the progress at its
		// place in the CPU this Run charges.
		r.takePosts(a.Client, &w)
	}
	c.ran += w.CPU
	c.away += w.Extra
	if w.Timer {
		r.late.Add(w.Late)
	}
	why := coordinator.Interrupted
	req, msg, other := false, false, false
	for k := 0; k < w.N; k++ {
		switch w.Tags[k] {
		case uint64(a.Client):
			req = true
		case tagBridge:
			msg = true
		default:
			other = true
			r.tag(w.Tags[k])
		}
	}
	// dispatch settled a DDS bridge at the block (settleBlock): what the
	// client sent before it waits at the bridge's fd now, and is drained
	// only if there is any.
	msg = msg || sent
	switch {
	case req:
		why = coordinator.Request
	case w.Blocked:
		why = coordinator.Blocked
	case w.Timer:
		why = coordinator.Preempted
	}
	sl.Stop = why
	ring.stop = why
	if req && c.proc != nil {
		c.proc.atRequest = true // cleared if it runs before it is lowered
	}
	r.started()
	r.pol.Ran(a.Client, sl)
	r.stops[why]++
	r.traceSlice(a, w.CPU, why) // trace (trace.go)
	r.pubDispatches.Store(r.pol.Dispatches())
	if req {
		r.serve(a.Client)
	}
	if msg {
		// Stamped with the progress just charged: the publisher's CPU
		// clock was read when the bytes arrived.
		r.drain()
	}
	if w.Exited != nil {
		r.exited(w.Exited)
	}
	// Where the policy left the client and the world.
	ring.state, ring.progress, ring.world, ring.steps = r.pol.State(a.Client), r.pol.Progress(a.Client), r.pol.Now(), r.pol.Steps()
	return why == coordinator.Interrupted && msg && !other && w.Exited == nil && r.ended == ""
}

// uncharge leaves ex ns that client c used in the dispatch begun at w0
// uncharged: the host's (host_overrun_s).
func (r *runner) uncharge(c *runClient, ex, w0 int64) {
	c.uncharged += ex
	r.hostOverrunNs += ex
	if r.noverrun < len(r.overrunEv) {
		r.overrunEv[r.noverrun] = [2]int64{w0 - r.wallStart, ex}
		r.noverrun++
	}
}

// apply applies the actuator command of Apply action a to the world.
func (r *runner) apply(a coordinator.Action) {
	r.world.SetCommand(a.Robot, r.cmd[a.Slot][:r.cmdN[a.Slot]])
	r.recApply(a) // recording
}

// tag handles a ready fd other than the dispatched client's requests.
func (r *runner) tag(t uint64) {
	switch {
	case t == tagStop:
		r.ended = report.EndInterrupted
		if r.stall.fired.Load() {
			r.ended = report.EndStalled + ": " + *r.stall.diag.Load()
		}
	case t == tagBridge:
		r.drain()
	case t == tagHangup:
		r.hangups.Hangups()
	case t == tagMaster:
		r.masterKnock = true
		r.masterKnocks++
	case t == tagControl:
		r.serveControl()
	case t < uint64(len(r.clients)):
		// A request from a client that is not dispatched: in free mode,
		// where every client runs, or from one left raised after it
		// blocked, which woke and ran while the dispatch goroutine waited
		// for something else (the policy takes its request as a wake; its
		// CPU is charged with its next Run).
		r.serve(int(t))
	}
}

// hold keeps every client where it is (off the CPU) until wall time until
// (the policy's KindHold), serving what arrives meanwhile.
func (r *runner) hold(until int64) error {
	for r.ended == "" {
		now := r.clk.Monotonic()
		if now >= until {
			return nil
		}
		if err := r.idle(until - now); err != nil {
			return fmt.Errorf("hold: %w", err)
		}
	}
	return nil
}

// idle waits up to timeout ns with every client off the CPU (a hold, a
// pause), serving what arrives: a stop, a request, a message, an exit.
func (r *runner) idle(timeout int64) error {
	w, err := r.mech.Poll(timeout)
	if err != nil {
		return err
	}
	for k := 0; k < w.N; k++ {
		r.tag(w.Tags[k])
	}
	if w.Exited != nil {
		r.exited(w.Exited)
	}
	return nil
}

func (r *runner) step(a coordinator.Action) {
	t0 := r.clk.Monotonic()
	var c0 int64
	if r.elsewhere {
		c0, _ = r.clk.Ns(r.threadClk)
	}
	h := a.To - r.world.Now()
	step := r.sc.Dynamics.Step.Nanoseconds()
	for h > 0 {
		s := min(h, step)
		r.world.Step(s)
		h -= s
	}
	if r.failer != nil {
		if err := r.failer.Err(); err != nil && r.ended == "" {
			// The physics no longer moves: what the clients do from now
			// on means nothing. The run ends with the world's error.
			r.ended = report.EndWorldFailed + ": " + err.Error()
			r.log.Error().Err(err).Float64("virtual_s", float64(a.To)/1e9).Msg("the world failed")
		}
	}
	if a.Boundary {
		for b := range r.obs {
			r.obsN[b] = r.world.Observe(b, r.obs[b][:])
		}
		r.obsT = a.To
	}
	d := r.clk.Monotonic() - t0
	r.dynNs += d
	if r.elsewhere {
		c1, _ := r.clk.Ns(r.threadClk)
		r.dynSelf += c1 - c0
	} else {
		r.dynSelf += d
	}
	if a.Boundary {
		r.recStep(a.To) // recording
		r.stepped(a.To)
	}
	if a.Boundary && r.bridge != nil {
		r.publish(a.To)
	}
	r.pubT.Store(a.To)
	r.pubDrift.Store(r.pol.Drift())
	r.pubMisses.Store(r.missesAll)
}

func (r *runner) release(a coordinator.Action) {
	c := r.clients[a.Client]
	if c.ros {
		if !r.bridge.ClientClock(a.Client, a.Now) {
			c.noClock++
			// Over ROS 1 the clock's TCP connection says for sure that the
			// node closed it (it is shutting down): it is no longer
			// periodic. A DDS write reports no such thing reliably (a
			// reader matched late), so over ROS 2 the release stands.
			if r.sc.ROS.Transport == config.TransportROS1 {
				if c.noClock == 1 {
					r.log.Warn().Str("client", c.conf.Name).Float64("virtual_s", float64(a.Now)/1e9).
						Msg("the node stopped listening to its clock: no longer scheduled as periodic (shutting down?)")
				}
				r.pol.ClockLost(a.Client)
			}
		}
		return
	}
	c.pending, c.pendingWait, c.pendingNow = true, a.Wait, a.Now
	if r.sc.Mode == config.ModeFree {
		// Released clients run on their own, without a dispatch.
		r.answer(a.Client)
	}
}

// answer sends client i the reply its release left pending. It is sent at
// the client's dispatch, not at its release: the policy may release a
// client before it steps the world up to the client's time (the client
// cannot run meanwhile), and the sample the reply delivers is then the one
// at that time instead of an older one the client would have to Read past
// (one dispatch more per activation).
func (r *runner) answer(i int) {
	c := r.clients[i]
	if !c.pending {
		return
	}
	c.pending = false
	// Every activation comes with the newest sample (see native.Client.Obs)
	// and the newest message on the first subscribed channel (Client.In).
	r.fillObs(c)
	if c.pendingWait == coordinator.WaitActivation && len(c.inbox) > 0 {
		n, stamp := r.recv(c, c.inbox[0].ch, c.pendingNow)
		if n >= native.StatusErrorBase {
			n = 0
		}
		shm := c.ep.Shm()
		shm.InLen, shm.InTime = n, stamp
	}
	op := c.idleOp // the client has not run since: still the op it idled with
	if c.pendingWait == coordinator.WaitSample {
		op = native.OpRead
	}
	r.reply(i, native.Reply{Op: op, Now: c.pendingNow})
}

// publish sends the world's sample at t (a step boundary) to the ROS
// side: every robot's sensor topic, then /clock.
func (r *runner) publish(t int64) {
	for b := range r.sc.Robots {
		if b < len(r.obs) {
			r.bridge.Sample(b, t, r.obs[b][:r.obsN[b]], r.sampleFn, r.deliverFn)
		}
	}
	r.bridge.Clock(t)
	for i := range r.clients {
		if r.pol.BoundaryClock(i, t) {
			r.bridge.ClientClock(i, t)
		}
	}
	if t >= r.diagNext && r.diagNext > 0 {
		r.diagnostics(t)
		r.diagNext = (t/r.diagEvery + 1) * r.diagEvery
	}
}

// sampleNow is the policy's sample rule (Policy.SampleNow) for the sample
// being published, at r.obsT: whether client i receives it now.
func (r *runner) sampleNow(i int) bool { return r.pol.SampleNow(i, r.obsT) }

func (r *runner) fillObs(c *runClient) {
	shm := c.ep.Shm()
	b := c.robot
	if b >= len(r.obs) {
		shm.ObsLen = 0
		return
	}
	n := r.obsN[b]
	copy(shm.Obs[:n], r.obs[b][:n])
	shm.ObsLen = uint32(n)
	shm.ObsTime = r.obsT
	shm.ObsNext = r.obsT + r.sc.Dynamics.Step.Nanoseconds()
}

func (r *runner) reply(i int, rep native.Reply) {
	c := r.clients[i]
	if c.ep == nil || c.gone {
		return
	}
	if err := c.ep.Reply(rep); err != nil {
		// The client stopped reading replies or is gone: it cannot be
		// served any more. Its exit, if any, arrives through its pidfd.
		// Its request pipe leaves the wait set: still readable (a client
		// that does not read its replies writes requests), it made every
		// dispatch of the client return at once, so the coordinator
		// never waited and the killed client never ran to die (a
		// livelock of 346,000 dispatches until the watchdog ended the
		// run: test/chaos deaf --what requests).
		c.gone = true
		r.log.Warn().Str("client", c.conf.Name).Err(err).Msg("reply failed; ending the client")
		_ = r.mech.RemoveFd(c.ep.RequestFd())
		_ = r.mech.Kill(c.proc)
	}
}

// serve handles one native request from client i.
func (r *runner) serve(i int) {
	c := r.clients[i]
	if c.ep == nil || c.gone {
		return
	}
	req, ok, err := c.ep.ReadRequest()
	if err != nil && !errors.Is(err, native.ErrBadOp) {
		if !native.ClientGone(err) {
			r.log.Warn().Str("client", c.conf.Name).Err(err).Msg("request pipe failed")
		}
		c.gone = true
		_ = r.mech.RemoveFd(c.ep.RequestFd())
		return
	}
	if !ok {
		return
	}
	now := r.pol.Progress(i)
	if req.Check() != native.StatusOK {
		// An unknown op (ErrBadOp) or arguments out of range.
		r.refuse(i, req, now)
		return
	}
	if !c.hello && req.Op != native.OpHello {
		r.reply(i, native.Reply{Op: req.Op, Status: native.StatusNotHello, Now: now})
		return
	}
	switch req.Op {
	case native.OpHello:
		if req.Arg != native.Version {
			r.reply(i, native.Reply{Op: req.Op, Status: native.StatusBadVersion, Now: now})
			return
		}
		c.hello = true
		c.ep.Shm().Period = c.conf.Period.Nanoseconds()
		if r.sc.Mode == config.ModeConsistent {
			// Only the stamp of a message is needed, not a decision at
			// the instant it is written (lockstep ends a best-effort
			// client's step there; free mode serves clients while
			// they run).
			c.ep.AllowPosts()
			c.posts = true
		}
		r.reply(i, native.Reply{Op: req.Op, Now: now})
	case native.OpRead:
		if r.pol.Read(i) {
			r.fillObs(c)
			r.reply(i, native.Reply{Op: req.Op, Now: now})
		}
	case native.OpWrite, native.OpWriteIdle:
		n := req.Arg
		if req.Op == native.OpWriteIdle {
			n = int64(c.ep.Shm().OutLen)
		}
		if n < 0 || n > native.MaxValues {
			r.refuse(i, req, now) // Shm.OutLen out of range
			return
		}
		shm := c.ep.Shm()
		if req.Ch == 0 {
			slot := r.pol.Actuate(i)
			copy(r.cmd[slot][:n], shm.Out[:n])
			r.cmdN[slot] = int(n)
			r.recCommand(slot, i) // recording
		} else {
			r.deliver(req.Ch, now, shm.Out[:n])
			r.recNative(req.Ch, now, shm.Out[:n]) // recording
			r.pol.Wrote(i)
		}
		if req.Op == native.OpWriteIdle {
			c.idleOp = req.Op
			r.pol.Idle(i, req.Arg)
			return
		}
		r.reply(i, native.Reply{Op: req.Op, Now: now})
	case native.OpIdle:
		c.idleOp = req.Op
		r.pol.Idle(i, req.Arg)
	case native.OpRecv:
		st, stamp := r.recv(c, req.Ch, now)
		r.reply(i, native.Reply{Op: req.Op, Status: st, Now: stamp})
	default:
		r.reply(i, native.Reply{Op: req.Op, Status: native.StatusBadRequest, Now: now})
	}
}

// refuse answers request req of client i with StatusBadRequest, as the
// protocol says, and the client goes on. A client writing garbage gets a
// refusal per record: the first is logged, the rest counted (its
// accounting line).
func (r *runner) refuse(i int, req native.Request, now int64) {
	c := r.clients[i]
	if c.badRequests++; c.badRequests == 1 {
		r.log.Warn().Str("client", c.conf.Name).Uint32("op", uint32(req.Op)).Uint32("channel", req.Ch).Int64("arg", req.Arg).
			Msg("bad request refused (the client's others are counted in its accounting line)")
	}
	r.reply(i, native.Reply{Op: req.Op, Status: native.StatusBadRequest, Now: now})
}

// takePosts delivers the messages client i posted (native.Client.Write
// without a request) during the Run that returned w, in order, each
// stamped with the client's progress at its CPU clock: from w.From, within
// the w.CPU about to be charged. A post the library would not write (channel
// 0, too many values, a ring moved on too far) is dropped and logged once.
func (r *runner) takePosts(i int, w *Wake) {
	c := r.clients[i]
	for {
		p, ok, err := c.ep.Post()
		if err != nil {
			r.badPost(c, err, 0, 0)
			return
		}
		if !ok {
			return
		}
		// The post is in memory the client shares: each field is read
		// once, so that what was checked is what is used.
		ch, n, cpu := p.Ch, p.N, p.CPU
		if ch == 0 || n > native.MaxValues {
			r.badPost(c, nil, ch, n)
			c.ep.Taken()
			continue
		}
		stamp := r.pol.ProgressAt(i, min(max(cpu-w.From, 0), w.CPU))
		vals := p.Vals[:n]
		r.deliver(ch, stamp, vals)
		r.recNative(ch, stamp, vals) // recording
		r.pol.Wrote(i)
		c.ep.Taken()
		c.posted++
	}
}

// badPost logs, once per client, a post that was dropped: the ring's
// error, or else its channel and count.
func (r *runner) badPost(c *runClient, err error, ch, n uint32) {
	if c.badPost {
		return
	}
	c.badPost = true
	e := r.log.Warn().Str("client", c.conf.Name)
	if err != nil {
		e = e.Err(err)
	} else {
		e = e.Uint32("channel", ch).Uint32("values", n)
	}
	e.Msg("bad post dropped (the client wrote its shared memory's post ring itself?)")
}

// deliver puts a message stamped stamp on channel ch into every
// subscriber's inbox; a subscriber sees it once its progress reaches stamp.
func (r *runner) deliver(ch uint32, stamp int64, vals []float64) {
	for _, c := range r.clients {
		for k := range c.inbox {
			in := &c.inbox[k]
			if in.ch != ch {
				continue
			}
			m := &in.ring[in.next]
			m.used, m.stamp, m.n = true, stamp, copy(m.vals[:], vals)
			in.next = (in.next + 1) % inboxDepth
		}
	}
}

// recv copies the newest message on ch whose stamp the client's progress
// has reached into its shared memory.
func (r *runner) recv(c *runClient, ch uint32, now int64) (status uint32, stamp int64) {
	for k := range c.inbox {
		in := &c.inbox[k]
		if in.ch != ch {
			continue
		}
		var best *message
		for j := range in.ring {
			m := &in.ring[j]
			if m.used && m.stamp <= now && (best == nil || m.stamp > best.stamp) {
				best = m
			}
		}
		if best == nil {
			return 0, 0
		}
		copy(c.ep.Shm().In[:best.n], best.vals[:best.n])
		return uint32(best.n), best.stamp
	}
	return native.StatusBadRequest, 0
}

// probe looks at the threads of every client the policy asks about
// (Policy.Probing: the blocked ones; while paused, the waiting ROS ones):
// one that is running or runnable woke on its own and is reported to the
// policy.
func (r *runner) probe() {
	for i, c := range r.clients {
		if !r.pol.Probing(i) || c.proc == nil {
			continue
		}
		if r.mech.Runnable(c.proc) {
			r.pol.Woke(i)
		}
	}
	r.pol.Probed()
}

// wait lets the clients run (free mode) until timeout ns have passed or
// something needs the coordinator.
func (r *runner) wait(timeout int64) error {
	w, err := r.mech.Poll(max(timeout, 1))
	if err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	for k := 0; k < w.N; k++ {
		r.tag(w.Tags[k])
	}
	if w.Exited != nil {
		r.exited(w.Exited)
	}
	for i, c := range r.clients {
		if c.exit != nil {
			continue
		}
		cpu := c.proc.CPU()
		r.pol.Usage(i, cpu-c.last)
		c.ran += cpu - c.last
		c.last = cpu
	}
	return nil
}

func (r *runner) exited(p *Proc) {
	for i, c := range r.clients {
		if c.proc != p || c.exit != nil {
			continue
		}
		if !c.shutdown {
			// (A node let finish its shutdown after the run used CPU
			// outside virtual time: its final CPU was read before.)
			c.final = p.CPU()
		}
		if r.scanner != nil {
			_ = r.scanner.Forget(p.Pid)
		}
		code, err := r.mech.Reap(p)
		if err != nil {
			r.log.Warn().Str("client", c.conf.Name).Err(err).Msg("reap")
		}
		c.exit = report.ExitCode(code)
		if c.ep != nil {
			_ = r.mech.RemoveFd(c.ep.RequestFd())
		}
		r.pol.Exited(i, code)
		st := r.pol.Stats(i)
		r.log.Warn().Str("client", c.conf.Name).Int("code", code).Float64("virtual_s", float64(st.ExitedAt)/1e9).
			Int64("activations", st.Activations).Str("log", p.LogPath).Msg("client exited")
		if r.rc.Status != nil {
			// Said at once on the terminal, not only in the closing table.
			fmt.Fprintf(r.rc.Status, "\ntcs: client %q exited with code %d at virtual %.3f s (log %s)\n",
				c.conf.Name, code, float64(st.ExitedAt)/1e9, p.LogPath)
		}
	}
}

// status prints the live status line until stop is closed.
func (r *runner) status(stop <-chan struct{}) {
	every := r.rc.StatusEvery
	tty := isTerminal(r.rc.Status)
	if every == 0 {
		every = 5 * time.Second
		if tty {
			every = 250 * time.Millisecond
		}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	buf := make([]byte, 0, 128)
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := linux.MonotonicNs()
		wall := float64(now-r.wallStart-r.pausedSoFar(now)) / 1e9
		t := r.pubT.Load()
		st := report.Status{Virtual: t, Goal: r.sc.Duration.Nanoseconds(), Drift: r.pubDrift.Load(),
			Misses: r.pubMisses.Load(), Dispatches: r.pubDispatches.Load(), Paused: r.ctl.paused.Load()}
		if wall > 0 {
			st.RTF = float64(t) / 1e9 / wall
		}
		buf = buf[:0]
		if tty {
			buf = append(buf, '\r')
		}
		buf = report.AppendStatus(buf, st)
		if !tty {
			buf = append(buf, '\n')
		}
		_, _ = r.rc.Status.Write(buf)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// summary builds the run's summary (DESIGN §6).
func (r *runner) summary() *report.Summary {
	sc := r.sc
	s := &report.Summary{
		Scenario:      sc.Name,
		Mode:          sc.Mode.String(),
		Ended:         r.ended,
		QuantumS:      report.Seconds(sc.Quantum.Nanoseconds()),
		VirtualS:      report.Seconds(r.pol.Now()),
		WallS:         report.Seconds(r.wallEnd - r.wallStart),
		DriftMaxS:     report.Seconds(r.drift.Max()),
		DriftP99S:     report.Seconds(r.drift.Quantile(0.99)),
		DriftFinalS:   report.Seconds(r.pol.Drift()),
		Dispatches:    r.pol.Dispatches(),
		DynamicsSteps: r.pol.Steps(),
	}
	s.PausedS = report.Seconds(r.ctl.pausedNs.Load())
	if played := s.WallS - s.PausedS; played > 0 {
		s.RTF = s.VirtualS / played
	}
	if r.late.Count() > 0 {
		s.LateTakebackP50S = report.Seconds(r.late.Quantile(0.5))
		s.LateTakebackP99S = report.Seconds(r.late.Quantile(0.99))
		s.LateTakebackMaxS = report.Seconds(r.late.Max())
	}
	var clientsNs, leak, activations int64
	for j, rb := range sc.Robots {
		names := make([]string, 0, len(rb.Clients))
		for _, c := range rb.Clients {
			names = append(names, c.Name)
		}
		s.Robots = append(s.Robots, report.RobotSummary{Name: sc.Robots[j].Name, Clients: names})
	}
	for i, c := range r.clients {
		st := r.pol.Stats(i)
		cs := report.ClientSummary{
			Name: c.conf.Name, Robot: sc.Robots[c.robot].Name, Class: c.conf.Class.String(),
			PeriodS: report.Seconds(c.conf.Period.Nanoseconds()), CPUS: report.Seconds(c.ran),
			ProgressS: report.Seconds(st.Progress), Activations: st.Activations,
			DeadlineMisses: st.Misses, ExitCode: c.exit, Log: r.logPath(c),
		}
		c.period.Fill(&cs)
		cs.Activations, cs.DeadlineMisses = st.Activations, st.Misses
		cs.DeadlineMissesHost = st.HostMisses
		cs.ActivationsBegunLate = st.LateBegins
		if st.LateBegins > 0 {
			r.log.Error().Str("client", c.conf.Name).Int64("activations_begun_late", st.LateBegins).
				Msg("activations began late although the client was idle at their instant: a fault of tcs (please report it with this log)")
		}
		if c.conf.Class == config.ClassPeriodic {
			cs.Periods, cs.ActivationsExtra = st.Periods, st.Extra
			cs.PeriodsLost = &report.PeriodsLost{BeforeStart: st.Lost.BeforeStart, AfterExit: st.Lost.AfterExit,
				Overrun: st.Lost.Overrun, Host: st.Lost.Host, Total: st.Lost.Total()}
		}
		if c.based {
			cs.CPUBeforeS = report.Seconds(c.base)
		}
		if st.Exited {
			at := report.Seconds(st.ExitedAt)
			cs.ExitedAtS = &at
		}
		cs.HostS = report.Seconds(st.HostNs)
		cs.PausedCPUS = report.Seconds(st.PausedNs)
		cs.Holds, cs.HoldWallS, cs.Deliveries = c.holds, report.Seconds(c.holdWall), st.Deliveries
		s.WallCostPollingS += cs.HoldWallS
		cs.RelayIn, cs.RelayLost = c.relayIn, c.relayLost
		s.Clients = append(s.Clients, cs)
		clientsNs += c.ran
		activations += st.Activations
		if l := c.leak(c.final, c.unsettled); l > 0 {
			leak += l
			cs.LeakS = report.Seconds(l)
		}
		s.Clients[len(s.Clients)-1] = cs
		r.log.Info().Str("client", c.conf.Name).Int64("cpu_base_ns", c.base).Int64("cpu_final_ns", c.final).
			Int64("cpu_dispatched_ns", c.ran).Int64("cpu_while_coordinator_away_ns", c.away).Int64("cpu_unsettled_ns", c.unsettled).Float64("leak_s", cs.LeakS).Int64("blocked_unseen", st.Blocks).Int64("bad_requests", c.badRequests).Msg("accounting")
	}
	if r.ended == "" {
		switch {
		case r.endClient >= 0:
			c := r.clients[r.endClient]
			code := 0
			if c.exit != nil {
				code = *c.exit
			}
			s.Ended = report.EndClientExited(c.conf.Name, code)
		default:
			s.Ended = "every client exited"
		}
	}
	for b := 0; b < r.world.Bodies(); b++ {
		obs := make([]float64, r.world.ObservationLen(b))
		n := r.world.Observe(b, obs)
		s.World = append(s.World, report.BodySummary{Body: b, Obs: obs[:n]})
	}
	s.LeakS = report.Seconds(leak)
	s.Relayed, s.RelayDropped = r.pol.Relayed()
	if now, err := linux.ReadSteal(r.mech.CPU()); err == nil {
		r.stealNs = now - r.stealSeen
	}
	s.HostStealS = report.Seconds(r.stealNs)
	s.HostOverrunS = report.Seconds(r.hostOverrunNs)
	s.SettleTimeouts = r.settleTimeouts
	s.Overhead = report.Overhead{
		CoordinatorS: report.Seconds(max(r.coordNs, 0) + r.threadsNs),
		ClientsS:     report.Seconds(clientsNs),
		DynamicsS:    report.Seconds(r.dynNs),
		SimS:         report.Seconds(max(r.coordNs, 0)),
		ThreadsS:     report.Seconds(r.threadsNs),
	}
	s.Overhead.SetFraction()
	if activations > 0 {
		s.CoordinatorPerActivationUS = s.Overhead.CoordinatorS * 1e6 / float64(activations)
	}
	return s
}
