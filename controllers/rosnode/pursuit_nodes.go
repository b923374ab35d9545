package rosnode

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
	"golang.org/x/sys/unix"
)

// Nodes names the bundled ROS nodes (tcs node NAME).
func Nodes() []string { return []string{"pd", "prey", "predator", "planner"} }

// Run runs the bundled node name with a ROS command line (see RunPD).
func Run(ctx context.Context, name string, args []string, logw io.Writer) error {
	switch name {
	case "pd":
		return RunPD(ctx, args, logw)
	case "prey":
		return RunPrey(ctx, args, logw)
	case "predator":
		return RunPredator(ctx, args, logw)
	case "planner":
		return RunPlanner(ctx, args, logw)
	}
	return fmt.Errorf("no bundled node %q (valid: %v)", name, Nodes())
}

// shipState is the newest joint_states of a ships robot: own and other
// ship, and the message's stamp (ROS time).
type shipState struct {
	own, other Body
	omega      Vec3
	stamp      time.Time
}

// pursuitNode is what the three pursuit nodes share: the node, its
// joint_states subscription and, for the periodic ones, its command
// publisher and ~rate.
type pursuitNode struct {
	hz     float64 // ~rate (default 100), when it commands
	cl     *commandLine
	n      *goroslib.Node
	latest atomic.Pointer[shipState]
	fresh  chan struct{} // a new joint_states arrived (buffer 1)
	sub    *goroslib.Subscriber
	pub    *goroslib.Publisher
	watch  *masterWatch
	gone   chan error
	stop   chan struct{}
	wg     sync.WaitGroup
}

