package driver

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tcs-robotics/tcs/coordinator"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/report"
)

// Bridge is the ROS side of a run as the dispatch loop uses it. The
// implementation is bridge/ros1.Gate; cmd/tcs builds it. Clients are
// indexed as in the scenario (robots in order, their clients in order).
type Bridge interface {
	// Args and Env are what client i's command line and environment need
	// (a ROS client: its name, namespace, clock remap, master).
	Args(i int) []string
	Env(i int) []string
	// Fd is readable when an actuator message arrived: call Drain.
	Fd() int
	// Sample publishes robot j's sensor sample at virtual time t to the
	// subscribers that are not clients and to the clients for which now
	// is true (now may be asked for every client subscribed), and calls
	// delivered with each client whose socket it reached.
	Sample(j int, t int64, obs []float64, now func(client int) bool, delivered func(client int))
	// Clock publishes the world's time on /clock.
	Clock(t int64)
	// ClientClock puts t on client i's private clock, in its socket.
	ClientClock(i int, t int64) bool
	// Diagnostics publishes a diagnostic_msgs/DiagnosticArray frame.
	Diagnostics(frame []byte)
	// Drain reads the messages that arrived: cmd gets each actuator
	// command's robot, publishing client and value; msg each message
	// between clients with its relay, publishing client and body (valid
	// during the call).
	Drain(cmd func(robot, client int, cmd []float64), msg func(relay, client int, body []byte))
	// RelayReceivers is the set of clients (bit i: client i) that read
	// relay k; RelayTo writes a message of relay k to client i's socket.
	RelayReceivers(k int) uint64
	RelayTo(k, i int, frame []byte) bool
	// Waiting says, per client, what it still lacks before virtual time
	// may begin ("" when ready), and which other nodes subscribed to the
	// run's topics are not connected yet ("" when none).
	Waiting() (clients []string, others string, err error)
}

// tagBridge is the bridge's fd in the wait set.
const tagBridge = uint64(1) << 30

// startupQuiet is how long the clients must use little CPU, once
// connected, for start-up to be over; startupIdleShare is "little": a
// tenth of the CPU (a roscpp node polling every 1 ms for a clock that does
// not move uses a few percent; a node still starting uses all it gets).
const (
	startupQuiet     = 100 * time.Millisecond
	startupIdleShare = 10
	startupPoll      = 20 * time.Millisecond
	startupOthers    = 5 * time.Second
	defaultStartup   = 30 * time.Second
)

// restShareWarn is the share of the simulation CPU the ROS clients may use
// together at rest before start-up says so: virtual time then advances
// only in what they leave. (Each is quiet by startupIdleShare; 64 rclcpp
// nodes on one CPU are each, and fill it with DDS discovery.)
const restShareWarn = 0.5

// restLoad follows the share of the simulation CPU the periodic ROS
// clients used together over the last whole second of the start-up.
type restLoad struct {
	since time.Time
	used  int64   // the clients' CPU since since (ns)
	share float64 // over the last whole second; -1 before the first
}

// add takes the CPU (ns) the clients used since the last call, at now.
func (l *restLoad) add(now time.Time, used int64) {
	if l.since.IsZero() {
		l.since, l.share = now, -1
		return
	}
	l.used += used
	if d := now.Sub(l.since); d >= time.Second {
		l.share = float64(l.used) / float64(d)
		l.since, l.used = now, 0
	}
}

// errStartupStop is returned by startup when the run was interrupted.
var errStartupStop = errors.New("interrupted during start-up")

