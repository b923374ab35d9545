package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Why a run ended (Summary.Ended). A client's exit is described by
// EndClientExited and EndClientSignaled.
const (
	EndCompleted   = "completed"   // virtual time reached the scenario's duration
	EndInterrupted = "interrupted" // SIGINT or SIGTERM
	EndWallLimit   = "wall limit"  // the scenario's wall_limit passed
	EndStopped     = "stopped"     // a stop or quit request (simulation_interfaces, /tcs services)
	// EndStalled begins Ended when the watchdog ended a run whose virtual
	// time stood still for stall_timeout; its diagnosis follows.
	EndStalled = "stalled"
	// EndWorldFailed begins Ended when the world failed while it stepped
	// (a physics engine's state became unstable); its error follows.
	EndWorldFailed = "world failed"
	EndRunning     = "" // not ended yet
)

// EndClientExited is Summary.Ended when client name's exit with code ended
// the run: "client pd exited with code 3".
func EndClientExited(name string, code int) string {
	return "client " + name + " exited with code " + strconv.Itoa(code)
}

// EndClientSignaled is Summary.Ended when client name was killed by a
// signal: "client pd was killed by signal 9".
func EndClientSignaled(name string, signal int) string {
	return "client " + name + " was killed by signal " + strconv.Itoa(signal)
}

// Summary is summary.json: what a run did (DESIGN §6). Scripts and the
// benchmarks read these names; keep them. Times are seconds.
type Summary struct {
	// Scenario is the scenario's name.
	Scenario string `json:"scenario"`
	// Mode is consistent, lockstep or free.
	Mode string `json:"mode"`
	// Ended says why the run ended: EndCompleted, EndInterrupted,
	// EndWallLimit, EndClientExited(...); "" while running.
	Ended string `json:"ended"`
	// QuantumS is the quantum q.
	QuantumS float64 `json:"quantum_s"`
	// VirtualS is the virtual time reached (the world's T).
	VirtualS float64 `json:"virtual_s"`
	// WallS is the wall time the run took.
	WallS float64 `json:"wall_s"`
	// PausedS is the wall time the run spent paused on request
	// (simulation_interfaces, /tcs services, tcs run --paused).
	PausedS float64 `json:"paused_s,omitempty"`
	// RTF is the real-time factor VirtualS / (WallS - PausedS).
	RTF float64 `json:"rtf"`
	// DriftMaxS and DriftP99S are the max and p99 of the temporal drift
	// Δ(t) over dispatch decisions; DriftFinalS is Δ at the end.
	DriftMaxS   float64 `json:"drift_max_s"`
	DriftP99S   float64 `json:"drift_p99_s"`
	DriftFinalS float64 `json:"drift_final_s"`
	// LeakS is the CPU time clients used while not dispatched (must be 0).
	LeakS float64 `json:"leak_s"`
	// HostStealS is the time the hypervisor took from the simulation CPU
	// during the run (/proc/stat's steal, 10 ms units).
	HostStealS float64 `json:"host_steal_s"`
	// HostOverrunS is CPU clients used past their slices when the
	// coordinator took the CPU back over 200 µs late (the host delayed the
	// timer or stole the CPU): reported, not charged to virtual time.
	HostOverrunS float64 `json:"host_overrun_s"`
	// SettleTimeouts counts the blocks of a ROS 2 client after which the
	// bridge's DDS receive threads (on the other CPUs) did not hand on
	// what was in their sockets within 1 s; a command the client sent just
	// before is then stamped late. It must be 0.
	SettleTimeouts int64 `json:"settle_timeouts,omitempty"`
	// Dispatches is the number of times a client was given the CPU.
	Dispatches int64 `json:"dispatches"`
	// DynamicsSteps is the number of (full or partial) dynamics steps.
	DynamicsSteps int64 `json:"dynamics_steps"`
	// Overhead splits the CPU time of the simulation CPU.
	Overhead Overhead `json:"overhead"`
	// LateTakeback* are the p50, p99 and max of how late the coordinator
	// took the CPU back after the quantum timer expired (for a parked
	// slice too: its timer is armed when the waker hands the dispatch
	// goroutine back, before the slice's end).
	LateTakebackP50S float64 `json:"late_takeback_p50_s"`
	LateTakebackP99S float64 `json:"late_takeback_p99_s"`
	LateTakebackMaxS float64 `json:"late_takeback_max_s"`
	// CoordinatorPerActivationUS is all of tcs's CPU
	// (Overhead.CoordinatorS) per client activation, in microseconds.
	CoordinatorPerActivationUS float64 `json:"coordinator_per_activation_us"`
	// WallCostPollingS is the wall time spent holding the world for
	// unmodified clients in short wall-clock sleeps (DESIGN §2) and for
	// clients waiting on the host (disk I/O): the sum of the clients'
	// HoldWallS.
	WallCostPollingS float64 `json:"wall_cost_polling_s"`
	// Relayed counts the messages between clients tcs carried (ros.relay);
	// RelayDropped those it dropped because 64 were already on their way.
	Relayed      int64 `json:"relayed,omitempty"`
	RelayDropped int64 `json:"relay_dropped,omitempty"`
	// Robots lists the robots in scenario order with their clients' names.
	Robots []RobotSummary `json:"robots"`
	// Clients in scenario order.
	Clients []ClientSummary `json:"clients"`
	// World is the world's final state: one observation per body.
	World []BodySummary `json:"world,omitempty"`
	// Recording is the run's MCAP recording (absent with --no-record).
	Recording *Recording `json:"recording,omitempty"`
}

