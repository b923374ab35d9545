package ros1

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/layout"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs"
)

// GateRobot, GateClient and GateRelay are the run as the gate sees it
// (bridge/layout, shared with the ROS 2 transport). A robot whose body
// takes more than one command value (at most MaxCommand) gets a
// std_msgs/Float64MultiArray command; a relay's other clients are remapped
// to read layout.RelayTopic(Topic), and its message type is whatever From
// declares.
type (
	GateRobot  = layout.Robot
	GateClient = layout.Client
	GateRelay  = layout.Relay
)

// MaxCommand is the most command values a robot's actuator topic carries.
const MaxCommand = 64

// GateConf configures a Gate.
type GateConf struct {
	Node    *Node
	Robots  []GateRobot
	Clients []GateClient
	Relays  []GateRelay
	Log     zerolog.Logger
}

// Gate is the ROS side of a run: the clocks, the robots' sensor and
// actuator topics, and which client each connection belongs to. The
// dispatch thread calls Sample, Clock, ClientClock and Drain; connections
// come and go on the node's goroutines, which add them to the gate's own
// epoll set (Fd), so the dispatch thread never waits for them.
type Gate struct {
	conf    GateConf
	clock   *Publisher
	diag    *Publisher
	private []*Publisher
	sensors []*Publisher
	world   [][]*Publisher // robot j's world sensors (layout.Robot.Sensors)
	relays  []*gateRelay
	ep      *linux.Epoll
	// hangups holds the private clocks' connections, for their
	// subscribers' hang-ups (HangupFd, Hangups).
	hangups *linux.Epoll

	byCaller map[string]int // callerid → client index
	callers  []string       // client index → callerid
	// clockGone[i]: client i unregistered its private clock's subscription
	// from the master (it is shutting down); set on the master's goroutine.
	clockGone []atomic.Bool

	mu     sync.Mutex // guards adding and removing connections
	conns  atomic.Pointer[[]*gateConn]
	closed bool

	// Dispatch-thread state, kept here so that the calls do not allocate.
	frame   []byte
	vals    [MaxCommand]float64
	smsg    sensor.Message
	delFn   func(client int)
	nowFn   func(client int) bool
	onSent  func(callerid string)
	onWants func(callerid string) bool
	want    string // ClientClock: the callerid that must receive
	got     bool
	onWant  func(callerid string)
	cur     *gateConn
	curFn   func(robot, client int, cmd []float64)
	msgFn   func(relay, client int, body []byte)
	onFrame func(body []byte)
	mask    uint64
	onRecv  func(callerid string)
	rejLog  map[string]bool // what was already reported, by reason key
}

type gateConn struct {
	in     *InConn
	robot  int // the actuator topic's robot; -1 on a relay
	relay  int // the relay it publishes on; -1 on an actuator topic
	client int // the publishing client, -1 for a node that is not one
}

type gateRelay struct {
	GateRelay
	pub atomic.Pointer[Publisher] // advertised once From connected
}

// ClientCallerID is the node name a client of robot runs as.
func ClientCallerID(robot, client string) string { return "/" + robot + "/" + client }

