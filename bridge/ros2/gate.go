//go:build ros2

package ros2

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/layout"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// GateRobot, GateClient and GateRelay are the run as the gate sees it
// (bridge/layout, shared with the ROS 1 transport). A relay's publisher is
// read on Topic and each other client gets it on its own topic
// layout.ClientRelayTopic(client, Topic).
type (
	GateRobot  = layout.Robot
	GateClient = layout.Client
	GateRelay  = layout.Relay
)

// MaxCommand is the most command values a robot's actuator topic carries.
const MaxCommand = 64

// commandType is the ROS 2 type of a robot's command topic: Float64 for
// one value, Float64MultiArray for more.
func commandType(r GateRobot) string {
	if r.MultiArray() {
		return rmsgs.Float64MultiArray
	}
	return rmsgs.Float64
}

// GateConf configures a Gate.
type GateConf struct {
	Node    *Node
	Robots  []GateRobot
	Clients []GateClient
	Relays  []GateRelay
	Log     zerolog.Logger
}

// settleMax bounds how long Settle waits for Cyclone's receive path. The
// receive threads run at SCHED_OTHER on the other CPUs, where the host's
// load may keep them from running for milliseconds; a command is stamped
// right only if Settle outwaits that, so the bound is far above any such
// delay and is there only so that a wedged thread cannot hang the run.
const settleMax = time.Second

// refreshEvery is how often the gate refreshes which client each matched
// endpoint belongs to, off the dispatch thread.
const refreshEvery = 20 * time.Millisecond

// Gate is the ROS 2 side of a run, the same contract as bridge/ros1.Gate
// (it implements driver.Bridge): clocks, the robots' sensor and actuator
// topics, relays and /diagnostics, over DDS.
//
// Delivery: every writer of the gate is RELIABLE + TRANSIENT_LOCAL +
// KEEP_LAST, which every ROS 2 reader matches; Cyclone sends a sample to
// every matched reader inside dds_writecdr (no batching), and on loopback
// the datagram is in the reader's socket when sendmsg returns — the same
// "bytes in the receiver's socket" as ROS 1. A client is reached when one
// of its participant's readers is matched (refreshed every 20 ms and in
// Waiting). Waiting for acknowledgments (dds_wait_for_acks) cannot gate a
// client: its DDS threads only run when it is dispatched, so the ack never
// comes before (see README).
//
// Clients are told apart by participant: the participant whose reader is
// matched on client i's private clock is client i's (one client per
// process, as tcs starts them).
type Gate struct {
	conf    GateConf
	node    *Node
	clock   *Writer
	diag    *Writer
	private []*Writer
	sensors []*Writer
	world   [][]*Writer // robot j's world sensors (layout.Robot.Sensors)
	cmds    []*Reader
	relays  []*gateRelay

	snap atomic.Pointer[snapshot]
	// refreshMu makes refreshes (the refresh loop's, start-up's) one at a
	// time, so that the last to read the matches is the last to store.
	refreshMu sync.Mutex
	stop      chan struct{}
	done      chan struct{}

	mu      sync.Mutex // guards relay set-up and the logs below
	logged  map[string]bool
	rejects atomic.Pointer[[]string] // rejections noted on the dispatch thread

	// Dispatch-thread state, kept here so that the calls do not allocate.
	buf  []byte
	in   []byte
	pub  Guid
	vals [MaxCommand]float64
	smsg sensor.Message
	rejN int
	rej  [16]string
}

type gateRelay struct {
	GateRelay
	reader  atomic.Pointer[Reader]
	writers []atomic.Pointer[Writer] // per receiving client
	typ     string
}

// snapshot is who the gate's matched endpoints belong to.
type snapshot struct {
	client  map[[12]byte]int // participant prefix → client
	clockOK []bool           // private clock i matched by client i
	sensor  []uint64         // robot j's sensor writer: clients reached
	world   [][]uint64       // robot j's world sensor k: clients reached
	relay   [][]bool         // relay k, client i: its relay topic is read by it
	// sensorOthers, worldOthers: the writer also reaches readers that are
	// not clients (a viewer, a recorder), which get every sample.
	sensorOthers []bool
	worldOthers  [][]bool
}