// BodySummary is a body's final observation (e.g. [θ, θ̇] for a pendulum).
type BodySummary struct {
	Body int       `json:"body"`
	Obs  []float64 `json:"obs"`
}

// Overhead is where the run's CPU went: tcs's, the clients', the world's.
type Overhead struct {
	// CoordinatorS is all of tcs's CPU, on every CPU: SimS + ThreadsS (0
	// for the parts a summary rebuilt from a recording lacks).
	CoordinatorS float64 `json:"coordinator_s"`
	ClientsS     float64 `json:"clients_s"`
	DynamicsS    float64 `json:"dynamics_s"`
	// Fraction is CoordinatorS / (CoordinatorS + ClientsS + DynamicsS)
	// (DESIGN §6); SimFraction is SimS's share of the simulation CPU's
	// work (SimS + ClientsS + DynamicsS). See SetFraction.
	Fraction    float64 `json:"fraction"`
	SimFraction float64 `json:"sim_fraction"`
	// SimS is tcs's CPU on the simulation CPU: the dispatch thread (the
	// world's steps left out) and the block detector.
	SimS float64 `json:"sim_s"`
	// ThreadsS is the CPU of tcs's other threads, on any CPU: the
	// dispatch loop's waker, the ROS bridges' receive threads and the embedded master, the recorder,
	// the Go runtime, a DDS library's threads. It takes nothing from the
	// simulation CPU, but from the CPU the nodes' middleware and the host
	// need.
	ThreadsS float64 `json:"threads_s"`
}

// SetFraction computes Fraction and SimFraction from the times (0 when
// they are all 0).
func (o *Overhead) SetFraction() {
	o.Fraction, o.SimFraction = 0, 0
	if total := o.CoordinatorS + o.ClientsS + o.DynamicsS; total > 0 {
		o.Fraction = o.CoordinatorS / total
	}
	if total := o.SimS + o.ClientsS + o.DynamicsS; total > 0 {
		o.SimFraction = o.SimS / total
	}
}

// RobotSummary names a robot and its clients.
type RobotSummary struct {
	Name    string   `json:"name"`
	Clients []string `json:"clients"`
}

// ClientSummary is one client's line in summary.json.
// PeriodsLost counts a periodic client's periods in which no activation
// began, by cause.
type PeriodsLost struct {
	// BeforeStart: before its first activation (its start-up).
	BeforeStart int64 `json:"before_start"`
	// AfterExit: after it exited or stopped listening to its clock.
	AfterExit int64 `json:"after_exit"`
	// Overrun: while it was still in an earlier activation (its own doing).
	Overrun int64 `json:"overrun"`
	// Host: while its robot had lost CPU to the host.
	Host int64 `json:"host"`
	// Total is the sum of the above.
	Total int64 `json:"total"`
}

