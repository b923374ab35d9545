package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/tcs-robotics/tcs/bridge/ros2"
)

// Which ROS a kind speaks.
const (
	rosNone = iota // native protocol
	rosOne         // ROS 1, through tcs's embedded master
	rosTwo         // ROS 2, over the ros2 transport
)

// python is the interpreter of rospy and rclpy nodes: a python3 first on
// PATH may be another build that cannot import them (test/rosenv.Python).
const python = "/usr/bin/python3"

// activationKind is how one kind of client runs: its command line (from
// its period), its environment, or why it cannot run here (skip) or could
// not be built (err).
type activationKind struct {
	name       string
	ros        int
	argv       func(period time.Duration) []string
	env        []string
	ros2Prefix string
	skip       string
	err        error
	// robots, when set, writes the scenario's robots (KindROS1Stack) in
	// place of one robot per client running argv.
	robots func(samples string) string
}

// stackPeriod is the period of the mixed ROS 1 stack's controllers
// (200 Hz, whatever ActivationOpts.Period).
const stackPeriod = 5 * time.Millisecond

// stackClients are the mixed ROS 1 stack's clients, as in its scenario:
// the goroslib controller, the roscpp timer node and the rospy planner.
var stackClients = []string{"pd", "timer", "planner"}

// prepareStack prepares the mixed ROS 1 stack (KindROS1Stack) in dir: the
// roscpp node is built as KindRoscpp's; it cannot run where roscpp or
// rospy cannot.
func prepareStack(src, dir string) *activationKind {
	a := &activationKind{name: KindROS1Stack, ros: rosOne, env: rosOneEnv()}
	timer := prepareKind(KindRoscpp, src, dir)
	py := prepareKind(KindRospy, src, dir)
	switch {
	case timer.skip != "":
		a.skip = timer.skip
		return a
	case py.skip != "":
		a.skip = py.skip
		return a
	case timer.err != nil:
		a.err = timer.err
		return a
	}
	planner := filepath.Join(src, "test", "controllers", "rospy", "planner.py")
	a.robots = stackRobots(timer.argv(stackPeriod), planner)
	return a
}

