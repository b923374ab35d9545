//go:build mujoco

package mujoco

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/dynamics/remote"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

const (
	armXML       = "models/arm.xml"
	diffdriveXML = "models/diffdrive.xml"
	ms           = int64(1e6)
)

func load(t testing.TB, file string, step int64) *World {
	t.Helper()
	w, err := New(Conf{MJCF: file}, 1, step)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// writeModel writes an MJCF text into a temporary file and returns its path.
func writeModel(t *testing.T, name, xml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func finite(vs []float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func TestShippedModelsDescribeThemselves(t *testing.T) {
	arm := load(t, armXML, ms)
	if got, want := arm.JointNames(0), []string{"base_yaw", "shoulder", "elbow"}; !slices.Equal(got, want) {
		t.Errorf("arm joints %v, want %v", got, want)
	}
	if arm.ObservationLen(0) != 6+7 || arm.CommandLen(0) != 3 || arm.Timestep() != ms {
		t.Errorf("arm: observation %d, command %d, timestep %d", arm.ObservationLen(0), arm.CommandLen(0), arm.Timestep())
	}
	for i, a := range arm.Actuators() {
		if a.Kind != KindEffort || a.Joint != arm.JointNames(0)[i] || !a.Limited || a.CtrlRange != [2]float64{-20, 20} {
			t.Errorf("arm actuator %d: %+v", i, a)
		}
	}
	wantArm := []Sensor{
		{Name: "wrist_force", Type: Force, Object: "wrist", ObjectType: "site", Dim: 3},
		{Name: "wrist_torque", Type: Torque, Object: "wrist", ObjectType: "site", Dim: 3},
		{Name: "fingertip_touch", Type: Touch, Object: "fingertip", ObjectType: "site", Dim: 1},
	}
	checkSensors(t, "arm", arm.Sensors(), wantArm)
	checkGroups(t, "arm", arm.SensorGroups(0), []sensor.Sensor{
		{Name: "wrist", Frame: "wrist", Kind: sensor.Wrench, At: [3]int{6, 9, -1}},
		{Name: "fingertip_touch", Frame: "fingertip", Kind: sensor.Touch, At: [3]int{12, -1, -1}},
	})

	dd := load(t, diffdriveXML, ms)
	if got, want := dd.JointNames(0), []string{"left_wheel_joint", "right_wheel_joint"}; !slices.Equal(got, want) {
		t.Errorf("diffdrive joints %v, want %v (the free joint left out)", got, want)
	}
	for i, a := range dd.Actuators() {
		if a.Kind != KindVelocity || a.Joint != dd.JointNames(0)[i] {
			t.Errorf("diffdrive actuator %d: %+v", i, a)
		}
	}
	wantDD := []Sensor{
		{Name: "imu_accel", Type: Accelerometer, Object: "imu", ObjectType: "site", Dim: 3},
		{Name: "imu_gyro", Type: Gyro, Object: "imu", ObjectType: "site", Dim: 3},
		{Name: "imu_orientation", Type: FrameQuat, Object: "imu", ObjectType: "site", Dim: 4},
		{Name: "base_position", Type: FramePos, Object: "imu", ObjectType: "site", Dim: 3},
		{Name: "front_range", Type: Rangefinder, Object: "front", ObjectType: "site", Dim: 1},
	}
	checkSensors(t, "diffdrive", dd.Sensors(), wantDD)
	// The IMU's parts are in part order (orientation, angular velocity,
	// linear acceleration), not the model's; framepos is no part of one.
	checkGroups(t, "diffdrive", dd.SensorGroups(0), []sensor.Sensor{
		{Name: "imu", Frame: "imu", Kind: sensor.IMU, At: [3]int{4, 8, 11}},
		{Name: "front_range", Frame: "front", Kind: sensor.Range, At: [3]int{14, -1, -1}},
	})
	if dd.ObservationLen(0) != 15 || dd.SensorGroups(1) != nil {
		t.Errorf("diffdrive: observation %d, want 4 joint values and 11 sensor values; body 1 has %v", dd.ObservationLen(0), dd.SensorGroups(1))
	}
}

func checkGroups(t *testing.T, model string, got, want []sensor.Sensor) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s publishes %+v, want %+v", model, got, want)
	}
}

// The observation carries, after the joints, the published sensors'
// values as ReadSensor reads them at the same instant.
func TestObservationCarriesSensors(t *testing.T) {
	w := load(t, diffdriveXML, ms)
	w.SetCommand(0, []float64{6, 4})
	obs := make([]float64, w.ObservationLen(0))
	var want [4]float64
	for range 200 {
		w.Step(ms)
		if n := w.Observe(0, obs); n != len(obs) {
			t.Fatalf("Observe wrote %d of %d", n, len(obs))
		}
		for _, c := range []struct {
			sensor, at int
		}{{2, 4}, {1, 8}, {0, 11}, {4, 14}} {
			s := w.Sensors()[c.sensor]
			w.ReadSensor(c.sensor, want[:])
			if !slices.Equal(obs[c.at:c.at+s.Dim], want[:s.Dim]) {
				t.Fatalf("t = %d ns: %s in the observation %v, read %v", w.Now(), s.Name, obs[c.at:c.at+s.Dim], want[:s.Dim])
			}
		}
	}
	if q := obs[4:8]; math.Abs(q[0]*q[0]+q[1]*q[1]+q[2]*q[2]+q[3]*q[3]-1) > 1e-9 || obs[13] < 9 {
		t.Fatalf("orientation %v not a unit quaternion or vertical acceleration %v not ~g", q, obs[13])
	}
}

// Two sensor groups on one site are told apart by a suffix; a sensor
// that is not on a site, or of a type no message carries, is left out.
func TestGroupSensorsNames(t *testing.T) {
	in := []Sensor{
		{Name: "a", Type: Accelerometer, Object: "s", ObjectType: "site", Dim: 3},
		{Name: "f", Type: Force, Object: "s", ObjectType: "site", Dim: 3},
		{Name: "a2", Type: Accelerometer, Object: "s", ObjectType: "site", Dim: 3},
		{Name: "p", Type: FramePos, Object: "s", ObjectType: "site", Dim: 3},
		{Name: "q", Type: FrameQuat, Object: "b", ObjectType: "body", Dim: 4},
	}
	got, order := groupSensors(in, 2)
	want := []sensor.Sensor{
		{Name: "s_imu", Frame: "s", Kind: sensor.IMU, At: [3]int{-1, -1, 2}},
		{Name: "s_wrench", Frame: "s", Kind: sensor.Wrench, At: [3]int{5, -1, -1}},
	}
	if !slices.Equal(got, want) || !slices.Equal(order, []int{0, 1}) {
		t.Fatalf("groups %+v, order %v; want %+v, [0 1]", got, order, want)
	}
}

func checkSensors(t *testing.T, model string, got, want []Sensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d sensors %+v, want %d", model, len(got), got, len(want))
	}
	for i := range want {
		g := got[i]
		g.adr = 0
		if g != want[i] {
			t.Errorf("%s sensor %d: %+v, want %+v", model, i, got[i], want[i])
		}
	}
}

