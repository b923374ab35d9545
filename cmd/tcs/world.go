package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"

	"github.com/tcs-robotics/tcs/bridge/ros2"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/remote"
)

// cmdWorld serves one of tcs's worlds to a run through the native world
// protocol (dynamics/remote): the process a scenario's
// `dynamics: {model: remote, params: {cmd: [tcs, world, MODEL, ...]}}`
// starts. Params are key=value, each value read as YAML (numbers, strings).
// With --ros2 it serves the world over ROS 2 instead, as a simulator does
// (simulation_interfaces, joint states, commands: bridge/ros2.ServeWorld),
// for a run whose dynamics model is simulation_interfaces.
func cmdWorld(args []string, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "tcs world: name a model (%s) and its params as key=value\n", strings.Join(dynamics.Models(), ", "))
		return 2
	}
	model := args[0]
	if model == "remote" {
		fmt.Fprintln(stderr, "tcs world: a remote world cannot be served again")
		return 2
	}
	params := map[string]any{}
	var ros2Robots, services string
	step := time.Millisecond
	serveROS2 := false
	rest := args[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "--") {
		flag := rest[0]
		rest = rest[1:]
		if flag == "--ros2" {
			serveROS2 = true
			continue
		}
		if len(rest) == 0 {
			fmt.Fprintf(stderr, "tcs world: %s needs a value\n", flag)
			return 2
		}
		val := rest[0]
		rest = rest[1:]
		switch flag {
		case "--robots":
			ros2Robots = val
		case "--services":
			services = val
		case "--step":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				fmt.Fprintf(stderr, "tcs world: --step %q: a duration like 1ms\n", val)
				return 2
			}
			step = d
		default:
			fmt.Fprintf(stderr, "tcs world: unknown flag %s (--ros2, --robots A,B, --step 1ms, --services /tcs)\n", flag)
			return 2
		}
	}
	if !serveROS2 && (ros2Robots != "" || services != "") {
		fmt.Fprintln(stderr, "tcs world: --robots and --services are for --ros2")
		return 2
	}
	for _, kv := range rest {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(stderr, "tcs world: %q: write params as key=value\n", kv)
			return 2
		}
		var val any
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			fmt.Fprintf(stderr, "tcs world: %s: %v\n", k, err)
			return 2
		}
		params[k] = val
	}
	if serveROS2 {
		return serveWorldROS2(model, params, ros2Robots, services, step, stderr)
	}
	conn, err := remote.Dial()
	if err != nil {
		fmt.Fprintf(stderr, "tcs world: %v\n", err)
		return 1
	}
	defer conn.Close()
	f, err := remote.Blocking(conn)
	if err != nil {
		fmt.Fprintf(stderr, "tcs world: %v\n", err)
		return 1
	}
	defer f.Close()
	err = remote.Serve(f, func(bodies int, step int64) (remote.Model, error) {
		return dynamics.New(model, bodies, step, params)
	})
	if err != nil {
		fmt.Fprintf(stderr, "tcs world %s: %v\n", model, err)
		return 1
	}
	return 0
}

// serveWorldROS2 is `tcs world MODEL --ros2`: the world served over ROS 2
// in this process's ROS_DOMAIN_ID until a stop request, SIGINT or SIGTERM.
func serveWorldROS2(model string, params map[string]any, robots, services string, step time.Duration, stderr io.Writer) int {
	names := strings.Split(robots, ",")
	if robots == "" {
		names = []string{"robot"}
	}
	w, err := dynamics.New(model, len(names), step.Nanoseconds(), params)
	if err != nil {
		fmt.Fprintf(stderr, "tcs world %s: %v\n", model, err)
		return 1
	}
	defer dynamics.Close(w)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := zerolog.New(stderr).With().Timestamp().Logger()
	fmt.Fprintf(stderr, "tcs world %s: serving %s over ROS 2 (ROS_DOMAIN_ID=%s), paused at 0, step %v\n",
		model, strings.Join(names, ", "), os.Getenv("ROS_DOMAIN_ID"), step)
	err = ros2.ServeWorld(ctx, ros2.WorldServerConf{World: w, Model: model, Step: step.Nanoseconds(),
		Robots: names, Namespace: services, Log: log})
	if err != nil {
		fmt.Fprintf(stderr, "tcs world %s: %v\n", model, err)
		return 1
	}
	return 0
}