// prepareKind finds what kind k needs in the source tree src (found by
// findSource; "" when there is none) and builds it in dir, as the tests
// build it: controllers/c/pd.c as test/e2e_test.go's TestPendulumC,
// roscpp/pd.cpp as test/ros1_test.go's rosController, rclcpp_pd.cpp as
// test/ros2_nodes_test.go's ros2Real. Builds of C++ are cached in the
// user's cache folder, by their sources.
func prepareKind(k, src, dir string) *activationKind {
	a := &activationKind{name: k, env: rosOneEnv()}
	needSrc := func() bool {
		if src == "" {
			a.skip = "no tcs source tree here (its controllers' sources): run from the repository or give -src"
			return false
		}
		return true
	}
	hz := func(p time.Duration) float64 { return float64(time.Second) / float64(p) }
	switch k {
	case KindROS1Stack:
		return prepareStack(src, dir)
	case KindC:
		if !needSrc() {
			return a
		}
		if _, err := exec.LookPath("gcc"); err != nil {
			a.skip = "gcc missing (apt-get install gcc libc6-dev)"
			return a
		}
		bin := filepath.Join(dir, "pd")
		a.err = buildIn(dir, "native C pd", "gcc", "-O2", "-Wall", "-I", filepath.Join(src, "coordinator", "native"),
			"-o", bin, filepath.Join(src, "controllers", "c", "pd.c"), "-lm")
		a.argv = func(time.Duration) []string { return []string{bin} }
	case KindGo:
		a.argv = func(time.Duration) []string { return []string{"tcs", "client", "pd"} }
	case KindGoroslib:
		a.ros = rosOne
		a.argv = func(p time.Duration) []string { return []string{"tcs", "node", "pd", "_rate:=" + param(hz(p))} }
	case KindRoscpp:
		a.ros = rosOne
		if !needSrc() {
			return a
		}
		if _, err := exec.LookPath("g++"); err != nil {
			a.skip = "g++ missing (apt-get install g++ libroscpp-dev libstd-msgs-dev libsensor-msgs-dev)"
			return a
		}
		flags, err := exec.Command("pkg-config", "--cflags", "--libs", "roscpp", "std_msgs", "sensor_msgs").Output()
		if err != nil {
			a.skip = fmt.Sprintf("roscpp missing (pkg-config roscpp std_msgs sensor_msgs: %v; apt-get install libroscpp-dev libstd-msgs-dev libsensor-msgs-dev)", err)
			return a
		}
		cpp := filepath.Join(src, "test", "controllers", "roscpp", "pd.cpp")
		bin, err := cachedBuild("roscpp-pd", []string{cpp}, string(flags), dir, func() (string, error) {
			out := filepath.Join(dir, "pd")
			args := append([]string{"-O2", "-std=c++17", cpp, "-o", out}, strings.Fields(string(flags))...)
			return out, buildIn(dir, "roscpp pd", "g++", args...)
		})
		a.err = err
		a.argv = func(p time.Duration) []string { return []string{bin, "_rate:=" + param(hz(p))} }
	case KindRospy:
		a.ros = rosOne
		if !needSrc() {
			return a
		}
		if err := probe(a.env, python, "-c", "import rospy, std_msgs.msg, sensor_msgs.msg, geometry_msgs.msg"); err != nil {
			a.skip = fmt.Sprintf("rospy missing (%s cannot import rospy, std_msgs, sensor_msgs, geometry_msgs: %v; "+
				"apt-get install python3-rospy python3-std-msgs python3-sensor-msgs python3-geometry-msgs)", python, err)
			return a
		}
		script := filepath.Join(src, "test", "controllers", "rospy", "pd.py")
		a.argv = func(p time.Duration) []string { return []string{python, script, "_rate:=" + param(hz(p))} }
	case KindRclcpp, KindRclpy:
		a.ros = rosTwo
		if !ros2.Built {
			a.skip = "this tcs was built without the ROS 2 transport (go build -tags ros2 ./cmd/tcs)"
			return a
		}
		prefix, why := ros2Prefix()
		if prefix == "" {
			a.skip = why
			return a
		}
		if !needSrc() {
			return a
		}
		a.ros2Prefix = prefix
		env, err := rosTwoEnv(prefix)
		if err != nil {
			a.skip = err.Error()
			return a
		}
		a.env = env
		dirOf := filepath.Join(src, "test", "controllers", "ros2")
		if k == KindRclpy {
			if err := probe(env, python, "-c", "import rclpy, std_msgs.msg, sensor_msgs.msg"); err != nil {
				a.skip = fmt.Sprintf("rclpy missing from %s (%s cannot import rclpy: %v)", prefix, python, err)
				return a
			}
			script := filepath.Join(dirOf, "rclpy_pd.py")
			a.argv = func(p time.Duration) []string {
				return []string{python, script, "--ros-args", "-p", "rate:=" + floatParam(hz(p))}
			}
			return a
		}
		for _, tool := range []string{"cmake", "g++"} {
			if _, err := exec.LookPath(tool); err != nil {
				a.skip = tool + " missing (apt-get install cmake g++)"
				return a
			}
		}
		ament := getenv(env, "AMENT_PREFIX_PATH")
		srcs := []string{filepath.Join(dirOf, "CMakeLists.txt"), filepath.Join(dirOf, "rclcpp_pd.cpp"),
			filepath.Join(src, "test", "controllers", "pdlaw.hpp")}
		bin, err := cachedBuild("rclcpp-pd", srcs, ament, dir, func() (string, error) {
			build := filepath.Join(dir, "cmake")
			if err := buildEnvIn(dir, "rclcpp pd", env, "cmake", "-S", dirOf, "-B", build,
				"-DCMAKE_PREFIX_PATH="+ament, "-DCMAKE_BUILD_TYPE=Release"); err != nil {
				return "", err
			}
			return filepath.Join(build, "rclcpp_pd"), buildEnvIn(dir, "rclcpp pd", env, "cmake", "--build", build, "-j", "2")
		})
		a.err = err
		a.argv = func(p time.Duration) []string {
			return []string{bin, "--ros-args", "-p", "rate:=" + floatParam(hz(p)), "-p", "pattern:=timer"}
		}
	}
	return a
}

