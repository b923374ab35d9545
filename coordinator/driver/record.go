package driver

import (
	"path/filepath"
	"strconv"

	"github.com/tcs-robotics/tcs/bridge/layout"
	"github.com/tcs-robotics/tcs/coordinator"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/msgs/cdr"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// RecordFile is the name of a run's recording in its output folder.
const RecordFile = "run.mcap"

// recordStatusEvery is the virtual period of the recording's
// /tcs/run_status and of the clients' status records on /tcs/progress,
// and how often a StatusPublisher is handed the live status.
const recordStatusEvery = 10_000_000

// StatusPublisher is implemented by a Bridge that publishes the run's
// live status (bridge/ros1 and bridge/ros2: /tcs/status). The dispatch
// thread hands it the status at virtual time 0, before the clients start,
// and then every recordStatusEvery of virtual time, recording or not; it
// publishes as often as it sees fit, and must neither block nor allocate.
type StatusPublisher interface {
	PublishStatus(st *simcontrol.Status)
}

// RelayTyper is implemented by a Bridge that knows the ROS 1 type of a
// relayed topic once its publisher connected (bridge/ros1.Gate): the
// recording converts relayed messages to CDR by it.
type RelayTyper interface {
	RelayType(k int) (msgs.Type, bool)
}

// recHook is the run's recording (DIR/run.mcap): what the dispatch
// thread needs to record without allocating. Log times are virtual time t
// (ns since virtual time began, /clock's time minus msgs.Epoch); publish
// times are the publisher's progress (the world's t for what the world
// publishes).
type recHook struct {
	rec         *record.Recorder
	step        uint16 // the stepExpander's id
	clock       uint16
	progress    uint16
	status      uint16
	diag        uint16
	sensor      []uint16 // per robot
	command     []uint16 // per robot
	multi       []bool   // per robot: command as Float64MultiArray
	joints      [][]string
	relay       []int32 // per relay: channel id + 1, 0 not yet added
	relayConv   []*record.Converter
	relayBad    []bool
	nativeCh    []uint32 // native message channels seen ...
	nativeID    []uint16 // ... and their recording channels
	cmdPub      [maxSlots]int64
	statusNext  int64
	driftMax    int64 // since the last status
	prog        record.ClientProgress
	st          record.RunStatus
	live        StatusPublisher // nil: the bridge publishes no live status
	liveSt      simcontrol.Status
	convErrs    int64
	diagFailed  bool
	clientNames []string
	robotNames  []string
}

// recOpen creates OutDir/run.mcap and its fixed channels (nothing with
// RunConf.NoRecord).
func (r *runner) recOpen() error {
	r.recH.live, _ = r.bridge.(StatusPublisher)
	r.recH.statusNext = recordStatusEvery
	if r.rc.NoRecord {
		return nil
	}
	rec, err := record.Create(record.Conf{Path: filepath.Join(r.rc.OutDir, RecordFile), ROSDistro: r.sc.ROS.ROS2Distro()})
	if err != nil {
		return err
	}
	h := &r.recH
	h.rec = rec
	add := func(c record.Channel) uint16 {
		id, aerr := rec.AddChannel(c)
		if aerr != nil && err == nil {
			err = aerr
		}
		return id
	}
	h.clock = add(record.Clock.Channel(record.TopicClock))
	steps := &stepExpander{clock: h.clock}
	var stepChans []uint16
	for j, rb := range r.sc.Robots {
		h.sensor = append(h.sensor, add(record.JointState.Channel(layout.SensorTopic(rb.Name))))
		stepChans = append(stepChans, h.sensor[j])
		ss := dynamics.Sensors(r.world, j)
		var chans []uint16
		for _, s := range ss {
			chans = append(chans, add(record.SensorChannel(layout.WorldSensorTopic(rb.Name, s.Name), s.Kind)))
		}
		stepChans = append(stepChans, chans...)
		steps.world = append(steps.world, ss)
		steps.worldCh = append(steps.worldCh, chans)
		multi := r.world.CommandLen(j) != 1 || rb.CommandTopic != ""
		h.multi = append(h.multi, multi)
		k := record.Float64
		if multi {
			k = record.Float64MultiArray
		}
		h.command = append(h.command, add(k.Channel(rb.Command())))
		h.joints = append(h.joints, dynamics.JointNames(r.world, r.sc.Dynamics.Model, j))
		h.robotNames = append(h.robotNames, rb.Name)
	}
	if r.bridge != nil {
		h.diag = add(record.DiagnosticArray.Channel(record.TopicDiagnostics))
	}
	if err == nil {
		steps.sensor, steps.joints = h.sensor, h.joints
		h.step, err = rec.AddExpander(steps, append([]uint16{h.clock}, stepChans...)...)
	}
	h.progress = add(record.Progress.Channel(record.TopicProgress))
	h.status = add(record.Status.Channel(record.TopicRunStatus))
	h.relay = make([]int32, len(r.sc.ROS.Relay))
	h.relayConv = make([]*record.Converter, len(r.sc.ROS.Relay))
	h.relayBad = make([]bool, len(r.sc.ROS.Relay))
	for _, c := range r.clients {
		h.clientNames = append(h.clientNames, c.conf.Name)
	}
	if err != nil {
		_ = rec.Close(nil, nil)
		h.rec = nil
	}
	return err
}

// recStep records the world's step boundary t: /clock, each robot's
// JointState and world sensors (one record each per robot and step,
// whatever number of subscribers it reached: those are counted in the
// clients' deliveries), and the status when due.
func (r *runner) recStep(t int64) {
	h := &r.recH
	if t == 0 && h.live != nil {
		// Before the clients start: nothing charged yet.
		h.liveSt = simcontrol.Status{State: r.simState()}
		h.live.PublishStatus(&h.liveSt)
	}
	if h.rec == nil {
		if h.live != nil && t >= h.statusNext {
			r.recStatus(t)
			h.statusNext = (t/recordStatusEvery + 1) * recordStatusEvery
		}
		return
	}
	// The observations go raw; the writer goroutine encodes the records
	// (stepExpander): 3 records a step cost the dispatch thread about
	// 1.5 µs a step encoded here.
	if w := h.rec.BeginRaw(h.step, t, t); w != nil {
		for j := range h.sensor {
			if j < len(r.obs) {
				w.Float64s(r.obs[j][:r.obsN[j]])
			} else {
				w.Len(0)
			}
		}
		h.rec.Commit()
	}
	if t >= h.statusNext {
		r.recStatus(t)
		h.statusNext = (t/recordStatusEvery + 1) * recordStatusEvery
	}
}

// stepExpander writes a step's records from recStep's raw record, on the
// recording's writer goroutine: /clock, then each robot's JointState and
// world sensors from its observation.
type stepExpander struct {
	clock   uint16
	sensor  []uint16
	joints  [][]string
	world   [][]sensor.Sensor // robot j's world sensors ...
	worldCh [][]uint16        // ... and their channels
	obs     []float64
	msg     sensor.Message
}

// Expand implements record.Expander.
func (e *stepExpander) Expand(raw *cdr.Reader, t, _ int64, out *record.Batch) {
	record.EncodeClock(out.Begin(e.clock, t, t), msgs.Epoch+t)
	out.Commit()
	for j, ch := range e.sensor {
		n := raw.Len(8)
		e.obs = e.obs[:0]
		for range n {
			e.obs = append(e.obs, raw.Float64())
		}
		pos, vel := dynamics.SplitState(e.obs, len(e.joints[j]))
		record.EncodeJointState(out.Begin(ch, t, t), msgs.Epoch+t, e.joints[j], pos, vel)
		out.Commit()
		for k, s := range e.world[j] {
			s.Message(e.obs, &e.msg)
			record.EncodeSensor(out.Begin(e.worldCh[j][k], t, t), msgs.Epoch+t, &e.msg)
			out.Commit()
		}
	}
}

// recStatus records /tcs/run_status and every client's progress at t,
// and hands the live status to the bridge (StatusPublisher).
func (r *runner) recStatus(t int64) {
	h := &r.recH
	var clients int64
	for i, c := range r.clients {
		clients += c.ran
		if h.rec == nil {
			continue
		}
		st := r.pol.Stats(i)
		h.prog = record.ClientProgress{Event: record.EventStatus, Client: h.clientNames[i], Robot: h.robotNames[c.robot],
			WorldNs: t, ProgressNs: st.Progress, CPUNs: c.ran, Activations: st.Activations, DeadlineMisses: st.Misses}
		if w := h.rec.Begin(h.progress, t, t); w != nil {
			h.prog.Encode(w)
			h.rec.Commit()
		}
	}
	wall := int64(0)
	if r.wallStart > 0 {
		wall = r.clk.Monotonic() - r.wallStart
	}
	h.st = record.RunStatus{WorldNs: t, DriftNs: r.pol.Drift(), DriftMaxNs: h.driftMax, DriftMaxRunNs: r.drift.Max(),
		CoordinatorNs: r.coordinatorSoFar(), ClientsNs: clients, DynamicsNs: r.dynNs, Dispatches: r.pol.Dispatches(),
		DeadlineMisses: r.missesAll, WallNs: wall}
	h.driftMax = 0
	if h.rec != nil {
		h.st.RecordingDropped = h.rec.Dropped()
		if w := h.rec.Begin(h.status, t, t); w != nil {
			h.st.Encode(w)
			h.rec.Commit()
		}
	}
	r.liveStatus(r.simState())
}

// liveStatus hands the bridge (StatusPublisher) the status recStatus
// computed last, with state. Its wall time leaves the pauses out, as the
// summary's real-time factor does.
func (r *runner) liveStatus(state simcontrol.State) {
	h := &r.recH
	if h.live == nil {
		return
	}
	st := &h.st
	wall := st.WallNs
	if wall > 0 {
		wall -= r.pausedSoFar(r.wallStart + wall)
	}
	h.liveSt = simcontrol.Status{State: state, TimeNs: st.WorldNs, WallNs: wall, DriftNs: st.DriftNs,
		DriftMaxNs: st.DriftMaxNs, DriftMaxRunNs: st.DriftMaxRunNs, CoordinatorNs: st.CoordinatorNs,
		ClientsNs: st.ClientsNs, DynamicsNs: st.DynamicsNs, Dispatches: st.Dispatches, Misses: st.DeadlineMisses}
	h.live.PublishStatus(&h.liveSt)
}

// recDrift keeps the largest Δ since the last status.
func (r *runner) recDrift(d int64) {
	if d > r.recH.driftMax {
		r.recH.driftMax = d
	}
}

// recEvent records client c's activation (due, begun at begin) or
// deadline miss, at the world's time.
func (r *runner) recEvent(c int, event uint8, due, begin int64) {
	h := &r.recH
	if h.rec == nil {
		return
	}
	st := r.pol.Stats(c)
	t := r.pol.Now()
	h.prog = record.ClientProgress{Event: event, Client: h.clientNames[c], Robot: h.robotNames[r.clients[c].robot],
		WorldNs: t, ProgressNs: st.Progress, CPUNs: r.clients[c].ran, Activations: st.Activations,
		DeadlineMisses: st.Misses, DueNs: due, BeginNs: begin, DeadlineMissesHost: st.HostMisses}
	if w := h.rec.Begin(h.progress, t, st.Progress); w != nil {
		h.prog.Encode(w)
		h.rec.Commit()
	}
}

// recCommand notes the publish time (client i's progress) of the actuator
// command kept in slot.
func (r *runner) recCommand(slot, i int) {
	if r.recH.rec != nil && slot >= 0 && slot < maxSlots {
		r.recH.cmdPub[slot] = r.pol.Progress(i)
	}
}

// recApply records the command of a (KindApply) at the virtual time the
// world applies it.
func (r *runner) recApply(a coordinator.Action) {
	h := &r.recH
	if h.rec == nil || a.Robot < 0 || a.Robot >= len(h.command) {
		return
	}
	vals := r.cmd[a.Slot][:r.cmdN[a.Slot]]
	if w := h.rec.Begin(h.command[a.Robot], r.world.Now(), h.cmdPub[a.Slot]); w != nil {
		if h.multi[a.Robot] {
			record.EncodeFloat64MultiArray(w, vals)
		} else {
			v := 0.0
			if len(vals) > 0 {
				v = vals[0]
			}
			record.EncodeFloat64(w, v)
		}
		h.rec.Commit()
	}
}

// recRelay records a message client-to-client on relay k, published at
// virtual time t (the publisher's progress), converted from ROS 1 by the
// publisher's definition. The first message of a relay adds its channel.
func (r *runner) recRelay(k int, t int64, body []byte) {
	h := &r.recH
	if h.rec == nil || k < 0 || k >= len(h.relay) || h.relayBad[k] {
		return
	}
	if h.relay[k] == 0 {
		typer, ok := r.bridge.(RelayTyper)
		if !ok {
			h.relayBad[k] = true
			return
		}
		typ, ok := typer.RelayType(k)
		if !ok {
			return
		}
		conv, err := record.NewConverter(typ.Name, typ.Definition)
		var id uint16
		if err == nil {
			id, err = h.rec.AddChannel(record.Channel{Topic: r.sc.ROS.Relay[k].Topic, Type: conv.ROS2Name,
				Definition: conv.ROS2Definition, Metadata: record.ROS1Metadata(typ)})
		}
		if err != nil {
			h.relayBad[k] = true
			r.log.Warn().Str("topic", r.sc.ROS.Relay[k].Topic).Err(err).Msg("record: relayed topic not recorded")
			return
		}
		h.relay[k], h.relayConv[k] = int32(id)+1, conv
	}
	w := h.rec.Begin(uint16(h.relay[k]-1), t, t)
	if w == nil {
		return
	}
	if err := h.relayConv[k].ToCDR(w, body); err != nil {
		h.rec.Abort()
		if h.convErrs == 0 {
			r.log.Warn().Str("topic", r.sc.ROS.Relay[k].Topic).Err(err).Msg("record: a relayed message does not match its definition; not recorded (logged once)")
		}
		h.convErrs++
		return
	}
	h.rec.Commit()
}

// recNative records a native client's message on channel ch published at
// t, as std_msgs/msg/Float64MultiArray on /tcs/channel/<ch>.
func (r *runner) recNative(ch uint32, t int64, vals []float64) {
	h := &r.recH
	if h.rec == nil {
		return
	}
	id, found := uint16(0), false
	for k, c := range h.nativeCh {
		if c == ch {
			id, found = h.nativeID[k], true
			break
		}
	}
	if !found {
		nid, err := h.rec.AddChannel(record.Float64MultiArray.Channel("/tcs/channel/" + strconv.FormatUint(uint64(ch), 10)))
		if err != nil {
			return
		}
		h.nativeCh, h.nativeID = append(h.nativeCh, ch), append(h.nativeID, nid)
		id = nid
	}
	if w := h.rec.Begin(id, t, t); w != nil {
		record.EncodeFloat64MultiArray(w, vals)
		h.rec.Commit()
	}
}

// recDiag records a /diagnostics frame (ROS 1, length prefix first)
// published at t.
func (r *runner) recDiag(t int64, frame []byte) {
	h := &r.recH
	if h.rec == nil || h.diagFailed || len(frame) < 4 {
		return
	}
	w := h.rec.Begin(h.diag, t, t)
	if w == nil {
		return
	}
	if err := record.DiagnosticArray.Conv.ToCDR(w, frame[4:]); err != nil {
		h.rec.Abort()
		h.diagFailed = true
		r.log.Warn().Err(err).Msg("record: /diagnostics not recorded")
		return
	}
	h.rec.Commit()
}

// recFinish drains the recording, puts its counts in sum, and closes it
// with sum as the attachment summary.json and the run's metadata.
func (r *runner) recFinish(sum *report.Summary) error {
	h := &r.recH
	if h.live != nil {
		// The last figures, as the run ended: a state change is published
		// at once, and stays latched until the bridge closes.
		h.st.WorldNs, h.st.DriftNs, h.st.DriftMaxRunNs = r.pol.Now(), r.pol.Drift(), r.drift.Max()
		h.st.CoordinatorNs, h.st.DynamicsNs, h.st.Dispatches, h.st.DeadlineMisses = r.coordNs, r.dynNs, r.pol.Dispatches(), r.missesAll
		h.st.ClientsNs = 0
		for _, c := range r.clients {
			h.st.ClientsNs += c.ran
		}
		if r.wallStart > 0 {
			h.st.WallNs = r.wallEnd - r.wallStart
		}
		r.liveStatus(simcontrol.Stopped)
	}
	if h.rec == nil {
		return nil
	}
	h.rec.Drain()
	st := h.rec.Stats()
	rs := &report.Recording{File: h.rec.Path(), Messages: st.Written}
	for id := range st.Records {
		rs.Dropped += st.Dropped[id]
		rs.Topics = append(rs.Topics, report.RecordedTopic{Messages: st.Records[id], Dropped: st.Dropped[id]})
	}
	for id, c := range h.rec.Channels() {
		rs.Topics[id].Topic, rs.Topics[id].Type = c.Topic, c.Type
	}
	sum.Recording = rs
	if rs.Dropped > 0 || st.Lost > 0 {
		r.log.Warn().Int64("dropped", rs.Dropped).Int64("lost", st.Lost).Str("file", rs.File).Msg("record: messages missing from the recording")
	}
	r.log.Info().Int64("messages", rs.Messages).Int64("dropped", rs.Dropped).Str("file", rs.File).Msg("recording closed")
	js, err := sum.JSON()
	var att []record.Attachment
	if err == nil {
		att = append(att, record.Attachment{Name: "summary.json", MediaType: "application/json", LogTime: r.pol.Now(), Data: js})
	}
	cerr := h.rec.Close(att, r.recMeta(sum.Ended))
	h.rec = nil
	return cerr
}

// recAbort closes a recording recFinish did not (a run that failed before
// its summary): the file stays valid, without summary.json.
func (r *runner) recAbort() {
	h := &r.recH
	if h.rec == nil {
		return
	}
	if err := h.rec.Close(nil, r.recMeta("")); err != nil {
		r.log.Warn().Err(err).Msg("record: close")
	}
	h.rec = nil
}

func (r *runner) recMeta(ended string) map[string]string {
	return map[string]string{
		"scenario":          r.sc.Name,
		"mode":              r.sc.Mode.String(),
		"ended":             ended,
		"duration_ns":       strconv.FormatInt(r.sc.Duration.Nanoseconds(), 10),
		"virtual_ns":        strconv.FormatInt(r.pol.Now(), 10),
		"log_time":          "virtual ns since virtual time began (ROS time in messages = log time + ros_epoch_ns)",
		"ros_epoch_ns":      strconv.FormatInt(msgs.Epoch, 10),
		"status_every_ns":   strconv.Itoa(recordStatusEvery),
		"recording_dropped": strconv.FormatInt(r.recH.rec.Dropped(), 10),
	}
}
