//go:build ros2

package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// Real, unmodified ROS 2 nodes (rclcpp and rclpy, Jazzy, rmw_cyclonedds_cpp)
// as tcs clients over the ros2 transport, with nothing but the usual ROS 2
// environment (setup.bash, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST): tcs
// gives its clients what else they need. The nodes are in
// test/controllers/ros2 (rclcpp_pd.cpp, rclpy_pd.py, rclpy_planner.py).
// They skip, saying why, without a ROS 2 Jazzy (see rosenv.NewROS2).

var (
	rclcppOnce sync.Once
	rclcppBin  string
	rclcppErr  error
)

// ros2Real returns the ROS 2 environment, the tcs built with the ros2 tag
// and the rclcpp test node, built once with the install's CMake packages.
func ros2Real(t *testing.T) (env *rosenv.Env, tcs, rclcpp string) {
	t.Helper()
	env = rosenv.NewROS2(t)
	needRT(t)
	for _, tool := range []string{"cmake", "g++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s missing (apt-get install cmake g++)", tool)
		}
	}
	dir := ros2Build(t)
	rclcppOnce.Do(func() {
		src, err := filepath.Abs("controllers/ros2")
		if err != nil {
			rclcppErr = err
			return
		}
		build := filepath.Join(dir, "rclcpp-build")
		for _, argv := range [][]string{
			{"cmake", "-S", src, "-B", build, "-DCMAKE_PREFIX_PATH=" + env.Get("AMENT_PREFIX_PATH"), "-DCMAKE_BUILD_TYPE=Release"},
			{"cmake", "--build", build, "-j", "2"},
		} {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env.Vars
			if out, err := cmd.CombinedOutput(); err != nil {
				rclcppErr = fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
				return
			}
		}
		rclcppBin = filepath.Join(build, "rclcpp_pd")
	})
	if rclcppErr != nil {
		t.Fatalf("build the rclcpp test node: %v", rclcppErr)
	}
	return env, filepath.Join(dir, "tcs"), rclcppBin
}

// ros2Node is a test node and how it runs.
type ros2Node struct {
	name   string
	cmd    func(rclcpp string) []string
	period time.Duration
	step   string // the world's step
	// lag: the node computes in its joint_states callback. tcs hands a
	// periodic node the sample at k·P before the clock of its activation
	// at k·P (so that a timer due at k·P sees that sample), so such a
	// callback reads the clock of the activation before: its tick for the
	// sample at k·P falls in period k−1, the end instant's in the last
	// period before it.
	lag bool
}

func rclpyScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("controllers/ros2", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ros2Scenario writes a pendulum scenario (quantum and step 1 ms) with one
// periodic ROS 2 client pd running argv, over the ros2 transport.
func ros2Scenario(t *testing.T, name, duration string, period time.Duration, argv []string, extraClients string) string {
	t.Helper()
	var q []string
	for _, a := range argv {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return pendulumScenario(t, name, duration, "wall_limit: 4m\nros:\n  transport: ros2\n  distro: jazzy\n", fmt.Sprintf(`      - name: pd
        cmd: [%s]
        api: ros
        class: periodic
        period: %s
        priority: 20
`, strings.Join(q, ", "), period)+extraClients)
}

// ticks reads the ROS times of the "tick <ROS time ns> ..." lines of a node's log, as virtual
// time (ROS time less the epoch).
func ticks(t *testing.T, log string) []int64 {
	t.Helper()
	var out []int64
	for _, l := range logLines(t, log, "tick ") {
		var ns int64
		if _, err := fmt.Sscanf(l, "tick %d", &ns); err == nil {
			out = append(out, ns-msgs.Epoch)
		}
	}
	return out
}

// checkTicks checks that every period [k·P, (k+1)·P) from k = 2 to the
// run's end instant (k·P = end, the last activation of a completed run)
// saw exactly one activation of the node in its ROS time (no
// timer callback skipped or run twice); with exact, that each began with
// the node's clock at k·P exactly. Period 1 is left out: a node that read
// its clock before the first clock message (ROS time 0) catches up there
// (the sleep_until loop runs once per period from the ROS time it read to
// its clock at 1.005 s: twice when it read the first clock, about 200
// times when it read 0), as rospy and roscpp do (test/controllers/README.md,
// "Start-up"). It returns the number of periods checked.
//
// In consistent mode an rclcpp node's ticks are not at k·P exactly: its
// clock thread and its executor thread are two threads, and the clock the
// timer callback reads is its progress when tcs last dispatched it (a
// private clock carries the client's progress), k·P plus the few µs of
// CPU it used before (seen up to 0.34 ms); an rclpy node, whose clock and
// timer share one thread, ticks at k·P exactly.
func checkTicks(t *testing.T, ts []int64, period, end int64, exact bool, missed map[int64]bool) int {
	t.Helper()
	off := 0
	for _, v := range ts {
		if exact && v >= 2*period && v < end+period && v%period != 0 {
			if off < 5 {
				t.Errorf("activation in period %d began at virtual %d ns, not at k·P = %d", v/period, v, v/period*period)
			}
			off++
		}
	}
	skipped, doubled := tickPeriods(ts, period, end)
	// A period whose activation tcs saw miss its deadline may have no
	// tick: rcl's timer, called more than a period late, calls back once
	// and skips the periods it is late for. The miss is the node's (or the
	// host's), bounded by checkNodeMisses; a period without a tick and
	// without a miss is not.
	var merged []int64
	skipped = slices.DeleteFunc(skipped, func(k int64) bool {
		if missed[k] {
			merged = append(merged, k)
			return true
		}
		return false
	})
	if len(merged) > 0 {
		t.Logf("periods without a tick after their activation missed its deadline (rcl skipped them): %d %v", len(merged), merged[:min(len(merged), 10)])
	}
	if len(skipped) > 0 || len(doubled) > 0 {
		t.Errorf("periods of %v with no activation: %d %v; with several: %d %v", time.Duration(period),
			len(skipped), skipped[:min(len(skipped), 10)], len(doubled), doubled[:min(len(doubled), 10)])
	}
	if off > 0 {
		t.Errorf("%d activations began off k·P", off)
	}
	return int(end/period) - 1
}

// missedPeriods reads the deadline misses of the run's recording (of
// client; "": of any) and returns the periods k (due k·period) whose
// activation missed.
func missedPeriods(t *testing.T, mcapPath, client string, period int64) map[int64]bool {
	t.Helper()
	missed := map[int64]bool{}
	for _, m := range recordedMisses(t, mcapPath, client) {
		missed[m.due/period] = true
	}
	return missed
}

// recordedMiss is one deadline miss of a run's recording: when the
// activation was due (ns) and whether it came while its robot had lost CPU
// to the host (the event raised the client's deadline_misses_host).
type recordedMiss struct {
	due  int64
	host bool
}

// recordedMisses reads the run's recording and returns the deadline
// misses of client ("": of any), in the recording's order.
func recordedMisses(t *testing.T, mcapPath, client string) []recordedMiss {
	t.Helper()
	var misses []recordedMiss
	hostSeen := map[string]int64{}
	_, err := record.Read(mcapPath, func(ch *record.ReadChannel, m *mcap.Message) error {
		if ch.Topic != record.TopicProgress {
			return nil
		}
		var p record.ClientProgress
		if err := p.Decode(m.Data); err != nil {
			return err
		}
		if p.Event == record.EventMiss && (client == "" || p.Client == client) {
			misses = append(misses, recordedMiss{due: p.DueNs, host: p.DeadlineMissesHost > hostSeen[p.Client]})
		}
		hostSeen[p.Client] = max(hostSeen[p.Client], p.DeadlineMissesHost)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return misses
}

// catchUpMiss reads the deadline misses of the run's recording (as many
// as the summary's, misses) and returns 1 when one of them is the
// start-up catch-up's (checkTicks): activation 1 (due P) of a node whose
// log shows several ticks in period 1. A node that read its clock before
// the first clock message runs its sleep_until loop once per period from
// ROS time 0 up to its clock (about 200 times in period 1 when it read 0
// against the epoch of 1 s); that CPU is the node's, charged to its
// activation 1, which misses when the loop takes longer than a period on
// the machine running the test. Any other miss is left to the caller's
// count.
func catchUpMiss(t *testing.T, mcapPath string, ticks []int64, period, misses int64) int64 {
	t.Helper()
	recorded := recordedMisses(t, mcapPath, "")
	if int64(len(recorded)) != misses {
		t.Errorf("%d deadline misses recorded, %d in the summary", len(recorded), misses)
	}
	inFirst := 0
	for _, v := range ticks {
		if v >= period && v < 2*period {
			inFirst++
		}
	}
	if inFirst > 1 && slices.ContainsFunc(recorded, func(m recordedMiss) bool { return m.due == period }) {
		t.Logf("activation 1 missed its deadline running the start-up catch-up: %d ticks in period 1", inFirst)
		return 1
	}
	return 0
}

// tickPeriods lists the periods k = 2 .. end/P with no tick and with
// several.
func tickPeriods(ts []int64, period, end int64) (skipped, doubled []int64) {
	per := map[int64]int{}
	for _, v := range ts {
		if v >= 2*period && v < end+period {
			per[v/period]++
		}
	}
	for k := int64(2); k <= end/period; k++ {
		switch n := per[k]; {
		case n == 0:
			skipped = append(skipped, k)
		case n > 1:
			doubled = append(doubled, k)
		}
	}
	return skipped, doubled
}

// checkCommands reads the run's recording: every command is applied in the
// world at exactly the virtual time its publisher published it (its
// progress then: immediate actuation); in consistent mode that is after
// the activation's instant k·P by the CPU the node used before publishing
// (CPU charged), within the period; in lockstep exactly at k·P (computation
// costs no virtual time). It returns the number of commands.
func checkCommands(t *testing.T, mcapPath string, period int64, mode string) int {
	t.Helper()
	n, late, early, off := 0, 0, 0, 0
	var charged []int64
	_, err := record.Read(mcapPath, func(ch *record.ReadChannel, m *mcap.Message) error {
		if ch.Topic != "/arm/command" {
			return nil
		}
		n++
		pub, at := int64(m.PublishTime), int64(m.LogTime)
		if pub < period {
			return nil // start-up
		}
		if at != pub {
			if off < 5 {
				t.Errorf("command published at %d ns applied at %d ns", pub, at)
			}
			off++
		}
		into := pub % period
		switch mode {
		case "consistent":
			if into == 0 {
				if early < 5 {
					t.Logf("command published at %d ns, exactly k·P", pub)
				}
				early++
			}
			charged = append(charged, into)
		case "lockstep":
			if into != 0 {
				if late < 5 {
					t.Logf("command published at %d ns, %d ns after k·P", pub, into)
				}
				late++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if off > 0 {
		t.Errorf("%d of %d commands not applied at their publish instant", off, n)
	}
	if early > 0 {
		t.Errorf("consistent: %d of %d commands stamped exactly at k·P: the node's CPU before publishing was not charged", early, n)
	}
	if late > 0 {
		t.Errorf("lockstep: %d of %d commands stamped after k·P: computation charged", late, n)
	}
	if len(charged) > 0 {
		slices.Sort(charged)
		t.Logf("command stamp − k·P (CPU charged before publishing): p50 %v, p99 %v, max %v",
			time.Duration(charged[len(charged)/2]), time.Duration(charged[len(charged)*99/100]), time.Duration(charged[len(charged)-1]))
	}
	return n
}

// A robot whose command_topic names a ros2_control forward command
// controller's topic takes its command there as a Float64MultiArray: the
// rclpy controller, remapped to publish on it, balances the pendulum, and
// the recording holds its commands under that name.
func TestROS2CommandTopic(t *testing.T) {
	env, tcs, _ := ros2Real(t)
	topic := "/forward_effort_controller/commands"
	cmd := []string{rosenv.Python, rclpyScript(t, "rclpy_pd.py"), "--ros-args", "-p", "rate:=100.0", "-p", "array:=true", "-r", "command:=" + topic}
	path := ros2Scenario(t, "ros2-command-topic", "5s", 10*time.Millisecond, cmd, "")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "  - name: arm\n", "  - name: arm\n    command_topic: "+topic+"\n", 1)
	if y == string(b) {
		t.Fatalf("no robot arm in %s", path)
	}
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	old := tcsBin
	tcsBin = tcs
	defer func() { tcsBin = old }()
	r := runTCSEnv(t, env.Vars, 5*time.Minute, path)
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		if c := r.sum.Clients; len(c) > 0 {
			t.Logf("log of pd:\n%s", tail(c[0].Log, 30))
		}
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	checkBalanced(t, r.sum, 0)
	var n int64
	for _, tp := range r.sum.Recording.Topics {
		if tp.Topic == topic {
			n = tp.Messages
		}
	}
	if n < 400 {
		t.Errorf("the recording holds %d commands on %s, want one per activation (~500)", n, topic)
	}
}

// Real rclcpp and rclpy controllers on the pendulum in the three modes.
func TestROS2RealNodes(t *testing.T) {
	nodes := []ros2Node{
		{"rclcpp-timer", func(b string) []string { return []string{b, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=timer"} }, 5 * time.Millisecond, "1ms", false},
		{"rclcpp-sleep_until", func(b string) []string { return []string{b, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=rate"} }, 5 * time.Millisecond, "1ms", false},
		// One command per joint state: the world steps every 5 ms.
		{"rclcpp-callback", func(b string) []string { return []string{b, "--ros-args", "-p", "pattern:=callback"} }, 5 * time.Millisecond, "5ms", true},
		{"rclpy-timer", func(string) []string {
			return []string{rosenv.Python, rclpyScript(t, "rclpy_pd.py"), "--ros-args", "-p", "rate:=100.0"}
		}, 10 * time.Millisecond, "1ms", false},
	}
	for _, nd := range nodes {
		for _, mode := range []string{"consistent", "lockstep", "free"} {
			t.Run(nd.name+"/"+mode, func(t *testing.T) {
				env, tcs, rclcpp := ros2Real(t)
				dur := "3s"
				if mode == "consistent" {
					dur = "10s"
				}
				path := ros2Scenario(t, "ros2-"+nd.name, dur, nd.period, nd.cmd(rclcpp), "")
				if nd.step != "1ms" {
					b, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(strings.Replace(string(b), "step: 1ms", "step: "+nd.step, 1)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				old := tcsBin
				tcsBin = tcs
				defer func() { tcsBin = old }()
				r := runTCSEnv(t, env.Vars, 5*time.Minute, path, "--mode", mode)
				if r.code != 0 || r.sum.Ended != report.EndCompleted {
					if c := r.sum.Clients; len(c) > 0 {
						t.Logf("log of pd:\n%s", tail(c[0].Log, 30))
					}
					t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
				}
				s := r.sum
				c := client(t, s, "pd")
				P := int64(nd.period)
				end := int64(s.VirtualS*1e9 + 0.5)
				// Free mode is Gazebo + use_sim_time: nothing is gated, the
				// world steps at its own speed and a node late on its
				// clock skips or doubles periods (what tcs is there to
				// show): reported, not asserted.
				tt := ticks(t, c.Log)
				periods := int(end/P) - 1
				if mode == "free" {
					skipped, doubled := tickPeriods(tt, P, end)
					t.Logf("free mode: %d of %d periods without an activation, %d with several", len(skipped), periods, len(doubled))
				} else {
					tickEnd := end
					if nd.lag {
						tickEnd -= P
					}
					periods = checkTicks(t, tt, P, tickEnd, mode == "lockstep", missedPeriods(t, filepath.Join(r.outDir, "run.mcap"), "", P))
					if t.Failed() {
						t.Logf("end of the log of pd:\n%s", tail(c.Log, 12))
					}
				}
				cmds := 0
				if mode != "free" {
					cmds = checkCommands(t, filepath.Join(r.outDir, "run.mcap"), P, mode)
					// Activation 0 runs as the node starts, before virtual
					// time (a ROS timer's first callback is one period
					// after it starts): periods 1 .. N, N = end/P, the
					// end instant included (10 s at 200 Hz: 2,000).
					if c.Activations != end/P {
						t.Errorf("activations = %d, want %d", c.Activations, end/P)
					}
					checkPeriods(t, c, end/P+1)
					catchUpMiss(t, filepath.Join(r.outDir, "run.mcap"), tt, P, c.DeadlineMisses)
					checkNodeMisses(t, c)
					if c.LeakS != 0 {
						t.Errorf("leak_s = %g, want 0", c.LeakS)
					}
					if s.SettleTimeouts != 0 {
						t.Errorf("settle_timeouts = %d, want 0", s.SettleTimeouts)
					}
				}
				if c.CPUS <= 0 {
					t.Errorf("cpu_s = %g: the node's CPU was not accounted", c.CPUS)
				}
				if mode == "consistent" {
					if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
						t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
					}
					checkBalanced(t, s, 0)
				}
				t.Logf("%s %s: %d periods, activations %d, misses %d (host %d), commands %d, cpu %.3f s, Δ p99 %.1f µs max %.1f µs, holds %d (%.3f s wall), wall %.2f s",
					nd.name, mode, periods, c.Activations, c.DeadlineMisses, c.DeadlineMissesHost, cmds, c.CPUS,
					s.DriftP99S*1e6, s.DriftMaxS*1e6, c.Holds, c.HoldWallS, s.WallS)
			})
		}
	}
}

// An rclcpp controller at 200 Hz on a 1 kHz world, with every sample
// (the default) and with samples at its activations: in both, each
// activation computes with the joint state stamped at its own instant
// k·P (the sample taken before the clock that begins the activation,
// whether the node waits in a timer or in sleep_until); at_activation
// delivers that one only, not the four between.
func TestROS2SamplesAtActivation(t *testing.T) {
	const period = 5 * time.Millisecond
	for _, pattern := range []string{"timer", "rate"} {
		for _, samples := range []string{"each", "at_activation"} {
			t.Run(pattern+"/"+samples, func(t *testing.T) {
				env, tcs, rclcpp := ros2Real(t)
				path := ros2Scenario(t, "ros2-samples", "3s", period,
					[]string{rclcpp, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=" + pattern}, "")
				addToLastClient(t, path, "samples: "+samples)
				old := tcsBin
				tcsBin = tcs
				defer func() { tcsBin = old }()
				r := runTCSEnv(t, env.Vars, 5*time.Minute, path)
				if r.code != 0 || r.sum.Ended != report.EndCompleted {
					if c := r.sum.Clients; len(c) > 0 {
						t.Logf("log of pd:\n%s", tail(c[0].Log, 30))
					}
					t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
				}
				s := r.sum
				c := client(t, s, "pd")
				P := int64(period)
				end := int64(s.VirtualS*1e9 + 0.5)
				tt := ticks(t, c.Log)
				checkTicks(t, tt, P, end, false, missedPeriods(t, filepath.Join(r.outDir, "run.mcap"), "", P))
				catchUp := catchUpMiss(t, filepath.Join(r.outDir, "run.mcap"), tt, P, c.DeadlineMisses)
				if c.ActivationsBegunLate != 0 {
					t.Errorf("%d activations begun late although the node was idle at their instant (tcs's fault)", c.ActivationsBegunLate)
				}
				// Which sample each activation used (from period 2 on,
				// as checkTicks: the first ones are start-up's). After
				// the start-up catch-up's miss, activation 2 begins when
				// the catch-up ends, after its instant: it computes with
				// the newest sample then, that of the world's last step
				// (1 ms) before its clock.
				used, wrong, late := 0, 0, 0
				for _, l := range logLines(t, c.Log, "tick ") {
					var now, stamp int64
					if _, err := fmt.Sscanf(l, "tick %d state %d", &now, &stamp); err != nil {
						t.Fatalf("tick line %q: %v", l, err)
					}
					now -= msgs.Epoch
					if now < 2*P {
						continue
					}
					used++
					want := now / P * P
					// An activation that began a world step or more
					// after its instant (the catch-up's, or one the host
					// delayed: a late begin of tcs's own is an error
					// above) computes with the newest sample then.
					if catchUp == 1 && now/P == 2 || now-want >= int64(time.Millisecond) {
						want = now / int64(time.Millisecond) * int64(time.Millisecond)
						late++
					}
					if stamp-msgs.Epoch != want {
						if wrong++; wrong <= 5 {
							t.Errorf("the activation at ROS time %d ns computed with the sample stamped %d ns, want the one at its instant %d", now, stamp-msgs.Epoch, want)
						}
					}
				}
				if wrong > 5 {
					t.Errorf("... %d activations of %d computed with another sample than their instant's", wrong, used)
				}
				if own := c.DeadlineMisses - c.DeadlineMissesHost - catchUp; own != 0 {
					t.Errorf("deadline_misses = %d (%d after a host-delayed timer, %d the start-up catch-up's), want 0 of the node's own",
						c.DeadlineMisses, c.DeadlineMissesHost, catchUp)
				}
				switch samples {
				case "each":
					if c.Deliveries < 3000 {
						t.Errorf("deliveries = %d, want every 1 ms sample (3,000)", c.Deliveries)
					}
				case "at_activation":
					checkSampleAtActivation(t, c)
				}
				if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
					t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
				}
				checkBalanced(t, s, 0)
				// The node publishes its command before it blocks: the
				// block finds it at the bridge once the receive path has
				// settled, and is not one to read the node's threads for
				// (the hold-over rule asks only about a block with
				// nothing ready).
				if scans := holdScans(t, r.outDir); scans > c.Activations/10 {
					t.Errorf("hold_scans = %d for %d activations, want at most a tenth: the command waits at the bridge when the node blocks", scans, c.Activations)
				}
				t.Logf("%s, samples %s: %d activations checked (%d begun a step or more late, with the newest sample), %d deliveries, %d dispatches (%.2f per activation), coordinator %.0f µs per activation",
					pattern, samples, used, late, c.Deliveries, s.Dispatches, float64(s.Dispatches)/float64(max(c.Activations, 1)), s.CoordinatorPerActivationUS)
			})
		}
	}
}

// An rclpy planner that computes for 20 ms of CPU per plan, best-effort
// below an rclcpp create_timer controller at 100 Hz in the same robot; its
// plans (geometry_msgs/msg/PointStamped, a type tcs has no codec for) reach
// the controller through tcs (ros.relay) when the controller's progress
// reaches the publish time; the planner's computing costs it virtual time.
func TestROS2RealPlanner(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	const period = 10 * time.Millisecond
	planner := fmt.Sprintf(`      - name: planner
        cmd: [%q, %q, --ros-args, -p, "cpu_ms:=20.0"]
        api: ros
        class: best-effort
        priority: 10
`, rosenv.Python, rclpyScript(t, "rclpy_planner.py"))
	path := ros2Scenario(t, "ros2-planner", "5s", period,
		[]string{rclcpp, "--ros-args", "-p", "rate:=100.0", "-p", "pattern:=timer", "-p", "plans:=true"}, planner)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "  distro: jazzy\n", "  distro: jazzy\n  relay:\n    - {topic: /arm/plan, from: planner}\n", 1)
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	old := tcsBin
	tcsBin = tcs
	defer func() { tcsBin = old }()
	r := runTCSEnv(t, env.Vars, 5*time.Minute, path)
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		for _, c := range r.sum.Clients {
			t.Logf("log of %s:\n%s", c.Name, tail(c.Log, 30))
		}
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	s := r.sum
	c, p := client(t, s, "pd"), client(t, s, "planner")
	periods := checkTicks(t, ticks(t, c.Log), int64(period), int64(s.VirtualS*1e9+0.5), false, missedPeriods(t, filepath.Join(r.outDir, "run.mcap"), "", int64(period)))
	if c.Activations != int64(periods)+1 {
		t.Errorf("controller activations = %d, want %d", c.Activations, periods+1)
	}
	checkNodeMisses(t, c)
	if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
		t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
	}
	// The planner gets what the controller leaves of 5 s: at 20 ms of CPU
	// a plan, well over 50 plans.
	if s.Relayed < 50 || s.RelayDropped != 0 {
		t.Fatalf("relayed %d, dropped %d: want ≥ 50 plans, none dropped", s.Relayed, s.RelayDropped)
	}
	if c.RelayIn < s.Relayed-1 || c.RelayLost != 0 {
		t.Errorf("controller got %d of %d plans (%d lost)", c.RelayIn, s.Relayed, c.RelayLost)
	}
	// The nodes' view: a plan reaches the controller no earlier (in its
	// ROS time) than it was stamped; and plans lie at least their CPU
	// apart in virtual time (the planner's computing is charged).
	type plan struct{ stamp, cpu int64 }
	sent := map[int]plan{}
	for _, l := range logLines(t, p.Log, "plan ") {
		var k int
		var pl plan
		if _, err := fmt.Sscanf(l, "plan %d stamp_ns %d cpu_ns %d", &k, &pl.stamp, &pl.cpu); err == nil {
			sent[k] = pl
		}
	}
	got := 0
	var first, last, cpuSum int64
	n := 0
	for _, l := range logLines(t, c.Log, "got plan ") {
		var k int
		var stamp, at int64
		if _, err := fmt.Sscanf(l, "got plan %d stamp_ns %d at_ns %d", &k, &stamp, &at); err != nil {
			continue
		}
		got++
		if pl, ok := sent[k]; !ok || pl.stamp != stamp {
			t.Errorf("controller got plan %d stamped %d; the planner printed %+v (%v)", k, stamp, pl, ok)
		}
		// The node's ROS time is its clock at its last activation: tcs
		// hands the plan over when the controller's progress reaches the
		// stamp, but moves a periodic node's clock only when it releases
		// an activation (Policy.DeliverClock), so the callback reads a time
		// at most a period before the stamp; before its first activation,
		// no time at all (0).
		if at == 0 {
			continue
		}
		if at < stamp-int64(period) {
			t.Errorf("plan %d stamped %d reached the controller at %d: over a period before it was published", k, stamp, at)
		}
		if stamp <= msgs.Epoch {
			continue // computed during start-up
		}
		if n == 0 {
			first = stamp
		} else {
			cpuSum += sent[k].cpu
		}
		last = stamp
		n++
	}
	if n < 40 {
		t.Fatalf("%d plans reached the controller in virtual time, want ≥ 40", n)
	}
	if mean, cpu := (last-first)/int64(n-1), cpuSum/int64(n-1); mean < cpu {
		t.Errorf("plans %v apart on average in virtual time, less than the %v of CPU each took", time.Duration(mean), time.Duration(cpu))
	} else {
		t.Logf("plans %v apart on average in virtual time, %v of CPU each", time.Duration(mean), time.Duration(cpu))
	}
	t.Logf("controller: %d periods, activations %d, misses %d; planner cpu %.3f s; %d plans relayed, %d reached the controller; Δ p99 %.1f µs",
		periods, c.Activations, c.DeadlineMisses, p.CPUS, s.Relayed, got, s.DriftP99S*1e6)
}

// ros2WallPacedRun is the scenario of a minute-long run at the wall
// clock's pace (max_rtf 1) of an rclcpp timer node at 200 Hz: a run to
// look at from another shell while it goes on.
func ros2WallPacedRun(t *testing.T, name, rclcpp string) string {
	t.Helper()
	path := ros2Scenario(t, name, "60s", 5*time.Millisecond,
		[]string{rclcpp, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=timer"}, "")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte("max_rtf: 1\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The run as a user sees it from another shell: tcs says what to export
// (if anything); with only that and the usual environment, `ros2 node
// list` shows tcs and its client, `ros2 topic list` the run's topics, and
// `ros2 topic echo /clock` gets the clock.
func TestROS2GraphFromAnotherShell(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	path := ros2WallPacedRun(t, "ros2-graph", rclcpp)
	run := env.Start(tcs, "run", path, "--out", t.TempDir(), "--quiet", "--wait", "2m")
	export := toolExport(t, run)
	time.Sleep(3 * time.Second) // the clients connected; virtual time runs
	shell := func(cmd string) string {
		out, err := env.Run(45*time.Second, "/bin/bash", "-c", export+"; "+cmd)
		if err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, out)
		}
		return out
	}
	nodes := shell("ros2 node list --no-daemon --spin-time 3")
	for _, want := range []string{"/tcs\n", "/arm/pd\n"} {
		if !strings.Contains(nodes, want) {
			t.Errorf("ros2 node list: no %q in\n%s", want, nodes)
		}
	}
	topics := shell("ros2 topic list --no-daemon --spin-time 3")
	for _, want := range []string{"/clock\n", "/arm/joint_states\n", "/arm/command\n", "/tcs/pd/clock\n", "/diagnostics\n"} {
		if !strings.Contains(topics, want) {
			t.Errorf("ros2 topic list: no %q in\n%s", want, topics)
		}
	}
	clock := shell("ros2 topic echo --no-daemon --once /clock rosgraph_msgs/msg/Clock")
	if !strings.Contains(clock, "clock:") || !strings.Contains(clock, "sec:") {
		t.Errorf("ros2 topic echo /clock:\n%s", clock)
	}
	t.Logf("ros2 node list:\n%sros2 topic list:\n%sros2 topic echo --once /clock:\n%s", nodes, topics, clock)
	info := shell("ros2 topic info --no-daemon --verbose /clock")
	checkTypeHash(t, info, "tcs", "PUBLISHER", rmsgs.TypeHash(rmsgs.Clock))
	t.Logf("ros2 topic info -v /clock:\n%s", info)
	if strings.Contains(info+clock, "WARN") {
		t.Errorf("the ros2 CLI warns:\n%s%s", clock, info)
	}
	if strings.Contains(run.Output(), "tcs run:") {
		t.Errorf("tcs failed:\n%s", run.Output())
	}
}

// toolExport waits (up to 2 min) for tcs run to print the line another
// shell must run to see the run ("export ROS_AUTOMATIC_DISCOVERY_RANGE=...
// CYCLONEDDS_URI='...'") and returns it.
func toolExport(t *testing.T, run *rosenv.Proc) string {
	t.Helper()
	var export string
	rosenv.Eventually(t, 2*time.Minute, "tcs says what to export", func() (bool, string) {
		out := run.Output()
		for _, l := range strings.Split(out, "\n") {
			if s := strings.TrimSpace(l); strings.HasPrefix(s, "export ") {
				export = s
			}
		}
		return export != "" && strings.Contains(out, "tcs: ") && !strings.Contains(out, "tcs run:"), out
	})
	t.Logf("tcs says: %s", export)
	return export
}

// holdScans returns hold_scans from the overhead line of the run's tcs.log
// in out (how many blocks the hold-over rule read a client's threads for).
func holdScans(t *testing.T, out string) int64 {
	t.Helper()
	for _, line := range strings.Split(readFile(filepath.Join(out, "tcs.log")), "\n") {
		var l struct {
			Message   string `json:"message"`
			HoldScans *int64 `json:"hold_scans"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Message == "overhead" && l.HoldScans != nil {
			return *l.HoldScans
		}
	}
	t.Fatalf("no overhead line with hold_scans in %s", filepath.Join(out, "tcs.log"))
	return 0
}