func TestTablesFollowTheHeaders(t *testing.T) {
	if len(sensorTypes) != nSensorTypes || len(objectTypes) != nObjectTypes {
		t.Fatalf("sensor types %d (headers %d), object types %d (headers %d)", len(sensorTypes), nSensorTypes, len(objectTypes), nObjectTypes)
	}
}

// TestOneSecondWithoutNaN steps both models for 1 s under commands and
// reads every joint and sensor at every step.
func TestOneSecondWithoutNaN(t *testing.T) {
	for _, tc := range []struct {
		file string
		cmd  []float64
	}{
		{armXML, []float64{2, -5, 3}},
		{diffdriveXML, []float64{6, 4}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			w := load(t, tc.file, ms)
			w.SetCommand(0, tc.cmd)
			obs := make([]float64, w.ObservationLen(0))
			var buf [8]float64
			for range 1000 {
				w.Step(ms)
				w.Observe(0, obs)
				if !finite(obs) {
					t.Fatalf("t = %d ns: observation %v", w.Now(), obs)
				}
				for i, s := range w.Sensors() {
					if n := w.ReadSensor(i, buf[:]); n != s.Dim || !finite(buf[:n]) {
						t.Fatalf("t = %d ns: sensor %s read %d values %v", w.Now(), s.Name, n, buf[:n])
					}
				}
			}
			if w.Now() != 1e9 || w.Err() != nil || w.Warnings() != nil {
				t.Fatalf("after 1 s: Now %d, Err %v, warnings %v", w.Now(), w.Err(), w.Warnings())
			}
		})
	}
}