// NewGate creates the writers (/clock, latched: the caller's first Clock;
// every ROS client's private clock, latched at msgs.Epoch; the sensor topics;
// /diagnostics) and the command readers, announces the node on
// ros_discovery_info and starts refreshing the matches.
func NewGate(conf GateConf) (g *Gate, err error) {
	if conf.Node == nil {
		return nil, errors.New("ros2 gate: no node")
	}
	if err := layout.Check(conf.Robots, conf.Clients, conf.Relays, MaxCommand); err != nil {
		return nil, fmt.Errorf("ros2 gate: %w", err)
	}
	n := conf.Node
	g = &Gate{conf: conf, node: n, logged: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{}),
		buf: make([]byte, 0, 4096), in: make([]byte, 1<<16)}
	g.snap.Store(&snapshot{client: map[[12]byte]int{}, clockOK: make([]bool, len(conf.Clients)),
		sensor: make([]uint64, len(conf.Robots)), world: make([][]uint64, len(conf.Robots)), relay: make([][]bool, len(conf.Relays))})
	if g.clock, err = n.Writer("/clock", rmsgs.Clock, Latched); err != nil {
		return nil, err
	}
	// /clock's first sample is the run's first Clock (virtual 0, before
	// any client starts): writing one here too would give a reader matched
	// in between time 0 twice.
	if g.diag, err = n.Writer("/diagnostics", rmsgs.DiagnosticArray, QoS{Reliable: true, TransientLocal: true, Depth: 10}); err != nil {
		return nil, err
	}
	for _, c := range conf.Clients {
		if !c.ROS {
			g.private = append(g.private, nil)
			continue
		}
		w, err := n.Writer(layout.ClockTopic(c.Name), rmsgs.Clock, Latched)
		if err != nil {
			return nil, err
		}
		if !c.ClockAtBegin {
			if err := w.Write(rmsgs.AppendClock(nil, msgs.Epoch)); err != nil {
				return nil, err
			}
		}
		g.private = append(g.private, w)
	}
	for _, r := range conf.Robots {
		w, err := n.Writer(layout.SensorTopic(r.Name), rmsgs.JointState, Latched)
		if err != nil {
			return nil, err
		}
		g.sensors = append(g.sensors, w)
		var ws []*Writer
		for _, sn := range r.Sensors {
			w, err := n.Writer(layout.WorldSensorTopic(r.Name, sn.Name), sn.Kind.String(), Latched)
			if err != nil {
				return nil, err
			}
			ws = append(ws, w)
		}
		g.world = append(g.world, ws)
		rd, err := n.Reader(r.CommandName(), commandType(r), Commands, true)
		if err != nil {
			return nil, err
		}
		g.cmds = append(g.cmds, rd)
	}
	for _, rl := range conf.Relays {
		if _, err := rmsgs.TopicName(rl.Topic); err != nil {
			return nil, fmt.Errorf("ros2 gate: relay: %w", err)
		}
		g.relays = append(g.relays, &gateRelay{GateRelay: rl, writers: make([]atomic.Pointer[Writer], len(conf.Clients))})
	}
	if err := n.Announce(); err != nil {
		return nil, err
	}
	go g.refreshLoop()
	return g, nil
}

func (g *Gate) refreshLoop() {
	defer close(g.done)
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			if g.matchChanged() {
				if err := g.refresh(); err != nil {
					g.once("refresh", func(l *zerolog.Event) { l.Err(err).Msg("ros2: cannot refresh the matched endpoints") })
				}
			}
			g.flushRejects()
		}
	}
}

// eachClient calls f with the client of each reader matched to w whose
// participant is a known client's.
func (s *snapshot) eachClient(w *Writer, f func(client int)) error {
	_, err := s.eachReader(w, f)
	return err
}

// eachReader is eachClient that also reports whether w reaches a reader
// that is not a client's.
func (s *snapshot) eachReader(w *Writer, f func(client int)) (others bool, err error) {
	ms, err := w.Matched()
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		if i, ok := s.client[Prefix(m.Participant)]; ok {
			f(i)
		} else {
			others = true
		}
	}
	return others, nil
}