// startup lets the ROS clients start, ungated (SCHED_OTHER on the
// simulation CPU, detector parked), until each is connected to its clock
// and topics and all are quiet; then it puts every client under control
// (ℓ3) for virtual time to begin. Their start-up CPU is not charged.
func (r *runner) startup() error {
	timeout := time.Duration(r.sc.ROS.StartupTimeout)
	if timeout <= 0 {
		timeout = defaultStartup
	}
	if err := r.mech.ParkDetector(true); err != nil {
		return err
	}
	for _, c := range r.clients {
		if c.ros && c.proc != nil {
			if err := r.mech.Release(c.proc); err != nil {
				return err
			}
		}
	}
	t0 := time.Now()
	deadline := t0.Add(timeout)
	lastCPU := make([]int64, len(r.clients))
	busyNow := make([]bool, len(r.clients)) // used CPU in the last poll
	seen := make([]bool, len(r.clients))    // lastCPU is the client's
	quietSince := time.Time{}
	var missing []string
	var others string
	var othersSince time.Time
	othersWarned := false
	var load restLoad
	for {
		r.acceptAttach()
		if r.attachErr != nil {
			return fmt.Errorf("%s: %w", r.sc.File, r.attachErr)
		}
		w, err := r.mech.Poll(int64(startupPoll))
		if err != nil {
			return fmt.Errorf("start-up: %w", err)
		}
		for k := 0; k < w.N; k++ {
			switch w.Tags[k] {
			case tagStop:
				r.ended = report.EndInterrupted
				return errStartupStop
			case tagBridge:
				r.drain()
			case tagHangup:
				r.hangups.Hangups()
			case tagControl:
				// Served here too: left unread, its eventfd would end
				// every wait of the start-up at once.
				r.serveControl()
			}
		}
		if w.Exited != nil {
			r.exited(w.Exited)
			for _, c := range r.clients {
				if c.exit != nil {
					return fmt.Errorf("client %q exited with code %d during start-up, before virtual time began; see its log %s",
						c.conf.Name, *c.exit, c.proc.LogPath)
				}
			}
		}
		if missing, others, err = r.bridge.Waiting(); err != nil {
			return fmt.Errorf("start-up: %w", err)
		}
		ready := true
		busy := false
		var used int64 // the periodic ROS clients' CPU since the last poll
		for i, c := range r.clients {
			if !c.ros {
				continue
			}
			if c.proc == nil {
				missing[i] = "not attached yet: start it through tcs attach --name " + c.conf.Name +
					" -- CMD (roslaunch: launch-prefix=\"tcs attach --name " + c.conf.Name + " --\")"
				ready = false
				continue
			}
			if missing[i] != "" {
				ready = false
			}
			// A best-effort node (a planner) may compute from the start:
			// only the periodic ones must have settled into their waits.
			cpu := c.proc.CPU()
			busyNow[i] = cpu-lastCPU[i] > int64(startupPoll)/startupIdleShare && !c.rosBE
			busy = busy || busyNow[i]
			if seen[i] && !c.rosBE { // a planner may compute from the start
				used += cpu - lastCPU[i]
			}
			lastCPU[i], seen[i] = cpu, true
		}
		now := time.Now()
		load.add(now, used)
		if others != "" && ready {
			// The clients are connected; other subscribers (a recorder)
			// get a little longer, then the run goes on without them.
			if othersSince.IsZero() {
				othersSince = now
			}
			if now.Sub(othersSince) < startupOthers {
				ready = false
			} else if !othersWarned {
				othersWarned = true
				r.log.Warn().Str("nodes", others).Msg("start-up: not waiting longer for these subscribers; they may miss the first messages")
			}
		}
		switch {
		case !ready || busy:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = now
		case now.Sub(quietSince) >= startupQuiet:
			if load.share >= restShareWarn {
				r.log.Warn().Int("percent", int(100*load.share+0.5)).Msg("start-up: the ROS clients are quiet one by one, " +
					"but together they use this share of the simulation CPU at rest: virtual time will advance slowly")
			}
			return r.begin(now.Sub(t0))
		}
		if now.After(deadline) {
			var late []lateClient
			for i, c := range r.clients {
				switch {
				case !c.ros:
				case missing[i] != "":
					late = append(late, lateClient{c.conf.Name, missing[i] + logOf(c)})
				case busyNow[i]:
					late = append(late, lateClient{c.conf.Name, "connected but still using CPU" + logOf(c)})
				}
			}
			var b strings.Builder
			writeLate(&b, late)
			if others != "" {
				fmt.Fprintf(&b, "\n  other nodes: %s", others)
			}
			if load.share >= 0 {
				fmt.Fprintf(&b, "\n  together the ROS clients used %.0f %% of the simulation CPU over the last second", 100*load.share)
				if load.share >= restShareWarn {
					b.WriteString(" (if they are not still starting, more nodes than this CPU holds at rest)")
				}
			}
			return fmt.Errorf("%s: the ROS clients did not start within ros.startup_timeout (%v):%s", r.sc.File, timeout, b.String())
		}
	}
}

