// Command tcs runs robot controllers and planners as coordinated processes
// on one dedicated CPU, charging every microsecond of CPU they use to
// simulated time (temporally consistent simulation).
//
//	tcs demo [--out DIR]                  the pendulum under a ROS 1 PD node
//	tcs run FILE [--mode M] [--out DIR]   run a scenario
//	tcs check FILE...                     validate scenario files
//	tcs bench dispatch                    the dispatch cycle against C
//	tcs bench delivery                    gated ROS 1 delivery against goroslib (and ROS 2, built with -tags ros2)
//	tcs bench decision                    the policy's cost per decision at 4, 16 and 64 clients
//	tcs bench activation                  the coordinator's CPU per activation, per kind of client
//	tcs bench pursuit                     paper 000's pursuit workload with native C clients against the targets
//	tcs bench soak                        an hour of mixed clients: the coordinator's resources per minute
//	tcs client NAME [ARGS]                a bundled client (pd, planner, ...)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/ros1"
	"github.com/tcs-robotics/tcs/bridge/ros2"
	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/controllers"
	"github.com/tcs-robotics/tcs/controllers/rosnode"
	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/simcontrol"
)

const usage = `tcs: temporally consistent simulation for ROS

usage:
  tcs demo [--out DIR]            the pendulum under a ROS 1 PD node (goroslib), no ROS needed
  tcs run FILE [--mode consistent|lockstep|free] [--out DIR] [--no-compensation] [--pprof ADDR]
                                  run a scenario; writes DIR/summary.json, DIR/run.mcap (--no-record: not) and DIR/logs/
  tcs check FILE...               validate scenario files
  tcs report DIR|FILE [--plots D] the closing table and plots (PNG, SVG) from DIR/run.mcap alone
  tcs play DIR|FILE [--rate R]    republish a recording over ROS 1 with /clock (like rosbag play --clock)
  tcs bench dispatch [flags]      measure the dispatch cycle against the same cycle in C
  tcs bench delivery [flags]      gated ROS 1 delivery against goroslib's Publisher.Write, and ROS 2 against ROS 1 (-tags ros2)
  tcs bench decision [flags]      the pure policy's cost per scheduling decision at 4, 16 and 64 clients
  tcs bench activation [flags]    the coordinator's CPU per activation and per dispatch, for every kind
                                  of client (native C and Go, goroslib, roscpp, rospy, rclcpp, rclpy),
                                  and of the mixed ROS 1 stack (ros1-stack)
  tcs bench pursuit [flags]       paper 000's pursuit workload with native C clients (two 100 Hz controllers,
                                  a planner): the coordinator's CPU per activation and share, every CPU counted
  tcs bench soak [flags]          an hour of 16 mixed clients at max_rtf 1: the coordinator's RSS, fds,
                                  goroutines, threads and Δ p99 per minute, their trends (results/soak/)
  tcs client NAME [ARGS]          run a bundled client (` + "pd, planner, crash, spin" + `)
  tcs attach --name N [--robot R --period P --priority K --class C] -- CMD [ARGS]
                                  join a starting run as its client N (attach: true), e.g. as a
                                  roslaunch launch-prefix; socket $TCS_ATTACH_SOCKET or /run/tcs/attach/attach.sock
  tcs node NAME [ROS ARGS]        run a bundled ROS 1 node (goroslib): pd, prey, predator, planner
  tcs world MODEL [KEY=VALUE...]  serve a world to a run (dynamics model remote, params {cmd: [tcs, world, MODEL]});
                                  with --ros2 [--robots A,B] [--step 1ms], as a ROS 2 simulator (model simulation_interfaces)
  tcs experiment pendulum|pursuit [--trials N] [--out DIR]
                                  reproduce the papers' experiments; writes DIR/report.md
  tcs help                        this text

tcs run needs root (or CAP_SYS_NICE) for SCHED_FIFO and at least 2 CPUs.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "__spawn":
		return driver.SpawnMain(args[1:])
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	case "attach":
		return driver.AttachMain(args[1:], stderr)
	case "node":
		return cmdNode(args[1:], stderr)
	case "experiment":
		return cmdExperiment(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "play":
		return cmdPlay(args[1:], stdout, stderr)
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "world":
		return cmdWorld(args[1:], stderr)
	case "client":
		if len(args) < 2 {
			fmt.Fprintf(stderr, "tcs client: name a client: %v\n", controllers.Names())
			return 2
		}
		return controllers.Main(args[1], args[2:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "tcs: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "tcs check: name at least one scenario file")
		return 2
	}
	bad := 0
	for _, path := range args {
		s, err := config.Load(path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			bad++
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%s, %d robots, %d clients, %s virtual)\n",
			path, s.Mode, len(s.Robots), s.ClientCount(), s.Duration)
	}
	if bad > 0 {
		return 1
	}
	return 0
}

// cmdDemo runs the built-in demo scenario (config/demo.yaml): the pendulum
// controlled by the bundled goroslib PD node through the embedded master.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	return runCommand("tcs demo", args, stdout, stderr, func(string) (*config.Scenario, error) {
		sc, err := config.Parse(config.Demo, "config/demo.yaml")
		if err != nil {
			return nil, err
		}
		// Built in: its clients run in the current directory.
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("tcs demo: %w", err)
		}
		sc.Dir = wd
		for i := range sc.Robots {
			for k := range sc.Robots[i].Clients {
				sc.Robots[i].Clients[k].Dir = wd
			}
		}
		return sc, nil
	})
}

// cmdNode runs a bundled ROS 1 node (an ordinary goroslib node).
func cmdNode(args []string, stderr io.Writer) int {
	if len(args) == 0 || !slices.Contains(rosnode.Nodes(), args[0]) {
		fmt.Fprintf(stderr, "tcs node: the bundled ROS nodes are: %s\n", strings.Join(rosnode.Nodes(), ", "))
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if err := rosnode.Run(ctx, args[0], args[1:], stderr); err != nil {
		fmt.Fprintf(stderr, "tcs node %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	return runCommand("tcs run", args, stdout, stderr, func(file string) (*config.Scenario, error) {
		if file == "" {
			return nil, errors.New("tcs run: name a scenario file, e.g. tcs run config/pendulum.yaml")
		}
		return config.Load(file)
	})
}

// runCommand is tcs run and tcs demo: flags, then the scenario load gives,
// then the run.
func runCommand(name string, args []string, stdout, stderr io.Writer, load func(file string) (*config.Scenario, error)) int {
	// Signals are caught from the start: one that arrives while the
	// scenario loads (before the run could stop cleanly) is kept and stops
	// the run as soon as it can. A run that loses its terminal or its
	// reader (a pipe whose other end died) stops cleanly or goes on:
	// killed by SIGHUP or SIGPIPE, its dispatch thread, at SCHED_FIFO on
	// the simulation CPU, was once seen spinning in the kernel's exit path
	// for minutes, holding that CPU and the clients alive.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "", "override the scenario's mode: consistent, lockstep or free")
	out := fs.String("out", "", "output folder (default out/<scenario name>)")
	noComp := fs.Bool("no-compensation", false, "turn off timer error compensation")
	wait := fs.Duration("wait", 0, "wait this long for another run holding the simulation CPU")
	quiet := fs.Bool("quiet", false, "no live status line")
	duration := fs.String("duration", "", "override the scenario's virtual duration (e.g. 100s)")
	noRecord := fs.Bool("no-record", false, "do not record DIR/run.mcap")
	user := fs.String("user", "", "run the clients as this user (name or uid; default: who invoked tcs, through sudo SUDO_UID); root keeps its privileges only when named")
	paused := fs.Bool("paused", false, "start paused at virtual time 0: the world waits for a play or step request (ROS services under /tcs)")
	pprofAddr := fs.String("pprof", "", "serve Go's runtime profiles (net/http/pprof) at http://ADDR/debug/pprof/ during the run; ADDR a loopback host:port, e.g. 127.0.0.1:6060 (port 0: a free one). Default: off")
	file, rest := splitFile(dropROSArgs(args))
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	sc, err := load(file)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	file = sc.File
	if *mode != "" {
		m, err := config.ParseMode(*mode)
		if err != nil {
			fmt.Fprintf(stderr, "tcs run: --mode: %v\n", err)
			return 2
		}
		sc.Mode = m
		if err := sc.Validate(); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if *duration != "" {
		d, err := config.ParseDuration(*duration)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "tcs run: --duration %q: write a positive duration like 10s or 500ms\n", *duration)
			return 2
		}
		sc.Duration = d
	}
	if *paused && !sc.HasROS() {
		fmt.Fprintf(stderr, "tcs run: --paused: %s has no ROS client, so nothing could play or step the run (its services are ROS services under /tcs)\n", file)
		return 2
	}
	if *pprofAddr != "" {
		if err := loopbackAddr(*pprofAddr); err != nil {
			fmt.Fprintf(stderr, "%s: --pprof %q: %v\n", name, *pprofAddr, err)
			return 2
		}
	}
	if *out == "" {
		*out = filepath.Join("out", sc.Name)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "tcs run: %v\n", err)
		return 1
	}
	logFile, err := os.Create(filepath.Join(*out, "tcs.log"))
	if err != nil {
		fmt.Fprintf(stderr, "tcs run: %v\n", err)
		return 1
	}
	defer logFile.Close()
	logger := zerolog.New(logFile).With().Timestamp().Logger()
	if *pprofAddr != "" {
		ps, err := startPprof(*pprofAddr)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		defer ps.Close()
		logger.Info().Str("url", ps.URL()).Msg("profiles served")
		fmt.Fprintf(stderr, "tcs: Go runtime profiles at %s (goroutines: %sgoroutine?debug=1)\n", ps.URL(), ps.URL())
	}

	stop := make(chan struct{})
	go func() {
		if s, ok := <-sigs; ok {
			logger.Warn().Str("signal", s.String()).Msg("stopping")
			close(stop)
		}
	}()

	// Requests to pause, play, step or stop the run come through ctl from
	// the bridge's services.
	ctl := simcontrol.New()
	rc := driver.RunConf{Scenario: sc, OutDir: *out, Stop: stop, Log: &logger, LockTimeout: *wait, NoRecord: *noRecord,
		Control: ctl, Paused: *paused, User: *user, Notices: stderr}
	if !*quiet {
		rc.Status = stderr
	}
	if *noComp {
		f := false
		rc.Compensation = &f
	}
	// One world for the run: the bridge reads its joints and whether it
	// resets from it, and the run steps it (a world in another process
	// or a simulator is started and joined once).
	world, err := dynamics.New(sc.Dynamics.Model, len(sc.Robots), sc.Dynamics.Step.Nanoseconds(), sc.Dynamics.Params)
	if err != nil {
		fmt.Fprintf(stderr, "tcs run: %s: dynamics: %v\n", file, err)
		return 1
	}
	defer dynamics.Close(world)
	rc.World = world
	if sc.HasROS() && sc.ROS.Transport == config.TransportROS2 {
		b, err := ros2.StartBridge(sc, world, logger.With().Str("part", "ros2").Logger())
		if err != nil {
			fmt.Fprintf(stderr, "tcs run: %s: ros.transport: ros2: %v\n", file, err)
			return 1
		}
		defer func() {
			if err := b.Close(); err != nil {
				logger.Warn().Err(err).Msg("close the ROS 2 bridge")
			}
		}()
		rc.Bridge = b
		// As with ROS 1: the loop closes ctl when the run ends; closing it
		// here too answers a call that comes after a run that failed to
		// start.
		defer ctl.Close()
		if err := b.ServeSimulation(ctl, dynamics.CanReset(world)); err != nil {
			fmt.Fprintf(stderr, "tcs run: %s: %v\n", file, err)
			return 1
		}
		fmt.Fprintln(stderr, "tcs: ROS 2 over Cyclone DDS (loopback), node /tcs; simulation_interfaces services under /tcs")
		if os.Getenv("CYCLONEDDS_URI") != "" {
			fmt.Fprintln(stderr, "tcs: the clients keep your CYCLONEDDS_URI: it must bind 127.0.0.1 (<NetworkInterface address=\"127.0.0.1\"/>) for them to meet tcs")
		}
		if env := b.ToolEnv(); len(env) > 0 {
			fmt.Fprintf(stderr, "tcs: to see this run from another shell (ros2 topic list, ros2 node list, ros2 bag record), export:\n  export %s\n", shellWords(env))
		}
	} else if sc.HasROS() {
		b, err := ros1.StartBridge(sc, world, logger.With().Str("part", "ros1").Logger())
		if err != nil {
			fmt.Fprintf(stderr, "tcs run: %v\n", err)
			return 1
		}
		defer func() {
			if err := b.Close(); err != nil {
				logger.Warn().Err(err).Msg("close the ROS bridge")
			}
		}()
		rc.Bridge = b
		// The loop closes ctl when the run ends; closing it here too
		// answers a call that comes after a run that failed to start.
		defer ctl.Close()
		if err := b.ServeControl(ctl); err != nil {
			fmt.Fprintf(stderr, "tcs run: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "tcs: ROS master %s%s\n", b.Node.MasterURI(), map[bool]string{true: " (embedded)", false: ""}[b.Master != nil])
	}
	fmt.Fprintf(stderr, "tcs: %s: %s mode, %s virtual, quantum %s; logs in %s\n",
		file, sc.Mode, sc.Duration, sc.Quantum, filepath.Join(*out, "logs"))
	start := time.Now()
	sum, err := driver.Run(rc)
	if err != nil {
		fmt.Fprintf(stderr, "tcs run: %v\n", err)
		if sum == nil {
			return 1
		}
	}
	if sum != nil {
		_ = report.Table(stdout, sum)
		fmt.Fprintf(stdout, "summary: %s (%.1f s wall)\n", filepath.Join(*out, "summary.json"), time.Since(start).Seconds())
		// A stop request (simulation_interfaces) is a requested end.
		if sum.Ended != report.EndCompleted && sum.Ended != report.EndStopped {
			return 1
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// dropROSArgs removes the arguments roslaunch gives every node it starts
// (__name:=..., __log:=...), so tcs run can be a node of a launch file.
func dropROSArgs(args []string) []string {
	out := args[:0:0]
	for _, a := range args {
		if strings.HasPrefix(a, "__") && strings.Contains(a, ":=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// shellWords quotes each VAR=value for a POSIX shell (single quotes
// around values with characters a shell would read).
func shellWords(env []string) string {
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(v, " <>\"'&;|$`*?()[]{}!#~\\") {
			v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
		out[i] = k + "=" + v
	}
	return strings.Join(out, " ")
}

// splitFile lets the scenario file come before the flags (tcs run FILE
// --out D), as the README writes it.
func splitFile(args []string) (string, []string) {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		return args[0], args[1:]
	}
	return "", args
}

func cmdBench(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && args[0] == "dispatch":
		return benchDispatch(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "delivery":
		return benchDelivery(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "decision":
		return benchDecision(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "activation":
		return benchActivation(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "pursuit":
		return benchPursuit(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "soak":
		return benchSoak(args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, "tcs bench: the benchmarks are: dispatch, delivery, decision, activation, pursuit, soak")
	return 2
}