func sensorByName(t *testing.T, w *World, name string) int {
	t.Helper()
	for i, s := range w.Sensors() {
		if s.Name == name {
			return i
		}
	}
	t.Fatalf("no sensor %q", name)
	return -1
}

// TestDiffDriveDrives drives the base forward: it moves toward the wall,
// the rangefinder sees it come closer, the IMU sees gravity.
func TestDiffDriveDrives(t *testing.T) {
	w := load(t, diffdriveXML, ms)
	var pos0, pos, rng0, rng, acc [3]float64
	w.ReadSensor(sensorByName(t, w, "base_position"), pos0[:])
	w.ReadSensor(sensorByName(t, w, "front_range"), rng0[:])
	w.SetCommand(0, []float64{5, 5}) // 5 rad/s × 0.1 m = 0.5 m/s
	for range 2000 {
		w.Step(ms)
	}
	w.ReadSensor(sensorByName(t, w, "base_position"), pos[:])
	w.ReadSensor(sensorByName(t, w, "front_range"), rng[:])
	w.ReadSensor(sensorByName(t, w, "imu_accel"), acc[:])
	dx := pos[0] - pos0[0]
	if dx < 0.7 || dx > 1.0 || math.Abs(pos[1]-pos0[1]) > 0.02 {
		t.Errorf("after 2 s at 0.5 m/s the base moved (%.3f, %.3f) m, want ≈ (0.9, 0)", dx, pos[1]-pos0[1])
	}
	if math.Abs(rng0[0]-2.75) > 1e-6 || math.Abs((rng0[0]-rng[0])-dx) > 0.01 {
		t.Errorf("range %.4f → %.4f m while the base moved %.4f m; want 2.75 at start", rng0[0], rng[0], dx)
	}
	if math.Abs(acc[2]-9.81) > 0.2 {
		t.Errorf("accelerometer %v, want ≈ (0, 0, 9.81) at constant speed", acc)
	}
	obs := make([]float64, 4)
	w.Observe(0, obs)
	if math.Abs(obs[2]-5) > 0.1 || math.Abs(obs[3]-5) > 0.1 {
		t.Errorf("wheel speeds %v, want ≈ 5 rad/s", obs[2:])
	}
	t.Logf("2 s at 5 rad/s: moved %.4f m, range %.4f → %.4f m, wheels %.3f %.3f rad/s", dx, rng0[0], rng[0], obs[2], obs[3])
}

// TestArmSensors: at rest upright the wrist carries the tool's weight;
// pushed down onto the table, the fingertip feels it.
func TestArmSensors(t *testing.T) {
	w := load(t, armXML, ms)
	force, torque, touch := sensorByName(t, w, "wrist_force"), sensorByName(t, w, "wrist_torque"), sensorByName(t, w, "fingertip_touch")
	var f, tq, tc [3]float64
	w.ReadSensor(force, f[:])
	w.ReadSensor(torque, tq[:])
	w.ReadSensor(touch, tc[:])
	weight := 4.0 / 3 * math.Pi * 0.035 * 0.035 * 0.035 * 1000 * 9.81 // the fingertip sphere
	if math.Abs(f[2]-weight) > 1e-3 || math.Abs(f[0]) > 1e-9 || maxDiff(tq[:], make([]float64, 3)) > 1e-9 || tc[0] != 0 {
		t.Errorf("upright at rest: wrist force %v (want (0, 0, %.4f)), torque %v, touch %v", f, weight, tq, tc[0])
	}
	w.SetCommand(0, []float64{0, 10, 0})
	for range 1000 {
		w.Step(ms)
	}
	w.ReadSensor(touch, tc[:])
	if tc[0] < 1 {
		t.Errorf("touch %v N with the fingertip pushed onto the table", tc[0])
	}
	t.Logf("wrist force at rest %.4f N; fingertip on the table: touch %.3f N", f[2], tc[0])
}