// NewGate advertises /clock (latched: the caller's first Clock, before any
// client starts), every client's private clock (latched at msgs.Epoch), the
// robots' sensor topics (latched, see Sample) and subscribes to their
// actuator topics.
func NewGate(conf GateConf) (g *Gate, err error) {
	if conf.Node == nil {
		return nil, errors.New("gate: no node")
	}
	if err := layout.Check(conf.Robots, conf.Clients, conf.Relays, MaxCommand); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	g = &Gate{conf: conf, byCaller: map[string]int{}, rejLog: map[string]bool{}}
	g.delFn = func(int) {}
	g.nowFn = func(int) bool { return true }
	g.onSent = g.delivered
	g.onWants = g.wants
	g.onWant = func(id string) { g.got = g.got || id == g.want }
	g.onFrame = g.frameIn
	g.onRecv = func(id string) {
		if i, ok := g.byCaller[id]; ok && i < 64 {
			g.mask |= 1 << i
		}
	}
	g.conns.Store(&[]*gateConn{})
	if g.ep, err = linux.NewEpoll(); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	if g.hangups, err = linux.NewEpoll(); err != nil {
		_ = g.ep.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	n := conf.Node
	if g.clock, err = n.Advertise("/clock", msgs.Clock, true); err != nil {
		return nil, err
	}
	// /clock's first message is the run's first Clock (virtual 0, before
	// any client starts): writing one here too would give a subscriber
	// that connects in between (rosbag) time 0 twice.
	if g.diag, err = n.Advertise("/diagnostics", msgs.DiagnosticArray, false); err != nil {
		return nil, err
	}
	g.clockGone = make([]atomic.Bool, len(conf.Clients))
	for i, c := range conf.Clients {
		id := ClientCallerID(conf.Robots[c.Robot].Name, c.Name)
		g.callers = append(g.callers, id)
		if !c.ROS {
			g.private = append(g.private, nil)
			continue
		}
		g.byCaller[id] = i
		p, err := n.Advertise(layout.ClockTopic(c.Name), msgs.Clock, true)
		if err != nil {
			return nil, err
		}
		p.hangups = g.hangups
		if !c.ClockAtBegin {
			p.Write(msgs.AppendClock(nil, msgs.Epoch))
		}
		g.private = append(g.private, p)
	}
	for j, r := range conf.Robots {
		p, err := n.Advertise(layout.SensorTopic(r.Name), msgs.JointState, true)
		if err != nil {
			return nil, err
		}
		g.sensors = append(g.sensors, p)
		var ws []*Publisher
		for _, sn := range r.Sensors {
			p, err := n.Advertise(layout.WorldSensorTopic(r.Name, sn.Name), msgs.SensorType(sn.Kind), true)
			if err != nil {
				return nil, err
			}
			ws = append(ws, p)
		}
		g.world = append(g.world, ws)
		if _, err := n.Subscribe(r.CommandName(), commandType(r), func(in *InConn) { g.add(j, in) }); err != nil {
			return nil, err
		}
	}
	for k, rl := range conf.Relays {
		g.relays = append(g.relays, &gateRelay{GateRelay: rl})
		if _, err := n.Subscribe(rl.Topic, AnyType, func(in *InConn) { g.addRelay(k, in) }); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// addRelay takes a publisher connection on relay k: only the relay's
// client may publish it; its type becomes the relay topic's.
func (g *Gate) addRelay(k int, in *InConn) {
	rl := g.relays[k]
	if in.Callerid != g.callers[rl.From] {
		g.conf.Log.Warn().Str("topic", in.Topic).Str("publisher", in.Callerid).Str("relay_from", g.callers[rl.From]).
			Msg("ros1: rejected a publisher of a relayed topic: only the client named in the scenario may publish it")
		in.Close()
		return
	}
	pub := rl.pub.Load()
	if pub == nil {
		var err error
		pub, err = g.conf.Node.Advertise(layout.RelayTopic(rl.Topic), in.Type, false)
		if err != nil {
			g.conf.Log.Error().Str("topic", layout.RelayTopic(rl.Topic)).Err(err).Msg("ros1: cannot advertise a relay topic")
			in.Close()
			return
		}
		rl.pub.Store(pub)
	} else if pub.typ.MD5 != in.Type.MD5 {
		g.conf.Log.Warn().Str("topic", in.Topic).Str("publisher", in.Callerid).Str("type", in.Type.Name).
			Str("relay_type", pub.typ.Name).Msg("ros1: rejected a publisher of a relayed topic: another type than the relay carries")
		in.Close()
		return
	}
	g.watch(&gateConn{in: in, robot: -1, relay: k, client: rl.From})
}

// commandType is robot r's actuator message type.
func commandType(r GateRobot) msgs.Type {
	if r.MultiArray() {
		return msgs.Float64MultiArray
	}
	return msgs.Float64
}

// Args returns the command-line arguments that make client i a node of
// its robot's namespace on its private clock, reading every relayed topic
// it does not publish from the bridge.
func (g *Gate) Args(i int) []string {
	c := g.conf.Clients[i]
	args := []string{"__name:=" + c.Name, "__ns:=/" + g.conf.Robots[c.Robot].Name, "/clock:=" + layout.ClockTopic(c.Name)}
	for _, rl := range g.relays {
		if rl.From != i {
			args = append(args, rl.Topic+":="+layout.RelayTopic(rl.Topic))
		}
	}
	return args
}

// RelayReceivers returns the set (bit i: client i, for the first 64
// clients) of the clients connected to relay k's topic, the publisher
// excluded. It does not allocate.
func (g *Gate) RelayReceivers(k int) uint64 {
	pub := g.relays[k].pub.Load()
	if pub == nil {
		return 0
	}
	g.mask = 0
	pub.EachSubscriber(g.onRecv)
	return g.mask &^ (1 << g.relays[k].From)
}

// RelayType is relay k's message type, known once its publisher
// connected (the recording converts its messages by it).
func (g *Gate) RelayType(k int) (msgs.Type, bool) {
	if k < 0 || k >= len(g.relays) {
		return msgs.Type{}, false
	}
	pub := g.relays[k].pub.Load()
	if pub == nil {
		return msgs.Type{}, false
	}
	return pub.typ, true
}

// RelayTo writes a message of relay k to client i's socket and reports
// whether it got there.
func (g *Gate) RelayTo(k, i int, frame []byte) bool {
	pub := g.relays[k].pub.Load()
	return pub != nil && pub.WriteTo(g.callers[i], frame)
}

// Env returns the environment client i needs (the master's URI).
func (g *Gate) Env(i int) []string {
	return []string{"ROS_MASTER_URI=" + g.conf.Node.conf.MasterURI, "ROS_HOSTNAME=127.0.0.1"}
}

// Fd is the gate's epoll set: readable when an actuator message arrived
// (call Drain).
func (g *Gate) Fd() int { return g.ep.Fd() }

// add takes a new publisher connection on robot j's actuator topic.
func (g *Gate) add(j int, in *InConn) {
	client := -1
	if i, ok := g.byCaller[in.Callerid]; ok && g.conf.Clients[i].Robot == j {
		client = i
	}
	g.watch(&gateConn{in: in, robot: j, relay: -1, client: client})
}

// watch adds a publisher connection to the gate's epoll set.
func (g *Gate) watch(gc *gateConn) {
	in := gc.in
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		in.Close()
		return
	}
	old := *g.conns.Load()
	if err := g.ep.Add(in.Fd(), uint64(in.Fd())); err != nil {
		g.conf.Log.Warn().Str("topic", in.Topic).Str("publisher", in.Callerid).Err(err).Msg("ros1: cannot watch publisher; closed")
		in.Close()
		return
	}
	next := append(slices.Clip(old), gc)
	g.conns.Store(&next)
	g.conf.Log.Info().Str("topic", in.Topic).Str("publisher", in.Callerid).Str("type", in.Type.Name).Int("client", gc.client).Msg("ros1: publisher connected")
}

func (g *Gate) remove(gc *gateConn, reason string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := *g.conns.Load()
	next := make([]*gateConn, 0, len(old))
	for _, o := range old {
		if o != gc {
			next = append(next, o)
		}
	}
	g.conns.Store(&next)
	_ = g.ep.Del(gc.in.Fd())
	gc.in.Close()
	ev := g.conf.Log.Info()
	if err != nil {
		ev = g.conf.Log.Warn().Err(err)
	}
	ev.Str("topic", gc.in.Topic).Str("publisher", gc.in.Callerid).Msg("ros1: publisher " + reason)
}

// Sample publishes robot j's sensor sample at virtual time t (obs =
// [positions..., velocities..., world sensors...]): its JointState, then
// each world sensor's message, to every subscriber that is not a client
// and to each client for which now is true; it calls delivered with each
// client each message reached. It does not allocate (after the first
// calls).
func (g *Gate) Sample(j int, t int64, obs []float64, now func(client int) bool, delivered func(client int)) {
	r := &g.conf.Robots[j]
	pos, vel := dynamics.SplitState(obs, len(r.Joints))
	g.frame = msgs.AppendJointState(g.frame[:0], 0, msgs.Epoch+t, "", r.Joints, pos, vel, nil)
	g.delFn, g.nowFn = delivered, now
	g.sensors[j].WriteIf(g.frame, g.onWants, g.onSent)
	for k := range r.Sensors {
		r.Sensors[k].Message(obs, &g.smsg)
		g.frame = msgs.AppendSensor(g.frame[:0], 0, msgs.Epoch+t, &g.smsg)
		g.world[j][k].WriteIf(g.frame, g.onWants, g.onSent)
	}
}

func (g *Gate) delivered(callerid string) {
	if i, ok := g.byCaller[callerid]; ok {
		g.delFn(i)
	}
}

// wants reports whether the subscriber callerid gets the sample being
// published: one that is not a client always does.
func (g *Gate) wants(callerid string) bool {
	i, ok := g.byCaller[callerid]
	return !ok || g.nowFn(i)
}

// Clock publishes the world's time t on /clock.
func (g *Gate) Clock(t int64) {
	g.frame = msgs.AppendClock(g.frame[:0], msgs.Epoch+t)
	g.clock.Write(g.frame)
}

// Diagnostics publishes a diagnostic_msgs/DiagnosticArray frame on
// /diagnostics.
func (g *Gate) Diagnostics(frame []byte) { g.diag.Write(frame) }

// ClientClock puts time t on client i's private clock, in its socket, and
// reports whether the client received it.
func (g *Gate) ClientClock(i int, t int64) bool {
	if g.private[i] == nil || g.clockGone[i].Load() {
		return false
	}
	g.frame = msgs.AppendClock(g.frame[:0], msgs.Epoch+t)
	g.want, g.got = g.callers[i], false
	g.private[i].WriteEach(g.frame, g.onWant)
	return g.got
}

// HangupFd is an epoll set readable when a client closed its connection
// to its private clock (call Hangups). The dispatch thread waits on it:
// a node closes the connection while it runs, so the wake that ends or
// interrupts that dispatch reports it before the node's next clock.
func (g *Gate) HangupFd() int { return g.hangups.Fd() }

// Hangups drops every private clock subscriber that closed its
// connection: the client no longer receives its clock (ClientClock).
func (g *Gate) Hangups() {
	// Each round takes every connection it reports out of the set; the
	// bound keeps a descriptor that would not leave from looping forever.
	for round := 0; round < 4; round++ {
		n, err := g.hangups.Wait(0)
		if err != nil || n == 0 {
			return
		}
		for i := 0; i < n; i++ {
			fd := int(g.hangups.Tag(i))
			found := false
			for _, p := range g.private {
				if p != nil && p.HungUp(fd) {
					found = true
					break
				}
			}
			if !found {
				// Not a listed connection's (dropped meanwhile): it must
				// not stay in the set.
				_ = g.hangups.Del(fd)
			}
		}
	}
}

// Drain reads every message that arrived. It calls cmd with each actuator
// command's robot, publishing client (-1 for a node that is not a client of
// the run: its message is rejected and logged once) and value, and msg with
// each relayed message's relay, publishing client and body (valid during
// the call only).
//
// It reads only the connections the gate's epoll set says are readable:
// reading every connection would cost a system call per publisher at
// every drain. With a single connection it reads that one without asking.
// A connection added after the set was looked at is read at the next
// drain (the set stays readable).
func (g *Gate) Drain(cmd func(robot, client int, cmd []float64), msg func(relay, client int, body []byte)) {
	conns := *g.conns.Load()
	g.curFn, g.msgFn = cmd, msg
	if len(conns) == 1 {
		// One connection (one node's commands): reading it costs what
		// asking the set would.
		if !conns[0].in.Closed() {
			g.read(conns[0])
		}
		return
	}
	// More ready connections than one wait returns take more rounds; each
	// round reads its connections until they would block, so the rounds
	// are bounded by the connections.
	for round := 0; round <= len(conns)/linux.EpollBatch+1; round++ {
		n, err := g.ep.Wait(0)
		if err != nil {
			for _, gc := range conns {
				g.read(gc)
			}
			return
		}
		for i := 0; i < n; i++ {
			fd := int(g.ep.Tag(i))
			for _, gc := range conns {
				// A connection closed in an earlier round may have left
				// its fd number to a new one, which is not in conns yet.
				if gc.in.Fd() == fd && !gc.in.Closed() {
					g.read(gc)
					break
				}
			}
		}
		if n < linux.EpollBatch {
			return
		}
	}
}

// read reads what connection gc has and drops it when it closed or its
// stream cannot be trusted.
func (g *Gate) read(gc *gateConn) {
	g.cur = gc
	open, err := gc.in.ReadFrames(g.onFrame)
	if !open {
		reason := "closed"
		if err != nil {
			reason = "dropped: its stream cannot be trusted"
		}
		g.remove(gc, reason, err)
	}
}

func (g *Gate) frameIn(body []byte) {
	gc := g.cur
	if gc.relay >= 0 {
		g.msgFn(gc.relay, gc.client, body)
		return
	}
	if rb := g.conf.Robots[gc.robot]; rb.MultiArray() {
		g.frameArray(gc, body, max(rb.Commands, 1))
		return
	}
	v, err := msgs.DecodeFloat64(body)
	switch {
	case err != nil:
		g.reject(gc, "malformed std_msgs/Float64: "+err.Error())
	case gc.client < 0:
		g.reject(gc, "the publisher is not a client of this run")
	default:
		g.vals[0] = v
		g.curFn(gc.robot, gc.client, g.vals[:1])
	}
}

// frameArray takes a std_msgs/Float64MultiArray command for a body of k
// values: fewer values leave the rest 0 (World.SetCommand), more are
// refused.
func (g *Gate) frameArray(gc *gateConn, body []byte, k int) {
	n, err := msgs.DecodeFloat64MultiArray(body, g.vals[:k])
	switch {
	case errors.Is(err, msgs.ErrTooMany):
		g.reject(gc, "oversized std_msgs/Float64MultiArray: "+err.Error())
	case err != nil:
		g.reject(gc, "malformed std_msgs/Float64MultiArray: "+err.Error())
	case gc.client < 0:
		g.reject(gc, "the publisher is not a client of this run")
	default:
		g.curFn(gc.robot, gc.client, g.vals[:n])
	}
}

func (g *Gate) reject(gc *gateConn, reason string) {
	key := gc.in.Callerid + "\x00" + reason
	if g.rejLog[key] {
		return
	}
	g.rejLog[key] = true
	g.conf.Log.Warn().Str("topic", gc.in.Topic).Str("publisher", gc.in.Callerid).Str("reason", reason).Msg("ros1: message rejected (reported once per publisher and reason)")
}

// Waiting returns, for each client, what it still lacks before virtual
// time may begin ("" when it is ready or not a ROS node; see Missing), and
// the other nodes (recorders, viewers) that subscribe to a topic of tcs
// but are not connected to it yet: a recorder started before the run gets
// it from the first message. It asks the master once, and logs nodes that
// publish a sensor topic.
func (g *Gate) Waiting() (clients []string, others string, err error) {
	graph, err := g.Graph()
	if err != nil {
		return nil, "", err
	}
	var late []string
	for _, p := range g.observed() {
		connected := p.Subscribers()
		for _, n := range graph.Subscribers[p.Topic()] {
			if _, client := g.byCaller[n]; !client && !slices.Contains(connected, n) {
				late = append(late, n+" subscribes to "+p.Topic()+" but is not connected yet")
			}
		}
	}
	late = append(late, g.lateToClients(graph)...)
	for _, s := range g.Intruders(graph) {
		if !g.rejLog[s] {
			g.rejLog[s] = true
			g.conf.Log.Warn().Str("node", s).Msg("ros1: a node other than tcs publishes a sensor topic; its messages reach subscribers ungated")
		}
	}
	out := make([]string, len(g.conf.Clients))
	for i, c := range g.conf.Clients {
		if c.ROS {
			out[i] = g.Missing(i, graph)
		}
	}
	return out, strings.Join(late, "; "), nil
}

// lateToClients lists the nodes other than tcs and its clients (a
// recorder) that subscribe to a topic a client publishes but are not
// connected to that client yet, as the client's getBusInfo says. A client
// whose bus cannot be read (its slave API fails) is not waited for; the
// first failure is logged.
func (g *Gate) lateToClients(graph *Graph) []string {
	var late []string
clients:
	for i, c := range g.conf.Clients {
		if !c.ROS {
			continue
		}
		id := g.callers[i]
		var subs map[string][]string
		for topic, pubs := range graph.Publishers {
			if !slices.Contains(pubs, id) {
				continue
			}
			for _, s := range graph.Subscribers[topic] {
				if _, client := g.byCaller[s]; client || s == g.conf.Node.Name() {
					continue
				}
				if subs == nil {
					var err error
					if subs, err = g.conf.Node.Outbound(id); err != nil {
						if key := "businfo " + id; !g.rejLog[key] {
							g.rejLog[key] = true
							g.conf.Log.Warn().Err(err).Str("client", c.Name).Msg("ros1: cannot tell whether the client's subscribers are connected; not waiting for them")
						}
						continue clients
					}
				}
				if !slices.Contains(subs[topic], s) {
					late = append(late, s+" subscribes to "+topic+" (published by client "+c.Name+") but is not connected yet")
				}
			}
		}
	}
	return late
}

// observed lists the publishers whose subscribers other than the clients
// are waited for: /clock, the sensor topics and /diagnostics.
func (g *Gate) observed() []*Publisher {
	out := append([]*Publisher{g.clock, g.diag}, g.sensors...)
	for _, ws := range g.world {
		out = append(out, ws...)
	}
	return out
}

// Missing describes what client i still lacks before virtual time may
// begin ("" when it is connected): its private clock, its robot's sensor
// topic if it subscribes to it, the actuator topic if it publishes it.
// graph is the master's graph (nil: not known).
func (g *Gate) Missing(i int, graph *Graph) string {
	c := g.conf.Clients[i]
	id := g.callers[i]
	robot := g.conf.Robots[c.Robot].Name
	command := g.conf.Robots[c.Robot].CommandName()
	var miss []string
	if !slices.Contains(g.private[i].Subscribers(), id) {
		miss = append(miss, "not subscribed to its clock "+layout.ClockTopic(c.Name))
	}
	if graph == nil {
		return strings.Join(miss, "; ")
	}
	if slices.Contains(graph.Subscribers[layout.SensorTopic(robot)], id) && !slices.Contains(g.sensors[c.Robot].Subscribers(), id) {
		miss = append(miss, "subscribed to "+layout.SensorTopic(robot)+" but not connected yet")
	}
	for k, sn := range g.conf.Robots[c.Robot].Sensors {
		topic := layout.WorldSensorTopic(robot, sn.Name)
		if slices.Contains(graph.Subscribers[topic], id) && !slices.Contains(g.world[c.Robot][k].Subscribers(), id) {
			miss = append(miss, "subscribed to "+topic+" but not connected yet")
		}
	}
	if slices.Contains(graph.Publishers[command], id) {
		found := false
		for _, gc := range *g.conns.Load() {
			found = found || gc.client == i
		}
		if !found {
			miss = append(miss, "publishes "+command+" but tcs is not connected to it yet")
		}
	}
	for k, rl := range g.relays {
		if rl.From == i {
			found := false
			for _, gc := range *g.conns.Load() {
				found = found || gc.relay == k
			}
			if !found {
				miss = append(miss, "relayed topic "+rl.Topic+": tcs is not connected to it yet (does the node advertise it?)")
			}
			continue
		}
		t := layout.RelayTopic(rl.Topic)
		if slices.Contains(graph.Subscribers[t], id) {
			pub := rl.pub.Load()
			if pub == nil || !slices.Contains(pub.Subscribers(), id) {
				miss = append(miss, "subscribed to "+t+" but not connected yet")
			}
		}
	}
	return strings.Join(miss, "; ")
}

// Graph is who publishes and subscribes what, as the master knows it.
type Graph struct {
	Publishers  map[string][]string // topic → node names
	Subscribers map[string][]string
}

// Graph asks the master for the graph.
func (g *Gate) Graph() (*Graph, error) {
	st, err := g.conf.Node.master.GetSystemState()
	if err != nil {
		return nil, fmt.Errorf("getSystemState from the master at %s: %w", g.conf.Node.conf.MasterURI, err)
	}
	gr := &Graph{Publishers: map[string][]string{}, Subscribers: map[string][]string{}}
	for _, e := range st.PublishedTopics {
		gr.Publishers[e.Name] = e.Nodes
	}
	for _, e := range st.SubscribedTopics {
		gr.Subscribers[e.Name] = e.Nodes
	}
	return gr, nil
}

// Unsubscribed hears every subscription a node ended through the embedded
// master (master.Master.WatchUnsubscribes): a client that unregisters its
// private clock is shutting down (rospy unregisters everything in one
// call before it closes its connections), and gets no clock from then on
// (ClientClock).
func (g *Gate) Unsubscribed(topic, callerID string) {
	i, ok := g.byCaller[callerID]
	if !ok || i >= len(g.private) || g.private[i] == nil || g.private[i].Topic() != topic {
		return
	}
	g.clockGone[i].Store(true)
}

// Refuse is the embedded master's check of a publisher registration (see
// master.Master.GuardPublishers): only tcs publishes /clock, the clients'
// clocks, the relay topics and the robots' sensor topics (joint states and
// world sensors). It logs each refusal.
func (g *Gate) Refuse(topic, callerID string) string {
	if callerID == g.conf.Node.Name() {
		return ""
	}
	why := ""
	switch {
	case topic == "/clock" || strings.HasPrefix(topic, "/tcs/"):
		why = "tcs publishes the time and its relays; a node that did would break the run's clock"
	default:
		for _, r := range g.conf.Robots {
			if slices.Contains(r.SensorTopics(), topic) {
				why = "it is robot " + r.Name + "'s sensor topic, which only the simulated world publishes"
			}
		}
	}
	if why != "" {
		g.conf.Log.Warn().Str("topic", topic).Str("publisher", callerID).Str("reason", why).
			Msg("ros1: refused a publisher: the master does not register it, so no subscriber hears it")
	}
	return why
}

// Intruders lists the nodes other than the bridge that publish one of a
// robot's sensor topics (layout.Robot.SensorTopics): their messages reach
// the clients ungated, so the run reports them.
func (g *Gate) Intruders(graph *Graph) []string {
	var out []string
	for _, r := range g.conf.Robots {
		for _, t := range r.SensorTopics() {
			for _, n := range graph.Publishers[t] {
				if n != g.conf.Node.Name() {
					out = append(out, n+" publishes "+t)
				}
			}
		}
	}
	return out
}

// Close closes every connection of the gate (not the node).
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	conns := *g.conns.Load()
	g.conns.Store(&[]*gateConn{})
	g.mu.Unlock()
	for _, gc := range conns {
		gc.in.Close()
	}
	if g.ep != nil {
		_ = g.ep.Close()
	}
	if g.hangups != nil {
		for _, p := range g.private {
			if p != nil {
				p.unwatchHangups()
			}
		}
		_ = g.hangups.Close()
	}
}