// lateClient is a ROS client that was not ready when start-up timed out,
// and why.
type lateClient struct{ name, why string }

// lateListed is how many not-ready clients a start-up time-out names one
// per line, with the reason and the log of each; the rest are named on one
// line: a large launch that does not fit the CPU leaves dozens, and a
// line each would bury the lines that say why.
const lateListed = 8

// writeLate writes the start-up time-out's lines for the clients in late.
func writeLate(b *strings.Builder, late []lateClient) {
	for k, c := range late {
		if k == lateListed {
			fmt.Fprintf(b, "\n  %d more clients not ready (logs in the same folder):", len(late)-k)
			for _, c := range late[k:] {
				b.WriteString(" " + c.name)
			}
			return
		}
		fmt.Fprintf(b, "\n  client %q: %s", c.name, c.why)
	}
}

// begin ends start-up: every ROS client goes under control, then the
// best-effort ones get their first clock (layout.Client.ClockAtBegin): what
// they compute from it on is charged.
func (r *runner) begin(took time.Duration) error {
	for _, c := range r.clients {
		if c.ros {
			if err := r.mech.Restrain(c.proc); err != nil {
				return err
			}
		}
	}
	for i, c := range r.clients {
		if c.rosBE {
			r.bridge.ClientClock(i, 0) // the policy's clockAt starts at 0
		}
	}
	if err := r.mech.ParkDetector(false); err != nil {
		return err
	}
	r.log.Info().Dur("took", took).Msg("ROS clients connected and quiet: virtual time begins")
	return nil
}

// logOf is " (log PATH)" for a started client, "" for one not attached.
func logOf(c *runClient) string {
	if c.proc == nil {
		return ""
	}
	return " (log " + c.proc.LogPath + ")"
}

// drain takes the messages that arrived.
func (r *runner) drain() { r.bridge.Drain(r.actuateFn, r.relayFn) }

// relay keeps a message client i published on relay k until each client
// reading it has reached its publish time (the policy's Deliver actions).
// A message published during start-up is handed over at once.
func (r *runner) relay(k, i int, body []byte) {
	to := r.bridge.RelayReceivers(k)
	if r.inStartup {
		r.recRelay(k, 0, body) // recording
		for j := range r.clients {
			if j < coordinator.MaxRelayClients && to&(1<<j) != 0 {
				r.bridge.RelayTo(k, j, r.frameOf(body))
			}
		}
		return
	}
	slot, sent, ok := r.pol.Relay(i, to)
	r.recRelay(k, sent, body) // recording
	if !ok {
		if to != 0 {
			r.log.Warn().Int("relay", k).Str("client", r.clients[i].conf.Name).
				Msg("relayed message dropped: 64 messages are already on their way (the readers lag far behind)")
		}
		return
	}
	m := &r.msgBuf[slot]
	m.relay = k
	m.frame = r.appendFrame(m.frame[:0], body)
}

// frameOf is body as a TCPROS frame (length prefix), in a reused buffer.
func (r *runner) frameOf(body []byte) []byte {
	r.frameBuf = r.appendFrame(r.frameBuf[:0], body)
	return r.frameBuf
}

