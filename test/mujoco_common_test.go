//go:build ros2 || mujoco

package test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/report"
)

// diffDriveStep is the step of diffDriveScenario's world.
const diffDriveStep = int64(5e6)

// diffDriveScenario writes a 2 s scenario of the MuJoCo differential-drive
// base (robot base, step 5 ms) with the top-level YAML ros and one
// periodic ROS client drive at 50 Hz running argv.
func diffDriveScenario(t *testing.T, ros string, argv []string) string {
	t.Helper()
	model, err := filepath.Abs("../dynamics/mujoco/models/diffdrive.xml")
	if err != nil {
		t.Fatal(err)
	}
	var q []string
	for _, a := range argv {
		q = append(q, fmt.Sprintf("%q", a))
	}
	y := fmt.Sprintf(`name: mujoco-sensors
duration: 2s
quantum: 1ms
wall_limit: 4m
%sdynamics:
  model: mujoco
  step: 5ms
  params: {mjcf: %q}
robots:
  - name: base
    clients:
      - name: drive
        cmd: [%s]
        api: ros
        class: periodic
        period: 20ms
        priority: 20
`, ros, model, strings.Join(q, ", "))
	path := filepath.Join(t.TempDir(), "mujoco.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkDiffDriveSensors checks a completed run of diffDriveScenario whose
// node printed each message it got on imu and front_range (the format of
// test/controllers/ros2/rclpy_sensors.py): every sample arrived, in order,
// stamped at its step, to the run's end; the IMU says the base stands
// upright under gravity, the range shrinks as the base drives toward the wall; the
// recording holds one message of each per step.
func checkDiffDriveSensors(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		if c := r.sum.Clients; len(c) > 0 {
			t.Logf("log of drive:\n%s", tail(c[0].Log, 30))
		}
		t.Fatalf("exit %d, ended %q\n%s", r.code, r.sum.Ended, lastLines(r.out, 20))
	}
	log := client(t, r.sum, "drive").Log
	checkStamps := func(kind string, stamps []int64) {
		t.Helper()
		if len(stamps) == 0 {
			t.Fatalf("drive received no %s message", kind)
		}
		for k, s := range stamps {
			if s%diffDriveStep != 0 || k > 0 && s != stamps[k-1]+diffDriveStep {
				t.Fatalf("%s message %d stamped %d ns after %d: want every step of %d ns in order", kind, k, s, stamps[max(k-1, 0)], diffDriveStep)
			}
		}
		if last := stamps[len(stamps)-1]; last != 2e9 {
			t.Errorf("last %s message stamped %d ns, want the run's end 2 s", kind, last)
		}
	}
	var stamps []int64
	var vertical []float64
	for _, l := range logLines(t, log, "imu ") {
		var ns int64
		var frame string
		var q [4]float64
		var a [3]float64
		var cov float64
		if _, err := fmt.Sscanf(l, "imu %d %s %g %g %g %g %g %g %g %g", &ns, &frame, &q[0], &q[1], &q[2], &q[3], &a[0], &a[1], &a[2], &cov); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		norm := q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3]
		if frame != "imu" || math.Abs(norm-1) > 1e-6 || cov != 0 {
			t.Fatalf("%q: want frame imu, a unit quaternion, orientation known", l)
		}
		// The base rocks on its wheels and now and then a caster strikes
		// the floor: a sample can read an impact of several g, and which
		// samples do depends on when the commands arrived (so on the
		// node's CPU time). What holds for every sample is that the base
		// is upright.
		if math.Abs(q[0]) > 0.05 || math.Abs(q[1]) > 0.05 {
			t.Fatalf("%q: want the base upright (roll and pitch under 6°)", l)
		}
		if ns-msgs.Epoch >= 5e8 {
			vertical = append(vertical, a[2])
		}
		stamps = append(stamps, ns-msgs.Epoch)
	}
	checkStamps("imu", stamps)
	// Once it stands on its wheels (it starts just above the floor and
	// falls onto them), the accelerometer reads gravity's reaction, up:
	// the median of the samples is within 0.1 m/s² of g. Scripted
	// command timings on the embedded model give medians of 9.806 to
	// 9.810 m/s²; a wrong axis, sign or unit is off by 9.81 or more.
	if len(vertical) == 0 {
		t.Fatal("no imu message after 0.5 s")
	}
	slices.Sort(vertical)
	if med := vertical[len(vertical)/2]; math.Abs(med-9.81) > 0.1 {
		t.Errorf("median vertical acceleration %.3f m/s² over %d samples after 0.5 s, want 9.81 (gravity's reaction, up)", med, len(vertical))
	}
	stamps = stamps[:0]
	var ranges []float64
	for _, l := range logLines(t, log, "range ") {
		var ns int64
		var frame string
		var rg float64
		if _, err := fmt.Sscanf(l, "range %d %s %g", &ns, &frame, &rg); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if frame != "front" || !(rg > 0 && rg < 5) {
			t.Fatalf("%q: want frame front and the wall within 5 m", l)
		}
		stamps = append(stamps, ns-msgs.Epoch)
		ranges = append(ranges, rg)
	}
	checkStamps("range", stamps)
	if first, last := ranges[0], ranges[len(ranges)-1]; !(last < first-0.3) {
		t.Errorf("range %.3f m at first, %.3f m at the end: the base did not drive toward the wall", first, last)
	}
	counts := map[string]int64{}
	for _, tp := range r.sum.Recording.Topics {
		counts[tp.Topic] = tp.Messages
	}
	if n := counts["/base/joint_states"]; n < 400 || counts["/base/imu"] != n || counts["/base/front_range"] != n {
		t.Errorf("recorded %d joint states, %d imu, %d front_range: want one of each per step (~400)", n, counts["/base/imu"], counts["/base/front_range"])
	}
}