// matchChanged reports whether the readers matched with any of the gate's
// writers changed since it last asked (an error counts as a change, for
// refresh to report). It asks every writer, so that each change is
// reported once. Listing every writer's matches at every tick (a copy of
// each matched reader's data) is then done only when one changed.
func (g *Gate) matchChanged() bool {
	changed := false
	ask := func(w *Writer) {
		if w == nil {
			return
		}
		c, err := w.MatchChanged()
		changed = changed || c || err != nil
	}
	for _, w := range g.private {
		ask(w)
	}
	for _, w := range g.sensors {
		ask(w)
	}
	for _, ws := range g.world {
		for _, w := range ws {
			ask(w)
		}
	}
	for _, rl := range g.relays {
		for i := range rl.writers {
			ask(rl.writers[i].Load())
		}
	}
	return changed
}

// refresh recomputes the snapshot from the matched endpoints.
func (g *Gate) refresh() error {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	s := &snapshot{client: map[[12]byte]int{}, clockOK: make([]bool, len(g.conf.Clients)),
		sensor: make([]uint64, len(g.conf.Robots)), relay: make([][]bool, len(g.relays))}
	for i, w := range g.private {
		if w == nil {
			continue
		}
		ms, err := w.Matched()
		if err != nil {
			return err
		}
		for _, m := range ms {
			p := Prefix(m.Participant)
			if j, ok := s.client[p]; ok && j != i {
				g.once("shared"+string(p[:]), func(l *zerolog.Event) {
					l.Str("client", g.conf.Clients[i].Name).Str("other", g.conf.Clients[j].Name).
						Msg("ros2: two clients share one DDS participant (one process): tcs tells clients apart by participant")
				})
				continue
			}
			s.client[p] = i
			s.clockOK[i] = true
		}
	}
	s.sensorOthers = make([]bool, len(g.sensors))
	for j, w := range g.sensors {
		others, err := s.eachReader(w, func(i int) {
			if i < 64 {
				s.sensor[j] |= 1 << i
			}
		})
		if err != nil {
			return err
		}
		s.sensorOthers[j] = others
	}
	s.world = make([][]uint64, len(g.world))
	s.worldOthers = make([][]bool, len(g.world))
	for j, ws := range g.world {
		s.world[j] = make([]uint64, len(ws))
		s.worldOthers[j] = make([]bool, len(ws))
		for k, w := range ws {
			others, err := s.eachReader(w, func(i int) {
				if i < 64 {
					s.world[j][k] |= 1 << i
				}
			})
			if err != nil {
				return err
			}
			s.worldOthers[j][k] = others
		}
	}
	for k, rl := range g.relays {
		s.relay[k] = make([]bool, len(g.conf.Clients))
		for i := range rl.writers {
			w := rl.writers[i].Load()
			if w == nil {
				continue
			}
			if err := s.eachClient(w, func(c int) {
				if c == i {
					s.relay[k][i] = true
				}
			}); err != nil {
				return err
			}
		}
	}
	g.snap.Store(s)
	return nil
}

// once logs f's message once per key.
func (g *Gate) once(key string, f func(*zerolog.Event)) {
	g.mu.Lock()
	seen := g.logged[key]
	g.logged[key] = true
	g.mu.Unlock()
	if !seen {
		f(g.conf.Log.Warn())
	}
}

// Args returns the ROS 2 arguments that make client i a node named after
// it in its robot's namespace, on sim time from its private clock, reading
// every relayed topic it does not publish from the bridge.
func (g *Gate) Args(i int) []string {
	c := g.conf.Clients[i]
	args := []string{"--ros-args", "-p", "use_sim_time:=true", "-r", "__node:=" + c.Name,
		"-r", "__ns:=/" + g.conf.Robots[c.Robot].Name, "-r", "/clock:=" + layout.ClockTopic(c.Name)}
	for _, rl := range g.relays {
		if rl.From != i {
			args = append(args, "-r", rl.Topic+":="+layout.ClientRelayTopic(c.Name, rl.Topic))
		}
	}
	return args
}

// Env returns the environment client i needs: the bridge's domain and,
// when the bridge is bound to loopback, discovery on this host only and
// (unless the user's environment has a CYCLONEDDS_URI, which the client
// then inherits) a Cyclone configuration bound to loopback (ClientConfig):
// a Jazzy node needs it to meet the bridge.
func (g *Gate) Env(i int) []string {
	return ClientEnv(g.node.Domain(), g.node.Loopback(), os.Getenv("CYCLONEDDS_URI") != "")
}