func (r *runner) appendFrame(dst, body []byte) []byte {
	dst, off := msgs.BeginFrame(dst)
	return msgs.EndFrame(append(dst, body...), off)
}

// deliverMsg hands a message on its way to a client whose progress
// reached its publish time: a ROS client's private clock first shows that
// progress, then the message is in its socket and the client, if it
// waited, runs it as a callback.
func (r *runner) deliverMsg(a coordinator.Action) {
	c := r.clients[a.Client]
	m := &r.msgBuf[a.Slot]
	if r.pol.DeliverClock(a.Client, a.Now) {
		r.bridge.ClientClock(a.Client, a.Now)
	}
	if r.bridge.RelayTo(m.relay, a.Client, m.frame) {
		r.pol.Delivered(a.Client)
		c.relayIn++
		r.log.Debug().Int("relay", m.relay).Str("client", c.conf.Name).Int64("sent_ns", a.To).Int64("at_ns", a.Now).Msg("relayed message delivered")
	} else {
		c.relayLost++
		r.log.Warn().Int("relay", m.relay).Str("client", c.conf.Name).Int64("sent_ns", a.To).Msg("relayed message lost: the client is not connected to the relay topic any more")
	}
}

// actuate keeps a command from client i for the world.
func (r *runner) actuate(robot, i int, cmd []float64) {
	if r.inStartup {
		// The node's activation 0, before virtual time: it acts from 0.
		r.world.SetCommand(robot, cmd)
		return
	}
	slot := r.pol.Actuate(i)
	r.cmdN[slot] = copy(r.cmd[slot][:], cmd)
	r.recCommand(slot, i) // recording
}

// diagnostics publishes the run's state on /diagnostics at virtual time t:
// one status for the run (Δ, overhead so far, dispatches, misses) and one
// per client (progress, CPU, activations, misses, leak so far). It does not
// allocate once its buffers have grown.
func (r *runner) diagnostics(t int64) {
	d := &r.diagW
	r.diagSeq++
	d.Begin(r.diagSeq, msgs.Epoch+t, 1+len(r.clients))
	coord := r.coordinatorSoFar() // all of tcs's CPU, as summary.json's fraction
	var clients int64
	for _, c := range r.clients {
		clients += c.ran
	}
	frac := 0.0
	if total := coord + clients + r.dynNs; total > 0 {
		frac = float64(coord) / float64(total)
	}
	level := msgs.DiagOK
	msg := "consistent"
	if r.missesAll > 0 {
		level, msg = msgs.DiagWarn, "deadline misses"
	}
	d.Status(level, "tcs: run", msg, r.hwid, 6)
	r.diagW.KVSeconds("virtual_s", t)
	r.diagW.KVSeconds("drift_s", r.pol.Drift())
	r.diagW.KVSeconds("drift_max_s", r.drift.Max())
	r.diagW.KVFloat("overhead_fraction", frac)
	r.diagW.KVInt("dispatches", r.pol.Dispatches())
	r.diagW.KVInt("deadline_misses", r.missesAll)
	for i, c := range r.clients {
		st := r.pol.Stats(i)
		level = msgs.DiagOK
		if st.Misses > 0 {
			level = msgs.DiagWarn
		}
		if st.Exited {
			level = msgs.DiagError
		}
		d.Status(level, c.diagName, st.State, r.hwid, 6)
		r.diagW.KVSeconds("progress_s", st.Progress)
		r.diagW.KVSeconds("cpu_s", c.ran)
		r.diagW.KVInt("activations", st.Activations)
		r.diagW.KVInt("deadline_misses", st.Misses)
		leak := int64(0)
		if c.exit == nil {
			leak = c.leak(c.proc.CPU(), r.mech.Unsettled(c.proc))
		}
		r.diagW.KVSeconds("leak_s", leak)
		r.diagW.KVInt("deliveries", st.Deliveries)
	}
	frame := d.End()
	r.bridge.Diagnostics(frame)
	r.recDiag(t, frame) // recording
}