// TestSensorsAreCurrent: a sensor read after Step sees the state after it
// (MuJoCo's own sensordata lags one step behind).
func TestSensorsAreCurrent(t *testing.T) {
	w := load(t, diffdriveXML, ms)
	w.SetCommand(0, []float64{5, -5})
	for range 300 {
		w.Step(ms)
	}
	var pos [3]float64
	w.ReadSensor(sensorByName(t, w, "base_position"), pos[:])
	if !slices.Equal(pos[:], w.qpos[:3]) { // the site is at the chassis' origin
		t.Fatalf("base_position %v, chassis at %v", pos, w.qpos[:3])
	}
}

func TestWholeStepsAreMuJoCosOwn(t *testing.T) {
	for _, file := range []string{armXML, diffdriveXML} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cmd := []float64{3, -2, 1}
			ours := load(t, file, ms)
			ours5 := load(t, file, 5*ms) // the scenario's step: 5 timesteps
			ref := load(t, file, ms)
			for _, w := range []*World{ours, ours5, ref} {
				w.SetCommand(0, cmd)
			}
			var buf [8]float64
			for k := range 1000 {
				ours.Step(ms)
				if k%7 == 0 { // reading sensors changes nothing
					for i := range ours.Sensors() {
						ours.ReadSensor(i, buf[:])
					}
				}
			}
			for range 200 {
				ours5.Step(5 * ms)
			}
			ref.nativeSteps(1000)
			want := ref.stateBits()
			if got := ours.stateBits(); !slices.Equal(got, want) {
				t.Errorf("1000 Step(1ms) differ from 1000 mj_step")
			}
			if got := ours5.stateBits(); !slices.Equal(got, want) {
				t.Errorf("200 Step(5ms) differ from 1000 mj_step")
			}
			if ours.Now() != 1e9 || ours5.Now() != 1e9 || float64(ours.h.d.time) != 1 {
				t.Errorf("Now %d and %d, mjData.time %v, want 1 s", ours.Now(), ours5.Now(), float64(ours.h.d.time))
			}
		})
	}
}

// maxDiff is the largest |a[i] − b[i]|.
func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// TestPartialSteps: 1 ms stepped as 0.3 + 0.7 ms lands close to one 1 ms
// step, in time exactly.
func TestPartialSteps(t *testing.T) {
	for _, tc := range []struct {
		file      string
		cmd       []float64
		one, many float64 // bounds on |Δq|, |Δq̇| after one split step and after 1 s of them
	}{
		{armXML, []float64{3, -8, 4}, 1e-5, 1e-2},
		// The base rocks between its casters (neutrally stable): after 1 s
		// of split steps its pitch and position are off by millimetres.
		{diffdriveXML, []float64{6, 3}, 1e-5, 5e-2},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			whole := load(t, tc.file, ms)
			split := load(t, tc.file, ms)
			for _, w := range []*World{whole, split} {
				w.SetCommand(0, tc.cmd)
				for range 200 { // get moving
					w.Step(ms)
				}
			}
			whole.Step(ms)
			split.Step(300_000)
			split.Step(700_000)
			if whole.Now() != split.Now() {
				t.Fatalf("time %d vs %d", whole.Now(), split.Now())
			}
			dq, dv := maxDiff(whole.qpos, split.qpos), maxDiff(whole.qvel, split.qvel)
			t.Logf("one 1 ms step as 0.3 + 0.7 ms: max |Δq| %.3g, max |Δq̇| %.3g", dq, dv)
			if dq > tc.one || dv > 100*tc.one || dq == 0 {
				t.Errorf("one split step: |Δq| %.3g, |Δq̇| %.3g; want ≤ %g, %g and not 0", dq, dv, tc.one, 100*tc.one)
			}
			for range 999 {
				whole.Step(ms)
				split.Step(300_000)
				split.Step(700_000)
			}
			dq, dv = maxDiff(whole.qpos, split.qpos), maxDiff(whole.qvel, split.qvel)
			t.Logf("1 s of split steps: max |Δq| %.3g, max |Δq̇| %.3g", dq, dv)
			if dq > tc.many || dv > 10*tc.many || whole.Now() != split.Now() {
				t.Errorf("1 s of split steps: |Δq| %.3g, |Δq̇| %.3g, time %d vs %d", dq, dv, whole.Now(), split.Now())
			}
			if float64(whole.h.m.opt.timestep) != 0.001 {
				t.Errorf("timestep left at %v", float64(whole.h.m.opt.timestep))
			}
		})
	}
}

