package rosenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// ROS 2 (issue 18): the tests of real rclcpp and rclpy nodes, the ros2 CLI,
// ros2 launch and ros2 bag use a real ROS 2 Jazzy: $TCS_ROS2_PREFIX when it
// is set (test.sh sets it: /opt/ros/jazzy, or the minimal Jazzy it built
// from ../shared/ros2-jazzy into /opt/ros2-jazzy-min; set but empty means
// test.sh found none), else the first of ROS2Prefixes that holds a
// setup.bash.

// ROS2Prefixes are where a ROS 2 Jazzy is looked for when TCS_ROS2_PREFIX
// is not set: a user's install, then test.sh's cache.
var ROS2Prefixes = []string{"/opt/ros/jazzy", "/opt/ros2-jazzy-min"}

// ros2Base is the environment a ROS 2 install gives (setup.bash sourced),
// computed once.
var ros2Base struct {
	once   sync.Once
	prefix string
	vars   []string
	why    string // why there is none
}

// ROS2Prefix returns the ROS 2 install the tests use, or "" and why there
// is none.
func ROS2Prefix() (prefix, why string) {
	loadROS2()
	return ros2Base.prefix, ros2Base.why
}

func loadROS2() {
	ros2Base.once.Do(func() {
		prefix, set := os.LookupEnv("TCS_ROS2_PREFIX")
		switch {
		case set && prefix == "":
			ros2Base.why = "no ROS 2: test.sh found no /opt/ros/jazzy and could not build ../shared/ros2-jazzy (TCS_ROS2_PREFIX is empty)"
			return
		case !set:
			for _, p := range ROS2Prefixes {
				if _, err := os.Stat(filepath.Join(p, "setup.bash")); err == nil {
					prefix = p
					break
				}
			}
			if prefix == "" {
				ros2Base.why = "no ROS 2 Jazzy in " + strings.Join(ROS2Prefixes, " or ") +
					": run ./test.sh (it builds ../shared/ros2-jazzy into /opt/ros2-jazzy-min) or set TCS_ROS2_PREFIX"
				return
			}
		}
		setup := filepath.Join(prefix, "setup.bash")
		if _, err := os.Stat(setup); err != nil {
			ros2Base.why = "TCS_ROS2_PREFIX=" + prefix + ": " + err.Error()
			return
		}
		// Debian's python3 (a pyenv python3 first on PATH lacks the
		// modules rclpy needs), and no ROS environment of the caller's.
		var env []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if k == "PATH" || k == "PYTHONPATH" || k == "PYENV_VERSION" || k == "CYCLONEDDS_URI" ||
				k == "http_proxy" || k == "HTTP_PROXY" || k == "no_proxy" || k == "NO_PROXY" ||
				strings.HasPrefix(k, "ROS_") || strings.HasPrefix(k, "AMENT_") || strings.HasPrefix(k, "COLCON_") ||
				k == "RMW_IMPLEMENTATION" || k == "CMAKE_PREFIX_PATH" || k == "LD_LIBRARY_PATH" {
				continue
			}
			env = append(env, kv)
		}
		env = append(env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
		cmd := exec.Command("/bin/bash", "-c", `source "$1" >/dev/null && env -0`, "bash", setup)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			ros2Base.why = "source " + setup + ": " + err.Error()
			return
		}
		for _, kv := range bytes.Split(out, []byte{0}) {
			if len(kv) > 0 {
				ros2Base.vars = append(ros2Base.vars, string(kv))
			}
		}
		ros2Base.prefix = prefix
	})
}

// NewROS2 returns an environment with ROS 2 sourced, as a user's shell
// has it: setup.bash, RMW_IMPLEMENTATION=rmw_cyclonedds_cpp and
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, nothing else (in particular no
// CYCLONEDDS_URI: tcs must make its clients work without one). ROS_HOME and
// ROS_LOG_DIR are the test's temporary folder. It skips the test, saying
// why, when there is no ROS 2.
func NewROS2(t *testing.T) *Env {
	t.Helper()
	loadROS2()
	if ros2Base.prefix == "" {
		t.Skip(ros2Base.why)
	}
	dir := t.TempDir()
	env := append([]string(nil), ros2Base.vars...)
	env = append(env, "RMW_IMPLEMENTATION=rmw_cyclonedds_cpp", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST",
		"ROS_HOME="+dir, "ROS_LOG_DIR="+filepath.Join(dir, "log"), "PYTHONUNBUFFERED=1")
	return &Env{T: t, Vars: env, Dir: dir}
}

// Get returns the value of variable k in the environment ("" when unset).
func (r *Env) Get(k string) string {
	for i := len(r.Vars) - 1; i >= 0; i-- {
		if kk, v, ok := strings.Cut(r.Vars[i], "="); ok && kk == k {
			return v
		}
	}
	return ""
}