type ClientSummary struct {
	Name string `json:"name"`
	// Robot is the name of the client's robot.
	Robot string `json:"robot"`
	// Class is periodic or best-effort.
	Class string `json:"class"`
	// PeriodS is the declared period (0 for best-effort clients).
	PeriodS float64 `json:"period_s"`
	// CPUS is the CPU time the client used (unscaled).
	CPUS float64 `json:"cpu_s"`
	// ProgressS is the client's progress p_i.
	ProgressS float64 `json:"progress_s"`
	// Activations counts activations begun (periodic clients).
	Activations int64 `json:"activations"`
	// DeadlineMisses counts activations not finished by (k+1)·P.
	DeadlineMisses int64 `json:"deadline_misses"`
	// DeadlineMissesHost is how many of those followed a dispatch on the
	// robot that the host cut short (the timer's interrupt came over
	// 200 µs late: the host held the vCPU, and the guest charges that time
	// to the running client). Reported apart so a host hiccup is not read
	// as the client's fault; still counted in DeadlineMisses.
	DeadlineMissesHost int64 `json:"deadline_misses_host,omitempty"`
	// ActivationsBegunLate counts activations that began over 200 µs (the
	// late cap) after their instant although the client was idle at it,
	// no client of its robot at its priority or above computed meanwhile
	// and the host had not taken its robot's CPU. The time contract begins
	// such an activation at its instant: each is a fault of tcs, and a
	// correct run has none. Every other late activation, and every miss
	// that follows one, is the load of the client's own stack.
	ActivationsBegunLate int64 `json:"activations_begun_late,omitempty"`
	// Periods counts the activation instants k·P of the run (periodic
	// clients; a completed run's end instant included); each began an activation or is in PeriodsLost, so
	// Activations + PeriodsLost.Total = Periods (+ ActivationsExtra, the
	// activations beyond one per period of a client that woke twice).
	Periods          int64        `json:"periods,omitempty"`
	PeriodsLost      *PeriodsLost `json:"periods_lost,omitempty"`
	ActivationsExtra int64        `json:"activations_extra,omitempty"`
	// CPUBeforeS is the CPU the client used before virtual time began for
	// it (its start-up before its first dispatch, or before a ROS run's
	// start-up ended): reported, not charged.
	CPUBeforeS float64 `json:"cpu_before_s"`
	// ExitedAtS is the virtual time of its exit (its progress then).
	ExitedAtS *float64 `json:"exited_at_s,omitempty"`
	// HostS is CPU it used that was the host's (a slice the host made end
	// far too late): reported, not charged.
	HostS float64 `json:"host_s,omitempty"`
	// PausedCPUS is CPU it used while the world was paused, having woken on
	// its own (a wall-clock timer): counted in CPUS, not charged.
	PausedCPUS float64 `json:"paused_cpu_s,omitempty"`
	// PeriodError, PeriodJitterP99 and ActivationLateMaxS: see PeriodStats.
	PeriodError        float64 `json:"period_error"`
	PeriodJitterP99    float64 `json:"period_jitter_p99"`
	ActivationLateMaxS float64 `json:"activation_late_max_s"`
	// ExitCode is the client's exit code; null while it runs. A client
	// killed by a signal has 128 + the signal number, as in a shell.
	ExitCode *int `json:"exit_code"`
	// LeakS is CPU the client used while it was not dispatched (must be 0).
	LeakS float64 `json:"leak_s"`
	// Holds counts dispatches of the client held over a wait on the host
	// (disk I/O, a page fault) or, for a ROS client, a short wall-clock
	// sleep (roscpp's 1 ms polling); HoldWallS is the wall time the world
	// waited for them.
	Holds     int64   `json:"holds,omitempty"`
	HoldWallS float64 `json:"hold_wall_s,omitempty"`
	// Deliveries counts messages delivered to a ROS client.
	Deliveries int64 `json:"deliveries,omitempty"`
	// RelayIn counts relayed messages handed to it (ros.relay), included in
	// Deliveries; RelayLost those that no longer reached it.
	RelayIn   int64 `json:"relay_in,omitempty"`
	RelayLost int64 `json:"relay_lost,omitempty"`
	// Log is the path of the client's stdout and stderr.
	Log string `json:"log"`
}

// Seconds converts int64 nanoseconds to float64 seconds.
func Seconds(ns int64) float64 { return float64(ns) / 1e9 }

// ExitCode returns a pointer to code, for ClientSummary.ExitCode.
func ExitCode(code int) *int { return &code }

// JSON is the summary as indented JSON, with a final newline. Values JSON
// cannot hold (NaN, ±Inf: an rtf over 0 s of wall time) are written as 0.
func (s *Summary) JSON() ([]byte, error) {
	c := *s
	c.Clients = append([]ClientSummary(nil), s.Clients...)
	c.sanitize()
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return append(b, '\n'), nil
}

func finite(x *float64) {
	if math.IsNaN(*x) || math.IsInf(*x, 0) {
		*x = 0
	}
}

func (s *Summary) sanitize() {
	for _, x := range []*float64{&s.QuantumS, &s.VirtualS, &s.WallS, &s.RTF, &s.DriftMaxS, &s.DriftP99S,
		&s.DriftFinalS, &s.LeakS, &s.Overhead.CoordinatorS, &s.Overhead.ClientsS, &s.Overhead.DynamicsS,
		&s.Overhead.Fraction, &s.Overhead.SimFraction, &s.Overhead.SimS, &s.Overhead.ThreadsS, &s.LateTakebackP50S, &s.LateTakebackP99S, &s.LateTakebackMaxS,
		&s.CoordinatorPerActivationUS, &s.WallCostPollingS} {
		finite(x)
	}
	for i := range s.Clients {
		c := &s.Clients[i]
		for _, x := range []*float64{&c.PeriodS, &c.CPUS, &c.ProgressS, &c.PeriodError, &c.PeriodJitterP99, &c.ActivationLateMaxS} {
			finite(x)
		}
	}
}