// stackRobots writes the mixed ROS 1 stack's robot "arm": the goroslib
// PD controller pd (priority 30) and the roscpp node timer (timerArgv, a
// ros::Timer, priority 20; its commands on /arm/timer_command) both
// periodic at stackPeriod with the samples setting given, and the rospy
// planner (the script planner, 100 ms of CPU per plan) best-effort at
// priority 0.
func stackRobots(timerArgv []string, planner string) func(samples string) string {
	hz := param(float64(time.Second) / float64(stackPeriod))
	timer := append(append([]string(nil), timerArgv...), "_timer:=true", "command:=/arm/timer_command")
	return func(samples string) string {
		var b strings.Builder
		b.WriteString("  - name: arm\n    clients:\n")
		periodic := "      - name: %s\n        cmd: [%s]\n        api: ros\n        class: periodic\n        period: %v\n        priority: %d\n        samples: %s\n"
		fmt.Fprintf(&b, periodic, stackClients[0], quoteArgs("tcs", "node", "pd", "_rate:="+hz), stackPeriod, 30, samples)
		fmt.Fprintf(&b, periodic, stackClients[1], quoteArgs(timer...), stackPeriod, 20, samples)
		fmt.Fprintf(&b, "      - name: %s\n        cmd: [%s]\n        api: ros\n        class: best-effort\n        priority: 0\n",
			stackClients[2], quoteArgs(python, planner, "_cpu_ms:=100"))
		return b.String()
	}
}

