package coordinator

import (
	"errors"
	"fmt"
)

// Mode selects how computation is charged to virtual time (DESIGN §2).
type Mode uint8

const (
	// Consistent charges every client's CPU time to virtual time and keeps
	// the world and the clients within one quantum of each other.
	Consistent Mode = iota
	// Lockstep is the callback model: computation costs no virtual time and
	// the world waits for every client to go idle.
	Lockstep
	// Free lets the clients run ungated while the world steps at its own
	// speed, optionally held to a real-time factor (Gazebo + use_sim_time).
	Free
)

func (m Mode) String() string {
	switch m {
	case Consistent:
		return "consistent"
	case Lockstep:
		return "lockstep"
	case Free:
		return "free"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Class is a client's scheduling class.
type Class uint8

const (
	// Periodic clients have a declared period; their activations and
	// deadline misses are tracked.
	Periodic Class = iota
	// BestEffort clients run whenever nothing above them in their robot is
	// runnable.
	BestEffort
)

func (c Class) String() string {
	switch c {
	case Periodic:
		return "periodic"
	case BestEffort:
		return "best-effort"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// API says how a client talks to the coordinator.
type API uint8

const (
	// Native clients use the pipe and shared-memory protocol of package
	// coordinator/native: every wait is announced.
	Native API = iota
	// Plain clients give no notifications; the block detector tells when
	// they block and a probe tells when they wake on their own.
	Plain
	// ROS clients are unmodified ROS nodes on a private clock. The driver
	// delivers their messages (Delivered) and, at each activation of a
	// periodic one, its clock; the policy infers the rest: a periodic ROS
	// client is idle until its next activation, and an activation ends when
	// the client blocks again (the driver holds the dispatch over a short
	// wall-clock poll before it reports the block). Its first coordinated
	// activation is at P: activation 0 ran while the node started, on the
	// clock latched at 0.
	ROS
)

func (a API) String() string {
	switch a {
	case Native:
		return "native"
	case Plain:
		return "plain"
	case ROS:
		return "ros"
	}
	return fmt.Sprintf("API(%d)", uint8(a))
}

// Actuation says when an actuator command takes effect in the world.
type Actuation uint8

const (
	// Exact applies a command at the virtual instant it was published: the
	// world makes a partial step up to it.
	Exact Actuation = iota
	// Hold applies a command at the next step boundary.
	Hold
)

func (a Actuation) String() string {
	switch a {
	case Exact:
		return "exact"
	case Hold:
		return "hold"
	}
	return fmt.Sprintf("Actuation(%d)", uint8(a))
}

// ClientConf describes one client process to the policy.
type ClientConf struct {
	Name     string
	Robot    int     // index into the robots, in scenario order
	Priority int     // higher runs first inside the robot; unique per robot
	Class    Class   //
	Period   int64   // ns; required for Periodic, 0 for BestEffort
	CPUScale float64 // virtual ns charged per CPU ns; 0 means 1
	API      API
	// Observed: the coordinator sees what the client publishes (Wrote). In
	// lockstep a best-effort client that is observed holds the world until
	// it publishes (the callback model: a plan is one callback); one that is
	// not would hold it forever, and computes a quantum per world step.
	Observed bool
	// SamplesAtActivation: a periodic ROS client receives its robot's
	// sensor samples at its activations only (Policy.SampleNow).
	SamplesAtActivation bool
}

// Conf configures a Policy.
type Conf struct {
	Mode      Mode
	Quantum   int64 // ns: the longest CPU slice and the largest lead of a robot over the world
	Step      int64 // ns: the world's step
	Duration  int64 // ns of virtual time to simulate
	Robots    int   // number of robots; robot j controls body j of the world
	Clients   []ClientConf
	Actuation Actuation
	// Compensation arms the timer for the budget plus the overhead measured
	// on the client's previous preempted slice (paper 004 §3.8).
	Compensation bool
	// RTF is the free mode's real-time factor; 0 steps as fast as possible.
	RTF float64
	// MaxRTF caps the real-time factor of a consistent or lockstep run: the
	// world takes a step boundary t only once the wall clock (Next's wall)
	// is t / MaxRTF past the first decision (KindHold until then); 0 means
	// no cap.
	MaxRTF float64
	// ContinueOnExit keeps the run going when a client exits; by default the
	// run finishes.
	ContinueOnExit bool
	// RCLClocks: the ROS clients are rcl-based (ROS 2): a timer on ROS time
	// waits the ROS time left to its next call as a wall-clock timeout
	// (see Policy.DeliverClock).
	RCLClocks bool
	// LateCap is how late a slice may end, or how long a client may run on
	// while the coordinator is away, before the excess counts as the host's
	// (a hypervisor holding the vCPU): it is then not charged, and the
	// robot's next misses are the host's until an activation begins on time
	// again. 0 means DefaultLateCap.
	LateCap int64
}

// DefaultLateCap is Conf.LateCap's default: the timer's own lateness on a
// loaded VM stays well below it, a host stealing the vCPU goes far beyond.
const DefaultLateCap = 200_000

// ErrConf is wrapped by every error New returns for a bad Conf.
var ErrConf = errors.New("invalid coordinator configuration")

func (c *Conf) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConf, fmt.Sprintf(format, a...))
	}
	if c.Mode > Free {
		return bad("unknown mode %d", c.Mode)
	}
	if c.Quantum <= 0 {
		return bad("quantum must be > 0, got %d ns", c.Quantum)
	}
	if c.Step <= 0 {
		return bad("step must be > 0, got %d ns", c.Step)
	}
	if c.Duration <= 0 {
		return bad("duration must be > 0, got %d ns", c.Duration)
	}
	if c.Robots <= 0 {
		return bad("at least one robot is needed")
	}
	if len(c.Clients) == 0 {
		return bad("at least one client is needed")
	}
	if c.RTF < 0 {
		return bad("real-time factor must be ≥ 0, got %g", c.RTF)
	}
	prio := map[[2]int]string{}
	for i, cl := range c.Clients {
		if cl.Robot < 0 || cl.Robot >= c.Robots {
			return bad("client %d (%s): robot %d out of range [0,%d)", i, cl.Name, cl.Robot, c.Robots)
		}
		if cl.Class == Periodic && cl.Period <= 0 {
			return bad("client %d (%s): periodic client needs a period > 0", i, cl.Name)
		}
		if cl.CPUScale < 0 {
			return bad("client %d (%s): cpu_scale must be ≥ 0", i, cl.Name)
		}
		k := [2]int{cl.Robot, cl.Priority}
		if other, dup := prio[k]; dup {
			return bad("clients %s and %s of robot %d share priority %d", other, cl.Name, cl.Robot, cl.Priority)
		}
		prio[k] = cl.Name
	}
	return nil
}

// Kind is what an Action asks the driver to do.
type Kind uint8

// The kinds of Action.
const (
	KindNone Kind = iota
	// KindDispatch: run Client for at most Budget ns of CPU; arm the
	// preemption timer for Arm ns. Report with Ran.
	KindDispatch
	// KindStep: advance the world to virtual time To (a partial step when
	// To is not a multiple of the step). Boundary: To is a step boundary,
	// so sample the sensors.
	KindStep
	// KindApply: apply the actuator command kept in Slot to body Robot.
	KindApply
	// KindRelease: answer Client's wait (an activation when Wait is
	// WaitActivation, a sensor sample otherwise) with its progress Now.
	KindRelease
	// KindProbe: check every blocked plain client (see Policy.Blocked) and
	// call Woke for those that are runnable, then Probed.
	KindProbe
	// KindWait (free mode): let the clients run until wall time Until.
	KindWait
	// KindHold: keep every client where it is until wall time Until (a
	// run held to Conf.MaxRTF), then ask again.
	KindHold
	// KindDeliver: hand the message between clients kept in Slot (see
	// Policy.Relay), published at virtual time To, to Client, whose
	// progress is Now; report with Delivered if it got there.
	KindDeliver
	// KindFinish: the run is over; End says why.
	KindFinish
	// KindPause: the world has reached its limit (Policy.Pause, StepBy):
	// keep every client where it is until the limit moves (Play, StepBy),
	// or until wall time Until (when not 0: the next look at the waiting
	// clients, see Policy.Probing), then ask again.
	KindPause
)

func (k Kind) String() string {
	switch k {
	case KindNone:
		return "none"
	case KindDispatch:
		return "dispatch"
	case KindStep:
		return "step"
	case KindApply:
		return "apply"
	case KindRelease:
		return "release"
	case KindProbe:
		return "probe"
	case KindWait:
		return "wait"
	case KindHold:
		return "hold"
	case KindDeliver:
		return "deliver"
	case KindFinish:
		return "finish"
	case KindPause:
		return "pause"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// WaitKind is what a native client waited for.
type WaitKind uint8

// What a released client waited for.
const (
	WaitActivation WaitKind = iota + 1
	WaitSample
)

// End says why a run finished.
type End uint8

// Reasons a run ends.
const (
	EndCompleted End = iota + 1 // virtual time reached the duration
	EndExited                   // a client exited (Action.Client) and ContinueOnExit is off
	EndAllExited                // every client exited
)

func (e End) String() string {
	switch e {
	case EndCompleted:
		return "completed"
	case EndExited:
		return "client exited"
	case EndAllExited:
		return "every client exited"
	}
	return fmt.Sprintf("End(%d)", uint8(e))
}

// Action is one thing the driver must do. It is a plain value: the policy
// allocates nothing per decision.
type Action struct {
	Kind     Kind
	Client   int
	Robot    int
	Slot     int
	Budget   int64
	Arm      int64
	To       int64
	Boundary bool
	Now      int64
	Wait     WaitKind
	Until    int64
	End      End
	// Paused (KindDispatch): the world is paused and the client woke on
	// its own; the slice is not charged (Policy.Ran counts it apart).
	Paused bool
}

func (a Action) String() string {
	switch a.Kind {
	case KindDispatch:
		if a.Paused {
			return fmt.Sprintf("dispatch c%d budget=%d arm=%d paused", a.Client, a.Budget, a.Arm)
		}
		return fmt.Sprintf("dispatch c%d budget=%d arm=%d", a.Client, a.Budget, a.Arm)
	case KindStep:
		b := ""
		if a.Boundary {
			b = " boundary"
		}
		return fmt.Sprintf("step to=%d%s", a.To, b)
	case KindApply:
		return fmt.Sprintf("apply r%d slot=%d", a.Robot, a.Slot)
	case KindRelease:
		w := "activation"
		if a.Wait == WaitSample {
			w = "sample"
		}
		return fmt.Sprintf("release c%d %s now=%d", a.Client, w, a.Now)
	case KindProbe:
		return "probe"
	case KindWait:
		return fmt.Sprintf("wait until=%d", a.Until)
	case KindHold:
		return fmt.Sprintf("hold until=%d", a.Until)
	case KindDeliver:
		return fmt.Sprintf("deliver c%d slot=%d at=%d now=%d", a.Client, a.Slot, a.To, a.Now)
	case KindFinish:
		return fmt.Sprintf("finish %s", a.End)
	case KindPause:
		if a.Until > 0 {
			return fmt.Sprintf("pause at=%d until=%d", a.To, a.Until)
		}
		return fmt.Sprintf("pause at=%d", a.To)
	}
	return a.Kind.String()
}

// Stop says why a dispatched client stopped running.
type Stop uint8

// Why a dispatch ended.
const (
	// Preempted: the timer fired.
	Preempted Stop = iota + 1
	// Blocked: the block detector ran, so the client blocked.
	Blocked
	// Request: a native client sent a request; the driver follows with
	// Hello, Read, Idle, Actuate, Wrote or Recv handling.
	Request
	// Interrupted: the coordinator woke for another reason (a child exit,
	// a signal); the client is still runnable.
	Interrupted
)

var stopNames = [...]string{"", "preempted", "blocked", "request", "interrupted"}

// String names s, for logs; it does not allocate.
func (s Stop) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return "unknown"
}

// Slice is what the driver observed of one dispatch: the client's CPU from
// its process CPU clock, why it stopped, and how the coordinator got the
// CPU back. The policy decides from it what is charged (Policy.Ran).
type Slice struct {
	// CPU is the CPU ns the client used in the dispatch, Away included.
	CPU int64
	// Stop is why the dispatch ended.
	Stop Stop
	// Timer is set when the preemption timer fired (whatever Stop says: a
	// client may block just as the timer fires).
	Timer bool
	// Late is, when Timer is set, how much later than the armed instant the
	// coordinator took the CPU back.
	Late int64
	// Away is the part of CPU the client used before the dispatch began,
	// raised, while the coordinator was away after ending its previous slice.
	Away int64
}

// Charge is what Ran made of a Slice.
type Charge struct {
	// CPU is the CPU ns charged to the client.
	CPU int64
	// Host is the CPU ns left uncharged as the host's (see Conf.LateCap).
	Host int64
	// AwayHost is the part of Host taken off the front of the slice (what
	// ran while the coordinator was away beyond LateCap): what the client
	// did in it is stamped at the charged part's start.
	AwayHost int64
}

// Lost counts the periods of a periodic client in which no activation
// began, by cause. Activations + Lost.Total() = Periods, exactly.
type Lost struct {
	// BeforeStart: periods before its first activation (its start-up: a
	// ROS node's activation 0 runs before virtual time begins).
	BeforeStart int64
	// AfterExit: periods after it exited, or after it stopped listening to
	// its clock (shut down).
	AfterExit int64
	// Overrun: periods that passed while it was still inside an earlier
	// activation or chose to wake later: its own doing.
	Overrun int64
	// Host: periods that passed while its robot lost CPU to the host (see
	// Conf.LateCap).
	Host int64
}

// Total is the number of lost periods.
func (l Lost) Total() int64 { return l.BeforeStart + l.AfterExit + l.Overrun + l.Host }

// Recorder receives the statistics the policy produces as it decides. Its
// methods must not block; the driver's implementation must not allocate.
type Recorder interface {
	// Activation: client c began an activation at virtual time begin; it
	// was due at due.
	Activation(c int, begin, due int64)
	// Miss: client c's activation due at due was not finished by due+P.
	Miss(c int, due int64)
	// Drift: Δ at a decision.
	Drift(d int64)
}

// ClientStats is what the policy knows about one client.
type ClientStats struct {
	CPU         int64 // CPU ns used while dispatched (or measured, in free mode)
	Progress    int64 // virtual ns (charged)
	Real        int64 // real progress (CPU × configured cpu_scale + waits)
	Activations int64
	Misses      int64
	Blocks      int64 // times it blocked for a reason the policy could not see
	Deliveries  int64 // ROS: messages delivered to it (Delivered)
	Exited      bool
	ExitCode    int
	ExitedAt    int64 // virtual ns of its exit (its progress then), when Exited
	State       string

	// Periodic clients: the periods of the run so far (activation instants
	// k·P before the world's time; of a completed run, up to and including
	// its end), those lost and why, and activations
	// beyond one per period (a client that woke twice in one period).
	Periods    int64
	Lost       Lost
	Extra      int64
	HostMisses int64 // of Misses: while its robot had lost CPU to the host
	// LateBegins counts activations that began over LateCap after their
	// instant although the client was idle at it, no client of its robot
	// with precedence computed meanwhile and its robot had not lost CPU to
	// the host (not counted in free mode). The contract begins such an
	// activation at its instant: each is tcs's fault, and a correct run has
	// none. Every other late activation is its stack's own load.
	LateBegins int64
	HostNs     int64 // CPU ns it used that were the host's, not charged
	PausedNs   int64 // CPU ns it used while the world was paused, not charged
	ClockLost  bool  // it stopped listening to its clock (ClockLost)
}

// Waits is what the threads of a blocked client wait on, as the driver
// read it for the hold-over rule (Policy.HoldBudget).
type Waits struct {
	// Timed is true when a thread sleeps on the wall clock; Sleep is the
	// shortest remaining such sleep (ns).
	Timed bool
	Sleep int64
	// Host is true when a thread waits on the host, in an uninterruptible
	// sleep (a page fault, disk I/O) that ends by itself, or is runnable
	// again: the client has not finished.
	Host bool
	// Polled is true when the thread in the short wall-clock sleep has
	// run and slept again since the other threads last blocked: it has
	// looked at the client's clock as it is, so its next wake, with the
	// world held, would find nothing new.
	Polled bool
}