// ClientEnv is what a client of a bridge on domain needs in its
// environment (loopback: the bridge is bound to 127.0.0.1; userURI: the
// user's environment has a CYCLONEDDS_URI, kept).
func ClientEnv(domain int, loopback, userURI bool) []string {
	env := []string{fmt.Sprintf("ROS_DOMAIN_ID=%d", domain)}
	if loopback {
		env = append(env, "ROS_LOCALHOST_ONLY=1", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST")
		if !userURI {
			env = append(env, "CYCLONEDDS_URI="+ClientConfig)
		}
	}
	return env
}

// ToolEnv is what a user must export in another shell for the ros2 tools
// (ros2 topic list, ros2 node list, ros2 bag record) to see the run, as
// shell words; nil when nothing is needed.
func (g *Gate) ToolEnv() []string {
	if !g.node.Loopback() {
		return nil
	}
	var env []string
	if d := g.node.Domain(); d != 0 {
		env = append(env, fmt.Sprintf("ROS_DOMAIN_ID=%d", d))
	}
	env = append(env, "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST")
	if g.node.conf.Distro == rmsgs.Humble {
		env = append(env, "ROS_LOCALHOST_ONLY=1")
	}
	if u := os.Getenv("CYCLONEDDS_URI"); u != "" {
		env = append(env, "CYCLONEDDS_URI="+u)
	} else {
		env = append(env, "CYCLONEDDS_URI="+ClientConfig)
	}
	return env
}

// Fd is readable when a command or relayed message arrived: call Drain.
func (g *Gate) Fd() int { return g.node.Fd() }

// Sample publishes robot j's sensor sample at virtual time t (its
// JointState, then each world sensor's message) and calls delivered with
// each client each message reached. A DDS write reaches every matched
// reader, so a topic's message is written when a reader that is not a
// client's, or a client for which now is true, reads it (and reaches the
// others too), and not at all when none does. It does not allocate.
func (g *Gate) Sample(j int, t int64, obs []float64, now func(client int) bool, delivered func(client int)) {
	r := &g.conf.Robots[j]
	s := g.snap.Load()
	if s.sensorOthers == nil || s.sensorOthers[j] || anyNow(s.sensor[j], now) {
		pos, vel := dynamics.SplitState(obs, len(r.Joints))
		g.buf = rmsgs.AppendJointState(g.buf[:0], msgs.Epoch+t, "", r.Joints, pos, vel, nil)
		if err := g.sensors[j].Write(g.buf); err != nil {
			g.note("sensor")
			return
		}
		reached(s.sensor[j], delivered)
	}
	for k := range r.Sensors {
		known := j < len(s.world) && k < len(s.world[j])
		if known && !s.worldOthers[j][k] && !anyNow(s.world[j][k], now) {
			continue
		}
		r.Sensors[k].Message(obs, &g.smsg)
		g.buf = rmsgs.AppendSensor(g.buf[:0], msgs.Epoch+t, &g.smsg)
		if err := g.world[j][k].Write(g.buf); err != nil {
			g.note("sensor")
			return
		}
		if known {
			reached(s.world[j][k], delivered)
		}
	}
}

// anyNow reports whether now is true for a client whose bit is set in
// mask.
func anyNow(mask uint64, now func(client int) bool) bool {
	for i := 0; mask != 0; i++ {
		if mask&1 != 0 && now(i) {
			return true
		}
		mask >>= 1
	}
	return false
}

// reached calls delivered with each client whose bit is set in mask.
func reached(mask uint64, delivered func(client int)) {
	for i := 0; mask != 0; i++ {
		if mask&1 != 0 {
			delivered(i)
		}
		mask >>= 1
	}
}

// Clock publishes the world's time t on /clock.
func (g *Gate) Clock(t int64) {
	g.buf = rmsgs.AppendClock(g.buf[:0], msgs.Epoch+t)
	if err := g.clock.Write(g.buf); err != nil {
		g.note("clock")
	}
}

// ClientClock puts t on client i's private clock and reports whether the
// client's reader is matched (the sample is then in its socket).
func (g *Gate) ClientClock(i int, t int64) bool {
	w := g.private[i]
	if w == nil {
		return false
	}
	g.buf = rmsgs.AppendClock(g.buf[:0], msgs.Epoch+t)
	if err := w.Write(g.buf); err != nil {
		g.note("clock")
		return false
	}
	return g.snap.Load().clockOK[i]
}

// Diagnostics transcodes a ROS 1 diagnostic_msgs/DiagnosticArray frame
// (msgs.DiagWriter's) and publishes it on /diagnostics.
func (g *Gate) Diagnostics(frame []byte) {
	var err error
	if g.buf, err = rmsgs.AppendDiagnosticsFromROS1(g.buf[:0], frame); err != nil {
		g.note("diagnostics frame")
		return
	}
	if err := g.diag.Write(g.buf); err != nil {
		g.note("diagnostics")
	}
}

// Settle waits (up to settleMax) until Cyclone's receive path has handed
// on every datagram already in the bridge's sockets, and reports whether
// it did (ok false: it gave up; what is still on its way will be stamped
// late) and whether a message waits to be drained (pending: the node's
// fd is readable). The driver calls it when a ROS client blocks and
// drains after it: a command the client sent just before blocking is then
// drained (and stamped) before the world moves on, as with ROS 1 where the
// bytes are in the bridge's socket when the client's send returns.
func (g *Gate) Settle() (ok, pending bool) {
	ok = g.node.Settle(settleMax)
	return ok, linux.Readable(g.node.Fd())
}

// Drain takes every message that arrived: cmd gets each command's robot,
// publishing client (-1: not a client of this run; rejected and logged)
// and value; msg each relayed message's relay, publisher and body (valid
// during the call).
func (g *Gate) Drain(cmd func(robot, client int, cmd []float64), msg func(relay, client int, body []byte)) {
	g.node.Reset()
	s := g.snap.Load()
	for j, rd := range g.cmds {
		for {
			n, ok, err := rd.Take(g.in, &g.pub)
			if err != nil {
				g.note("take")
				break
			}
			if !ok {
				break
			}
			if n > len(g.in) {
				g.note("oversized command")
				continue
			}
			i, known := s.client[Prefix(g.pub)]
			vals, err := g.decodeCommand(j, g.in[:n])
			switch {
			case err != nil:
				g.note("malformed or oversized " + rd.Type + " on " + rd.Topic)
			case !known || g.conf.Clients[i].Robot != j:
				g.note("a command on " + rd.Topic + " from a node that is not a client of this robot")
			default:
				cmd(j, i, vals)
			}
		}
	}
	for k, rl := range g.relays {
		rd := rl.reader.Load()
		if rd == nil {
			continue
		}
		for {
			n, ok, err := rd.Take(g.in, &g.pub)
			if err != nil || !ok {
				break
			}
			if n > len(g.in) {
				g.note("relayed message over 64 KiB on " + rl.Topic)
				continue
			}
			if i, known := s.client[Prefix(g.pub)]; !known || i != rl.From {
				g.note("a message on relayed topic " + rl.Topic + " from a node other than its client")
				continue
			}
			msg(k, rl.From, g.in[:n])
		}
	}
}

// decodeCommand reads robot j's command sample into g.vals.
func (g *Gate) decodeCommand(j int, sample []byte) ([]float64, error) {
	if !g.conf.Robots[j].MultiArray() {
		v, err := rmsgs.DecodeFloat64(sample)
		g.vals[0] = v
		return g.vals[:1], err
	}
	vals, err := rmsgs.DecodeFloat64MultiArray(sample, g.vals[:0])
	if err == nil && len(vals) > MaxCommand {
		err = errors.New("too many values")
	}
	return vals, err
}

// note records a problem seen on the dispatch thread (logged later by the
// refresher, once per reason). Reasons are constant strings or built only
// on rare paths.
func (g *Gate) note(reason string) {
	if g.rejN < len(g.rej) && !slices.Contains(g.rej[:g.rejN], reason) {
		g.rej[g.rejN] = reason
		g.rejN++
		cp := append([]string(nil), g.rej[:g.rejN]...)
		g.rejects.Store(&cp)
	}
}

func (g *Gate) flushRejects() {
	p := g.rejects.Load()
	if p == nil {
		return
	}
	for _, r := range *p {
		g.once("reject:"+r, func(l *zerolog.Event) {
			l.Str("reason", r).Msg("ros2: message rejected or not sent (reported once per reason)")
		})
	}
}

// RelayReceivers is the set of clients (bit i) whose relay topic for relay
// k is matched.
func (g *Gate) RelayReceivers(k int) uint64 {
	var m uint64
	for i, ok := range g.snap.Load().relay[k] {
		if ok && i < 64 && i != g.relays[k].From {
			m |= 1 << i
		}
	}
	return m
}

// RelayTo writes a message of relay k to client i's relay topic. frame is
// the body with a ROS 1 length prefix (the driver frames relayed messages
// that way); the prefix is dropped.
func (g *Gate) RelayTo(k, i int, frame []byte) bool {
	w := g.relays[k].writers[i].Load()
	if w == nil || len(frame) < 4 {
		return false
	}
	if err := w.Write(frame[4:]); err != nil {
		g.note("relay write")
		return false
	}
	return g.snap.Load().relay[k][i]
}

// Waiting says, per client, what it still lacks before virtual time may
// begin, and which other subscribers of tcs's topics are not matched yet.
// It sets up the relays whose publisher appeared.
func (g *Gate) Waiting() (clients []string, others string, err error) {
	if err := g.refresh(); err != nil {
		return nil, "", err
	}
	pubs, subs, err := g.node.Graph()
	if err != nil {
		return nil, "", fmt.Errorf("ros2: graph: %w", err)
	}
	if added, err := g.setupRelays(pubs); err != nil {
		return nil, "", err
	} else if added {
		// The new relay writers' matches.
		if err := g.refresh(); err != nil {
			return nil, "", err
		}
	}
	s := g.snap.Load()
	self := Prefix(g.node.Guid())
	ownerOf := func(p Guid) (int, bool) { i, ok := s.client[Prefix(p)]; return i, ok }
	// Each client's endpoints, found in one pass: the graph of a large
	// launch holds thousands, and this runs at every poll of the start-up.
	ownSubs := make([][]*Endpoint, len(g.conf.Clients))
	ownPubs := make([][]*Endpoint, len(g.conf.Clients))
	for k := range subs {
		if i, ok := ownerOf(subs[k].Participant); ok {
			ownSubs[i] = append(ownSubs[i], &subs[k])
		}
	}
	for k := range pubs {
		if i, ok := ownerOf(pubs[k].Participant); ok {
			ownPubs[i] = append(ownPubs[i], &pubs[k])
		}
	}
	out := make([]string, len(g.conf.Clients))
	for i, c := range g.conf.Clients {
		if !c.ROS {
			continue
		}
		var miss []string
		if !s.clockOK[i] {
			miss = append(miss, "not subscribed to its clock "+layout.ClockTopic(c.Name))
			out[i] = strings.Join(miss, "; ")
			continue
		}
		robot := g.conf.Robots[c.Robot].Name
		command := g.conf.Robots[c.Robot].CommandName()
		// DDS names of the topics (rt/...), made once per client.
		sensor := layout.SensorTopic(robot)
		sensorDDS, commandDDS := "rt"+sensor, "rt"+command
		sensors := g.conf.Robots[c.Robot].Sensors
		worldDDS := make([]string, len(sensors))
		for k, sn := range sensors {
			worldDDS[k] = "rt" + layout.WorldSensorTopic(robot, sn.Name)
		}
		for _, e := range ownSubs[i] {
			if e.Topic == sensorDDS && s.sensor[c.Robot]&(1<<i) == 0 {
				miss = append(miss, "subscribed to "+sensor+" but not matched yet (QoS or type?)")
			}
			for k, t := range worldDDS {
				if e.Topic == t && s.world[c.Robot][k]&(1<<i) == 0 {
					miss = append(miss, "subscribed to "+t[2:]+" but not matched yet (QoS or type?)")
				}
			}
		}
		for _, e := range ownPubs[i] {
			if e.Topic == commandDDS {
				if !g.matchedPub(g.cmds[c.Robot], e.Key) {
					miss = append(miss, "publishes "+command+" but tcs is not matched to it yet (type "+rmsgs.ROSType(e.Type)+"?)")
				}
			}
		}
		for k, rl := range g.relays {
			if rl.From == i {
				if rl.reader.Load() == nil {
					miss = append(miss, "relayed topic "+rl.Topic+": the node does not publish it yet")
				}
				continue
			}
			topic := layout.ClientRelayTopic(c.Name, rl.Topic)
			topicDDS := "rt" + topic
			for _, e := range ownSubs[i] {
				if e.Topic == topicDDS && !s.relay[k][i] {
					miss = append(miss, "subscribed to "+topic+" but not matched yet")
				}
			}
		}
		out[i] = strings.Join(miss, "; ")
	}
	var late []string
	watched := map[string]*Writer{"rt/clock": g.clock, "rt/diagnostics": g.diag}
	for j, r := range g.conf.Robots {
		watched["rt"+layout.SensorTopic(r.Name)] = g.sensors[j]
		for k, sn := range r.Sensors {
			watched["rt"+layout.WorldSensorTopic(r.Name, sn.Name)] = g.world[j][k]
		}
	}
	for _, e := range subs {
		w := watched[e.Topic]
		if w == nil || Prefix(e.Participant) == self {
			continue
		}
		if _, client := ownerOf(e.Participant); client {
			continue
		}
		if ms, err := w.Matched(); err == nil && !slices.ContainsFunc(ms, func(m Match) bool { return m.Key == e.Key }) {
			late = append(late, fmt.Sprintf("a reader of %s (participant %x) is not matched yet", strings.TrimPrefix(e.Topic, "rt"), e.Participant[:12]))
		}
	}
	for _, e := range pubs {
		if Prefix(e.Participant) == self {
			continue
		}
		if e.Topic == "rt/clock" || strings.HasPrefix(e.Topic, "rt/tcs/") || watched[e.Topic] != nil && e.Topic != "rt/diagnostics" {
			g.once("intruder"+e.Topic+string(e.Participant[:]), func(l *zerolog.Event) {
				l.Str("topic", strings.TrimPrefix(e.Topic, "rt")).Hex("participant", e.Participant[:12]).
					Msg("ros2: a participant other than tcs publishes a topic of tcs; its messages reach subscribers ungated")
			})
		}
	}
	sort.Strings(late)
	return out, strings.Join(late, "; "), nil
}

func (g *Gate) matchedPub(rd *Reader, key Guid) bool {
	ms, err := rd.Matched()
	return err == nil && slices.ContainsFunc(ms, func(m Match) bool { return m.Key == key })
}

// setupRelays creates, for each relay whose publisher (its client) now
// writes the topic, the bridge's reader of it (the publisher's type, type
// hash and reliability) and one writer per other ROS client (its relay
// topic, the publisher's type hash and QoS). added says whether it made any.
func (g *Gate) setupRelays(pubs []Endpoint) (added bool, err error) {
	s := g.snap.Load()
	changed := false
	for _, rl := range g.relays {
		if rl.reader.Load() != nil {
			continue
		}
		for _, e := range pubs {
			if i, ok := s.client[Prefix(e.Participant)]; !ok || i != rl.From || e.Topic != "rt"+rl.Topic {
				continue
			}
			typ := rmsgs.ROSType(e.Type)
			if typ == "" {
				return changed, fmt.Errorf("ros2: relay %s: the publisher's type %q is not a ROS 2 type", rl.Topic, e.Type)
			}
			// The type's hash is the publisher's: tcs relays types it does
			// not know.
			h := rmsgs.TypeHashOf([]byte(e.UserData))
			q := QoS{Reliable: e.QoS.Reliable, Depth: 64}
			rd, err := g.node.ReaderHashed(rl.Topic, typ, h, q, true)
			if err != nil {
				return changed, fmt.Errorf("ros2: relay %s: %w", rl.Topic, err)
			}
			for i, c := range g.conf.Clients {
				if i == rl.From || !c.ROS {
					continue
				}
				w, err := g.node.WriterHashed(layout.ClientRelayTopic(c.Name, rl.Topic), typ, h, QoS{Reliable: e.QoS.Reliable, TransientLocal: e.QoS.TransientLocal, Depth: 10})
				if err != nil {
					return changed, fmt.Errorf("ros2: relay %s: %w", rl.Topic, err)
				}
				rl.writers[i].Store(w)
			}
			rl.typ = typ
			rl.reader.Store(rd)
			changed = true
			g.conf.Log.Info().Str("topic", rl.Topic).Str("type", typ).Msg("ros2: relay set up")
			break
		}
	}
	if changed {
		return true, g.node.Announce()
	}
	return false, nil
}

// Close stops the refresher (the node is closed by its owner).
func (g *Gate) Close() {
	select {
	case <-g.stop:
	default:
		close(g.stop)
		<-g.done
	}
}