// param writes a ROS 1 private parameter's number (_rate:=100).
func param(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// floatParam writes a ROS 2 double parameter: with a point, or rclcpp
// reads an integer and refuses it for a double (rate:=100.0).
func floatParam(v float64) string {
	s := param(v)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// buildIn runs a build command with the caller's environment; see
// buildEnvIn.
func buildIn(dir, what, name string, args ...string) error {
	return buildEnvIn(dir, what, nil, name, args...)
}

// buildEnvIn runs a build command (at most 10 minutes) in dir with env
// (nil: the caller's); its output goes to dir/build.log, whose end the
// error shows.
func buildEnvIn(dir, what string, env []string, name string, args ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("build %s: %w", what, err)
	}
	logPath := filepath.Join(dir, "build.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("build %s: %w", what, err)
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	fmt.Fprintf(log, "$ %s %s\n", name, strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %s: %w: %s (all in %s)", what, name, err, tailFile(logPath, 3), logPath)
	}
	return nil
}

// cachedBuild returns the program build makes (in dir) from the files
// srcs and the setting extra, from the user's cache folder when it holds
// one built from the same, else building it and copying it there.
func cachedBuild(name string, srcs []string, extra, dir string, build func() (string, error)) (string, error) {
	h := sha256.New()
	for _, p := range srcs {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("build %s: %w", name, err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(p), len(b))
		h.Write(b)
	}
	io.WriteString(h, extra)
	cache, err := os.UserCacheDir()
	if err == nil {
		cache = filepath.Join(cache, "tcs")
		err = os.MkdirAll(cache, 0o755)
	}
	if err != nil {
		return build() // no cache: build it every time
	}
	bin := filepath.Join(cache, "bench-activation-"+name+"-"+hex.EncodeToString(h.Sum(nil)[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	out, err := build()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	// Write then rename: another bench sees the whole program or none.
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		return out, nil // keep the one just built
	}
	if err := os.Rename(tmp, bin); err != nil {
		os.Remove(tmp)
		return out, nil
	}
	return bin, nil
}

// probe runs a short check command (at most 30 s) with env.
func probe(env []string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		if l := strings.TrimSpace(string(out)); l != "" {
			ls := strings.Split(l, "\n")
			return fmt.Errorf("%w: %s", err, ls[len(ls)-1])
		}
		return err
	}
	return nil
}

// dropVar reports whether environment variable k belongs to a ROS setup
// (or a proxy) that the runs must not inherit: they get the ROS they are
// given (as test/rosenv does).
func dropVar(k string) bool {
	switch k {
	case "PYTHONPATH", "PYENV_VERSION", "CYCLONEDDS_URI", "RMW_IMPLEMENTATION", "CMAKE_PREFIX_PATH", "LD_LIBRARY_PATH",
		"http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY", "TCS_ATTACH_SOCKET":
		return true
	}
	return strings.HasPrefix(k, "ROS_") || strings.HasPrefix(k, "AMENT_") || strings.HasPrefix(k, "COLCON_")
}

// rosOneEnv is the environment of the native and ROS 1 runs: the
// caller's, without any ROS setup (tcs sets the master, ROS_HOME and the
// rest for its nodes).
func rosOneEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !dropVar(k) {
			env = append(env, kv)
		}
	}
	return append(env, "PYTHONUNBUFFERED=1")
}

// ros2Prefixes are where a ROS 2 Jazzy is looked for when TCS_ROS2_PREFIX
// is not set (those of test/rosenv: a user's install, then the one
// test.sh builds).
var ros2Prefixes = []string{"/opt/ros/jazzy", "/opt/ros2-jazzy-min"}

// ros2Prefix is the ROS 2 install the ROS 2 kinds run with:
// $TCS_ROS2_PREFIX, else the first of ros2Prefixes with a setup.bash; ""
// and why when there is none.
func ros2Prefix() (prefix, why string) {
	if p, ok := os.LookupEnv("TCS_ROS2_PREFIX"); ok {
		if p == "" {
			return "", "no ROS 2: TCS_ROS2_PREFIX is set but empty"
		}
		if _, err := os.Stat(filepath.Join(p, "setup.bash")); err != nil {
			return "", "TCS_ROS2_PREFIX=" + p + ": " + err.Error()
		}
		return p, ""
	}
	for _, p := range ros2Prefixes {
		if _, err := os.Stat(filepath.Join(p, "setup.bash")); err == nil {
			return p, ""
		}
	}
	return "", "no ROS 2 Jazzy in " + strings.Join(ros2Prefixes, " or ") + " (set TCS_ROS2_PREFIX to one)"
}

// rosTwoEnv is the environment of the ROS 2 runs, as a user's shell has
// it after sourcing prefix/setup.bash (from no ROS setup, Debian's PATH),
// with rmw_cyclonedds_cpp and the LOCALHOST discovery range; as
// test/rosenv.NewROS2 makes it.
func rosTwoEnv(prefix string) ([]string, error) {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !dropVar(k) && k != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	setup := filepath.Join(prefix, "setup.bash")
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", `source "$1" >/dev/null && env -0`, "bash", setup)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("source %s: %v", setup, err)
	}
	env = env[:0]
	for _, kv := range bytes.Split(out, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return append(env, "RMW_IMPLEMENTATION=rmw_cyclonedds_cpp", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST",
		"TCS_ROS2_PREFIX="+prefix, "PYTHONUNBUFFERED=1"), nil
}

// getenv is variable k of env ("" when unset).
func getenv(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if kk, v, ok := strings.Cut(env[i], "="); ok && kk == k {
			return v
		}
	}
	return ""
}

// findSource returns the tcs source tree: the first folder holding tcs's
// go.mod upward from the working directory, then from the executable's
// folder; "" when neither is in one.
func findSource() string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, d := range starts {
		for {
			if isSource(d) {
				return d
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return ""
}

// isSource reports whether dir holds tcs's go.mod.
func isSource(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && bytes.HasPrefix(b, []byte("module github.com/tcs-robotics/tcs\n"))
}

// commitOf returns the commit the running binary was built from (its
// build information), else (built with -buildvcs=false) the source tree's
// HEAD, and whether the tree was modified.
func commitOf(src string) (commit string, modified bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if commit != "" || src == "" {
		return commit, modified
	}
	out, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	// Tracked files that differ from HEAD.
	modified = exec.Command("git", "-C", src, "diff", "--quiet", "HEAD").Run() != nil
	return strings.TrimSpace(string(out)), modified
}