func TestCommands(t *testing.T) {
	w := load(t, armXML, ms)
	w.SetCommand(0, []float64{1, 2, 3, 4}) // extra ignored
	if !slices.Equal(w.ctrl, []float64{1, 2, 3}) {
		t.Fatalf("ctrl %v", w.ctrl)
	}
	w.SetCommand(0, []float64{math.NaN(), math.Inf(1)}) // non-finite and missing → 0
	if !slices.Equal(w.ctrl, []float64{0, 0, 0}) {
		t.Fatalf("ctrl %v", w.ctrl)
	}
	w.SetCommand(1, []float64{5})
	w.SetCommand(-1, []float64{5})
	if !slices.Equal(w.ctrl, []float64{0, 0, 0}) {
		t.Fatalf("other bodies changed ctrl: %v", w.ctrl)
	}
	w.SetCommand(0, []float64{50}) // clamped by MuJoCo to 20 N·m
	for range 100 {
		w.Step(ms)
	}
	obs := make([]float64, 6)
	w.Observe(0, obs)
	if obs[0] <= 0 || obs[3] <= 0 {
		t.Fatalf("a positive yaw torque left yaw %v, rate %v", obs[0], obs[3])
	}
	var short [2]float64
	if n := w.Observe(0, short[:]); n != 2 || short[0] != obs[0] || short[1] != obs[1] {
		t.Fatalf("short dst: %d %v", n, short)
	}
	if w.Observe(1, obs) != 0 || w.ObservationLen(1) != 0 || w.CommandLen(1) != 0 || w.JointNames(1) != nil {
		t.Fatal("body 1 exists")
	}
	var buf [3]float64
	if w.ReadSensor(-1, buf[:]) != 0 || w.ReadSensor(len(w.Sensors()), buf[:]) != 0 {
		t.Fatal("out-of-range sensor read values")
	}
}

func TestReset(t *testing.T) {
	w := load(t, armXML, ms)
	w.SetCommand(0, []float64{5, 5, 5})
	for range 300 {
		w.Step(ms)
	}
	w.Reset()
	obs := make([]float64, 6)
	w.Observe(0, obs)
	if !slices.Equal(obs, make([]float64, 6)) || w.Now() != 300*ms || !slices.Equal(w.ctrl, []float64{5, 5, 5}) {
		t.Fatalf("after Reset: observation %v, Now %d, ctrl %v", obs, w.Now(), w.ctrl)
	}
	if float64(w.h.d.time) != 0.3 {
		t.Fatalf("mjData.time %v after Reset, want the world's 0.3 s", float64(w.h.d.time))
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.xml")
	bad := writeModel(t, "bad.xml", `<mujoco><worldbody><body><joint type="hinj"/></body></worldbody></mujoco>`)
	broken := writeModel(t, "broken.xml", `<mujoco><worldbody>`)
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"", []string{"no MJCF file"}},
		{missing, []string{missing, "no such file"}},
		{dir, []string{dir, "directory"}},
		{bad, []string{bad, "hinj"}},
		{broken, []string{broken, "XML"}},
	} {
		w, err := New(Conf{MJCF: tc.file}, 1, ms)
		if err == nil {
			w.Close()
			t.Errorf("%q loaded", tc.file)
			continue
		}
		if !errors.Is(err, ErrLoad) {
			t.Errorf("%q: %v is not ErrLoad", tc.file, err)
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q: error %q does not say %q", tc.file, err, s)
			}
		}
		t.Logf("%v", err)
	}
}