// startPursuit parses the command line, starts the node, subscribes to
// joint_states and, when command is true (a periodic node), reads ~rate
// and advertises command (std_msgs/Float64MultiArray: force then torque).
func startPursuit(name string, args []string, logw io.Writer, command bool) (*pursuitNode, error) {
	cl, err := parseCommandLine(args, os.Getenv, name)
	if err != nil {
		return nil, fmt.Errorf("%s: command line: %w", name, err)
	}
	if err := cl.checkGoroslib(os.Args, os.Getenv("ROS_NAMESPACE")); err != nil {
		return nil, fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	jsTopic, err := cl.topic("joint_states")
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	n, err := cl.startNode(logw)
	if err != nil {
		return nil, err
	}
	p := &pursuitNode{cl: cl, n: n, fresh: make(chan struct{}, 1), gone: make(chan error, 1), stop: make(chan struct{})}
	if err := setParams(n, cl.params); err != nil {
		p.close()
		return nil, fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	if p.watch, err = newMasterWatch(n); err != nil {
		p.close()
		return nil, fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	p.sub, err = goroslib.NewSubscriber(goroslib.SubscriberConf{
		Node:  n,
		Topic: jsTopic,
		Callback: func(m *sensor_msgs.JointState) {
			if len(m.Position) < 9 || len(m.Velocity) < 9 {
				return // not a ships robot: keep the last state
			}
			s := &shipState{stamp: m.Header.Stamp}
			copy(s.own.Pos[:], m.Position[0:3])
			copy(s.other.Pos[:], m.Position[6:9])
			copy(s.own.Vel[:], m.Velocity[0:3])
			copy(s.omega[:], m.Velocity[3:6])
			copy(s.other.Vel[:], m.Velocity[6:9])
			p.latest.Store(s)
			p.watch.alive()
			select {
			case p.fresh <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		p.close()
		return nil, fmt.Errorf("node %s: subscribe to %s: %w", cl.fullName(), jsTopic, err)
	}
	if command {
		if p.hz, err = p.param("rate", 100); err != nil {
			p.close()
			return nil, err
		}
		cmdTopic, err := cl.topic("command")
		if err != nil {
			p.close()
			return nil, fmt.Errorf("node %s: %w", cl.fullName(), err)
		}
		p.pub, err = goroslib.NewPublisher(goroslib.PublisherConf{Node: n, Topic: cmdTopic, Msg: &std_msgs.Float64MultiArray{}})
		if err != nil {
			p.close()
			return nil, fmt.Errorf("node %s: advertise %s: %w", cl.fullName(), cmdTopic, err)
		}
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.watch.run(n, cl.master, p.stop, p.gone)
	}()
	return p, nil
}

func (p *pursuitNode) close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.wg.Wait()
	if p.pub != nil {
		p.pub.Close()
	}
	if p.sub != nil {
		p.sub.Close()
	}
	p.n.Close()
}

// settle blocks in short wall-clock sleeps until a sleep passed with no
// new joint_states (at most 20 times): under SCHED_FIFO on one CPU
// nothing else of a process runs while one of its goroutines computes (no
// time slicing between its threads), so a node that computes for long
// blocks a moment for goroslib's goroutines to send what it published and
// to take in what queued up in its sockets.
func (p *pursuitNode) settle() {
	for range 20 {
		select {
		case <-p.fresh:
		default:
		}
		time.Sleep(500 * time.Microsecond)
		select {
		case <-p.fresh:
			continue
		default:
		}
		return
	}
}

// command publishes force f and a torque damping the ship's spin.
func (p *pursuitNode) command(f Vec3, omega Vec3) {
	p.pub.Write(&std_msgs.Float64MultiArray{Data: []float64{f[0], f[1], f[2], -omega[0], -omega[1], -omega[2]}})
}

func (p *pursuitNode) param(key string, def float64) (float64, error) {
	v, err := paramFloat(p.n, p.cl.fullName()+"/"+key, def)
	if err != nil {
		return 0, fmt.Errorf("node %s: %w", p.cl.fullName(), err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("node %s: parameter %s/%s = %g: want a finite number", p.cl.fullName(), p.cl.fullName(), key, v)
	}
	return v, nil
}

// loop calls tick at rate Hz of ROS time until ctx is done or the master
// goes away.
func (p *pursuitNode) loop(ctx context.Context, tick func()) error {
	hz := p.hz
	if !(hz > 0 && hz <= maxRate) {
		return fmt.Errorf("node %s: rate %g: want a rate in (0, %g] Hz", p.cl.fullName(), hz, maxRate)
	}
	rate := p.n.TimeRate(time.Duration(1e9 / hz))
	for ctx.Err() == nil {
		tick()
		select {
		case <-rate.SleepChan():
		case <-ctx.Done():
		case err := <-p.gone:
			return fmt.Errorf("node %s: %w", p.cl.fullName(), err)
		}
	}
	return nil
}

// rosSeconds is a ROS time in seconds of virtual time (ROS time minus the
// 1 s epoch tcs adds).
func rosSeconds(t time.Time) float64 { return float64(t.UnixNano())/1e9 - 1 }

// RunPrey runs the prey (tcs node prey): at ~rate Hz (default 100) it
// publishes on command the force of DefaultPrey(~seed) (default 1) and a
// torque damping its spin.
func RunPrey(ctx context.Context, args []string, logw io.Writer) error {
	p, err := startPursuit("prey", args, logw, true)
	if err != nil {
		return err
	}
	defer p.close()
	seed, err := p.param("seed", 1)
	if err != nil {
		return err
	}
	prey := DefaultPrey(uint64(seed))
	p.n.Log(goroslib.LogLevelInfo, "prey: %g Hz, seed %d, flees under %g m with %g N", p.hz, prey.Seed, prey.FleeDist, prey.FleeForce)
	return p.loop(ctx, func() {
		s := p.latest.Load()
		if s == nil {
			p.command(Vec3{}, Vec3{})
			return
		}
		t := rosSeconds(p.n.TimeNow())
		p.command(prey.Force(t, s.own, s.other), s.omega)
		if logw != nil {
			// The experiment's distance samples (tcs experiment pursuit).
			fmt.Fprintf(logw, "distance %.4f %.5f\n", t, s.own.Pos.sub(s.other.Pos).norm())
		}
	})
}

// plan is a plan as the controller holds it.
type plan struct {
	steps   []PlanStep
	dt      float64
	arrived float64 // ROS seconds when it arrived: execution starts then
}

// RunPredator runs the predator's controller (tcs node predator): at ~rate
// Hz (default 100) it executes the newest plan from topic plan
// (std_msgs/Float64MultiArray, see EncodePlan) from the moment it arrived:
// DefaultTracker's feed-forward + feedback force, no-op (zero force) before
// the first plan and past a plan's end.
func RunPredator(ctx context.Context, args []string, logw io.Writer) error {
	p, err := startPursuit("predator", args, logw, true)
	if err != nil {
		return err
	}
	defer p.close()
	planTopic, err := p.cl.topic("plan")
	if err != nil {
		return fmt.Errorf("node %s: %w", p.cl.fullName(), err)
	}
	var cur atomic.Pointer[plan]
	var plans atomic.Int64
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{
		Node:  p.n,
		Topic: planTopic,
		Callback: func(m *std_msgs.Float64MultiArray) {
			_, dt, steps, ok := DecodePlan(m.Data)
			if !ok {
				return
			}
			cur.Store(&plan{steps: steps, dt: dt, arrived: rosSeconds(p.n.TimeNow())})
			plans.Add(1)
		},
	})
	if err != nil {
		return fmt.Errorf("node %s: subscribe to %s: %w", p.cl.fullName(), planTopic, err)
	}
	defer sub.Close()
	law := DefaultTracker()
	p.n.Log(goroslib.LogLevelInfo, "predator controller: %g Hz, plans from %s", p.hz, planTopic)
	defer func() { p.n.Log(goroslib.LogLevelInfo, "predator controller: %d plans received", plans.Load()) }()
	return p.loop(ctx, func() {
		s := p.latest.Load()
		pl := cur.Load()
		if s == nil || pl == nil {
			p.command(Vec3{}, Vec3{})
			return
		}
		p.command(law.Force(pl.steps, pl.dt, rosSeconds(p.n.TimeNow())-pl.arrived, s.own), s.omega)
	})
}

// processCPU is the process's CPU time, ns.
func processCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// RunPlanner runs the predator's planner (tcs node planner), a best-effort
// node: it plans from the newest joint_states with DefaultPlanner for
// ~budget seconds of its own process CPU time (default 1.0), publishes the
// plan on plan and, with ~callback false (default), plans again at once,
// as on a robot. With ~callback true it waits, as a callback-model
// simulator calls its planner, until the plan has been executed: a
// joint_states stamped at least a plan's length after the state it planned
// from.
func RunPlanner(ctx context.Context, args []string, logw io.Writer) error {
	p, err := startPursuit("planner", args, logw, false)
	if err != nil {
		return err
	}
	defer p.close()
	budget, err := p.param("budget", 1.0)
	if err != nil {
		return err
	}
	callback, err := p.param("callback", 0)
	if err != nil {
		if b, errB := p.n.ParamGetBool(p.cl.fullName() + "/callback"); errB == nil {
			callback, err = map[bool]float64{true: 1, false: 0}[b], nil
		}
	}
	if err != nil {
		return err
	}
	seed, err := p.param("seed", 1)
	if err != nil {
		return err
	}
	planTopic, err := p.cl.topic("plan")
	if err != nil {
		return fmt.Errorf("node %s: %w", p.cl.fullName(), err)
	}
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: p.n, Topic: planTopic, Msg: &std_msgs.Float64MultiArray{}})
	if err != nil {
		return fmt.Errorf("node %s: advertise %s: %w", p.cl.fullName(), planTopic, err)
	}
	defer pub.Close()
	pl := DefaultPlanner(DefaultWorld(), DefaultPrey(0))
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	p.n.Log(goroslib.LogLevelInfo, "planner: %g s CPU per plan, callback %v, plans on %s", budget, callback != 0, planTopic)
	var nplans, nevals int64
	defer func() {
		p.n.Log(goroslib.LogLevelInfo, "planner: %d plans, %d candidates evaluated", nplans, nevals)
	}()
	wait := func(cond func(*shipState) bool) error {
		for {
			if s := p.latest.Load(); s != nil && cond(s) {
				return nil
			}
			select {
			case <-p.fresh:
			case <-ctx.Done():
				return ctx.Err()
			case err := <-p.gone:
				return fmt.Errorf("node %s: %w", p.cl.fullName(), err)
			}
		}
	}
	limit := int64(budget * 1e9)
	p.settle()
	for ctx.Err() == nil {
		if err := wait(func(*shipState) bool { return true }); err != nil {
			return nilIfDone(ctx, err)
		}
		s := p.latest.Load()
		start := processCPU()
		steps, evals := pl.Plan(s.own, s.other, r, func() bool { return processCPU()-start < limit && ctx.Err() == nil })
		t0 := rosSeconds(s.stamp)
		pub.Write(&std_msgs.Float64MultiArray{Data: EncodePlan(t0, pl.Dt, steps)})
		// Under SCHED_FIFO on one CPU nothing else of this process runs
		// while this goroutine computes (no time slicing between its
		// threads): block a moment so that goroslib's goroutines send the
		// plan and take in the newest joint_states.
		p.settle()
		nplans++
		nevals += int64(evals)
		if nplans <= 3 || nplans%50 == 0 {
			p.n.Log(goroslib.LogLevelInfo, "planner: plan %d from the state at %.3f s: %d candidates, force %.2f N", nplans, t0, evals, steps[0].Force.norm())
		}
		if callback != 0 {
			end := t0 + float64(pl.Steps)*pl.Dt - 1e-6
			if err := wait(func(s *shipState) bool { return rosSeconds(s.stamp) >= end }); err != nil {
				return nilIfDone(ctx, err)
			}
		}
	}
	return nil
}

// nilIfDone is nil when ctx is done (the node was asked to stop), else err.
func nilIfDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