func TestModelMustFitTheScenario(t *testing.T) {
	odd := writeModel(t, "odd.xml", `<mujoco><option timestep="0.0000000015"/><worldbody/></mujoco>`)
	two := writeModel(t, "two.xml", `<mujoco><option timestep="0.002"/><worldbody/></mujoco>`)
	for _, tc := range []struct {
		file   string
		bodies int
		step   int64
		want   string
	}{
		{armXML, 2, ms, "2 robots"},
		{armXML, 1, 0, "step must be > 0"},
		{armXML, 1, 1500_000, "set dynamics.step to 1ms"},
		{two, 1, ms, "set dynamics.step to 2ms"},
		{odd, 1, ms, "whole number of ns"},
	} {
		w, err := New(Conf{MJCF: tc.file}, tc.bodies, tc.step)
		if err == nil {
			w.Close()
			t.Errorf("%s with %d bodies, step %d: accepted", tc.file, tc.bodies, tc.step)
			continue
		}
		if !errors.Is(err, ErrConf) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %d bodies, step %d: %v; want ErrConf saying %q", tc.file, tc.bodies, tc.step, err, tc.want)
		}
	}
	if w, err := New(Conf{MJCF: two}, 1, 4*ms); err != nil {
		t.Errorf("step 4ms on a 2 ms timestep: %v", err)
	} else {
		w.Close()
	}
}

// TestMuJoCoErrorIsCaught: MuJoCo's fatal errors (here its stack
// overflowing, which its default handler answers by exiting the process)
// become errors: of New while loading, of Err while stepping.
func TestMuJoCoErrorIsCaught(t *testing.T) {
	model := func(nstack int) string {
		return writeModel(t, fmt.Sprintf("stack%d.xml", nstack), fmt.Sprintf(`<mujoco><size nstack="%d"/><worldbody>
			<geom type="plane" size="1 1 .1"/>
			<body pos="0 0 .3"><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>`, nstack))
	}
	w, err := New(Conf{MJCF: model(1)}, 1, 2*ms)
	if err == nil {
		w.Close()
		t.Fatal("a model whose stack cannot hold its first step loaded")
	}
	if !errors.Is(err, ErrLoad) || !strings.Contains(err.Error(), "Stack overflow") {
		t.Fatalf("%v: want ErrLoad with MuJoCo's message about its stack", err)
	}
	t.Logf("%v", err)

	// Enough stack while the box falls, too little once it lands on the
	// floor (4 contacts), at 0.2 s.
	w = load(t, model(200), 2*ms)
	for range 250 {
		w.Step(2 * ms)
	}
	err = w.Err()
	if !errors.Is(err, ErrSimulation) || !strings.Contains(err.Error(), "Stack overflow") || !strings.Contains(err.Error(), "nstack") {
		t.Fatalf("Err() = %v after landing: want ErrSimulation with MuJoCo's message", err)
	}
	t.Logf("%v", err)
	frozen := slices.Clone(w.qpos)
	w.Step(2 * ms)
	w.Reset()
	var buf [3]float64
	if !slices.Equal(frozen, w.qpos) || w.Now() != 502*ms || w.ReadSensor(0, buf[:]) != 0 {
		t.Fatalf("after the failure: qpos %v → %v, Now %d", frozen, w.qpos, w.Now())
	}
}

func TestNoAllocations(t *testing.T) {
	for _, file := range []string{armXML, diffdriveXML} {
		w := load(t, file, ms)
		cmd := make([]float64, w.CommandLen(0))
		obs := make([]float64, w.ObservationLen(0))
		var buf [8]float64
		for name, f := range map[string]func(){
			"Step":       func() { w.Step(ms) },
			"Step split": func() { w.Step(300_000); w.Step(700_000) },
			"SetCommand": func() { cmd[0] += 0.01; w.SetCommand(0, cmd) },
			"Observe":    func() { w.Observe(0, obs) },
			"ReadSensor": func() {
				w.Step(ms)
				for i := range w.Sensors() {
					w.ReadSensor(i, buf[:])
				}
			},
			"Reset": func() { w.Reset() },
		} {
			if a := testing.AllocsPerRun(200, f); a != 0 {
				t.Errorf("%s: %s allocates %v times per call", file, name, a)
			}
		}
	}
}

// threadCPU is the calling thread's CPU time (ns).
func threadCPU(b *testing.B) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return ts.Nano()
}

// benchWorld runs f in a benchmark loop on each shipped model and reports,
// beside the wall time, the CPU time per call (cpu-ns/op), which other
// load on the machine inflates less. The world is reset every 1000 calls,
// so that every run times the same first second of motion.
func benchWorld(b *testing.B, f func(w *World)) {
	for _, file := range []string{armXML, diffdriveXML} {
		b.Run(strings.TrimSuffix(filepath.Base(file), ".xml"), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			w := load(b, file, ms)
			w.SetCommand(0, []float64{1, 1, 1})
			b.ReportAllocs()
			c0, n := threadCPU(b), 0
			for b.Loop() {
				f(w)
				if n++; n%1000 == 0 {
					w.Reset()
				}
			}
			b.ReportMetric(float64(threadCPU(b)-c0)/float64(n), "cpu-ns/op")
		})
	}
}

// BenchmarkStep is Step(1 ms): one mj_step.
func BenchmarkStep(b *testing.B) { benchWorld(b, func(w *World) { w.Step(ms) }) }

// BenchmarkNativeStep is MuJoCo's own mj_step on the same models: Step's
// overhead is the difference.
func BenchmarkNativeStep(b *testing.B) { benchWorld(b, func(w *World) { w.nativeSteps(1) }) }

// BenchmarkStepAndSense adds reading every sensor after each step (one
// mj_forward), as a bridge publishing them at every step would.
func BenchmarkStepAndSense(b *testing.B) {
	var buf [8]float64
	benchWorld(b, func(w *World) {
		w.Step(ms)
		for i := range w.Sensors() {
			w.ReadSensor(i, buf[:])
		}
	})
}

// The diffdrive served by another process through the native world
// protocol (dynamics/remote) gives the embedded one's observations, its
// sensors' included, bit for bit, and names the same sensors.
func TestServedRemotely(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.sock")
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		served <- remote.Serve(c, func(bodies int, step int64) (remote.Model, error) {
			return New(Conf{MJCF: diffdriveXML}, bodies, step)
		})
	}()
	w, err := remote.New(remote.Conf{Socket: path}, 1, ms)
	if err != nil {
		t.Fatal(err)
	}
	local := load(t, diffdriveXML, ms)
	if !slices.Equal(w.SensorGroups(0), local.SensorGroups(0)) || w.ObservationLen(0) != local.ObservationLen(0) {
		t.Fatalf("remote: sensors %+v, observation %d; embedded %+v, %d", w.SensorGroups(0), w.ObservationLen(0), local.SensorGroups(0), local.ObservationLen(0))
	}
	a, b := make([]float64, local.ObservationLen(0)), make([]float64, local.ObservationLen(0))
	for k := range 1000 {
		if k%50 == 7 {
			u := []float64{float64(k%13) - 6, 5}
			for _, x := range []interface {
				Step(int64)
				SetCommand(int, []float64)
			}{w, local} {
				x.Step(ms / 4)
				x.SetCommand(0, u)
				x.Step(ms - ms/4)
			}
		} else {
			w.Step(ms)
			local.Step(ms)
		}
		w.Observe(0, a)
		local.Observe(0, b)
		if !slices.Equal(a, b) {
			t.Fatalf("step %d: remote %v, embedded %v", k, a, b)
		}
	}
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	w.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
