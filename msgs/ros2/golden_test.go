package ros2

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// goldenCases are the values of testdata/golden.cpp, encoded by this
// package.
func goldenCases() map[string][]byte {
	cov := [36]float64{}
	for i := range cov {
		cov[i] = float64(i) * 0.01
	}
	cov2 := [36]float64{}
	cov2[0], cov2[35] = 1, 2
	gid := func(seed byte) Gid {
		var g Gid
		for i := range g {
			g[i] = seed + byte(i)
		}
		return g
	}
	pi := &ParticipantInfo{Gid: gid(1), Nodes: []NodeEntitiesInfo{{Namespace: "/", Name: "tcs",
		Readers: []Gid{gid(40)}, Writers: []Gid{gid(80), gid(120)}}}}
	return map[string][]byte{
		"clock":              AppendClock(nil, 12_345_678_901),
		"clock0":             AppendClock(nil, 10_000_000),
		"float64":            AppendFloat64(nil, -1.25),
		"multiarray":         AppendFloat64MultiArray(nil, []MultiArrayDimension{{"torque", 2, 2}}, 0, []float64{0.5, -3}),
		"multiarray_empty":   AppendFloat64MultiArray(nil, nil, 0, nil),
		"jointstate":         AppendJointState(nil, 1_000_000_500, "base", []string{"pendulum_joint", "j2"}, []float64{3.14, 0.1}, []float64{-2.5, 7}, nil),
		"jointstate_noframe": AppendJointState(nil, 1e9, "", []string{"a"}, []float64{1}, []float64{2}, nil),
		"imu": AppendSensor(nil, 2_000_000_005, &sensor.Message{Kind: sensor.IMU, Frame: "imu_link", Orientation: [4]float64{0.5, -0.5, 0.5, 0.5},
			Angular: [3]float64{0.1, 0.2, -0.3}, Linear: [3]float64{0, 0.25, 9.81}, Unknown: [3]bool{false, true, false}}),
		"wrench": AppendSensor(nil, 3e9, &sensor.Message{Kind: sensor.Wrench, Frame: "wrist", Linear: [3]float64{1, -2, 3.5}, Angular: [3]float64{0, 0.125, -1}}),
		"range":  AppendSensor(nil, 4_999_999_999, &sensor.Message{Kind: sensor.Range, Frame: "front", Range: 2.75}),
		"twist":  AppendTwist(nil, TwistMsg{Vector3{1, 2, 3}, Vector3{-0.5, 0, 0.25}}),
		"odometry": AppendOdometry(nil, &OdometryMsg{Header: Header{7_000_000_008, "odom"}, ChildFrameID: "base_link",
			Position: Vector3{1.5, -2, 0}, Orientation: Quaternion{0, 0, 0.38268343236, 0.92387953251}, PoseCovariance: cov,
			Twist: TwistMsg{Vector3{0.3, 0, 0}, Vector3{0, 0, -0.1}}, TwistCovariance: cov2}),
		"laserscan": AppendLaserScan(nil, &LaserScanMsg{Header: Header{3_999_999_999, "laser"}, AngleMin: -1.5, AngleMax: 1.5,
			AngleIncrement: 0.75, ScanTime: 0.1, RangeMin: 0.05, RangeMax: 30, Ranges: []float32{1, 2.5, 30, 0.125, 4}}),
		"diagnostics": AppendDiagnosticArray(nil, &DiagnosticArrayMsg{Header: Header{2e9, ""}, Status: []DiagnosticStatusMsg{
			{Level: 0, Name: "tcs: run", Message: "consistent", HardwareID: "host", Values: []KeyValue{{"virtual_s", "1"}, {"drift_s", "0.00012"}}},
			{Level: 1, Name: "tcs: arm/pd", Message: "running", HardwareID: "host"}}}),
		"diagnostic_status": AppendDiagnosticStatus(nil, &DiagnosticStatusMsg{Level: 1, Name: "tcs", Message: "playing, deadline misses",
			Values: []KeyValue{{"state", "playing"}, {"real_time_factor", "0.5"}}}),
		"discovery_humble": AppendParticipantInfo(nil, Humble, pi),
		"discovery_iron":   AppendParticipantInfo(nil, Iron, pi),
	}
}

// fastcdrGolden builds and runs testdata/golden.cpp against Debian's
// libfastcdr-dev and returns its samples by name.
func fastcdrGolden(t *testing.T) map[string][]byte {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ missing: apt-get install g++ libfastcdr-dev")
	}
	bin := filepath.Join(t.TempDir(), "golden")
	out, err := exec.Command("g++", "-std=c++17", "-O1", "testdata/golden.cpp", "-o", bin, "-lfastcdr").CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("fastcdr/Cdr.h")) {
			t.Skipf("fastcdr headers missing: apt-get install libfastcdr-dev\n%s", out)
		}
		t.Fatalf("build testdata/golden.cpp: %v\n%s", err, out)
	}
	out, err = exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("run golden: %v", err)
	}
	got := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, hx, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("golden printed %q", sc.Text())
		}
		b, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatalf("golden %s: %v", name, err)
		}
		got[name] = b
	}
	return got
}

// TestGoldenFastCDR: every sample tcs encodes is byte for byte what
// fastcdr writes for the same values.
func TestGoldenFastCDR(t *testing.T) {
	want := fastcdrGolden(t)
	cases := goldenCases()
	if len(want) != len(cases) {
		t.Errorf("golden.cpp printed %d cases, the test has %d", len(want), len(cases))
	}
	for name, b := range cases {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s: golden.cpp did not print it", name)
		case !bytes.Equal(b, w):
			t.Errorf("%s differs from fastcdr:\n tcs     % x\n fastcdr % x", name, b, w)
		}
	}
}

// TestRoundTrip decodes what was encoded, also with the up to 3 padding
// bytes an RTPS DATA submessage may add.
func TestRoundTrip(t *testing.T) {
	c := goldenCases()
	for _, pad := range [][]byte{nil, {0, 0, 0}} {
		if ns, err := DecodeClock(append(c["clock"], pad...)); err != nil || ns != 12_345_678_901 {
			t.Errorf("clock %d %v", ns, err)
		}
		if v, err := DecodeFloat64(append(c["float64"], pad...)); err != nil || v != -1.25 {
			t.Errorf("float64 %v %v", v, err)
		}
		if v, err := DecodeFloat64MultiArray(append(c["multiarray"], pad...), nil); err != nil || !reflect.DeepEqual(v, []float64{0.5, -3}) {
			t.Errorf("multiarray %v %v", v, err)
		}
	}
	js, err := DecodeJointState(c["jointstate"])
	if err != nil || js.Header.Stamp != 1_000_000_500 || js.Header.FrameID != "base" || !reflect.DeepEqual(js.Name, []string{"pendulum_joint", "j2"}) ||
		!reflect.DeepEqual(js.Velocity, []float64{-2.5, 7}) || len(js.Effort) != 0 {
		t.Errorf("jointstate %+v %v", js, err)
	}
	for name, kind := range map[string]sensor.Kind{"imu": sensor.IMU, "wrench": sensor.Wrench, "range": sensor.Range} {
		var m sensor.Message
		stamp, err := DecodeSensor(c[name], kind, &m)
		var back sensor.Message
		if err == nil {
			again := AppendSensor(nil, stamp, &m)
			if _, err = DecodeSensor(again, kind, &back); err == nil && !bytes.Equal(again, c[name]) {
				t.Errorf("%s: decoded and encoded again differs", name)
			}
		}
		if err != nil || back != m || m.Frame == "" {
			t.Errorf("%s: %+v %v", name, m, err)
		}
	}
	if tw, err := DecodeTwist(c["twist"]); err != nil || tw.Angular.Z != 0.25 {
		t.Errorf("twist %+v %v", tw, err)
	}
	if o, err := DecodeOdometry(c["odometry"]); err != nil || o.ChildFrameID != "base_link" || o.PoseCovariance[1] != 0.01 || o.TwistCovariance[35] != 2 {
		t.Errorf("odometry %+v %v", o, err)
	}
	if s, err := DecodeLaserScan(c["laserscan"]); err != nil || len(s.Ranges) != 5 || s.Ranges[3] != 0.125 || s.RangeMax != 30 {
		t.Errorf("laserscan %+v %v", s, err)
	}
	if d, err := DecodeDiagnosticArray(c["diagnostics"]); err != nil || len(d.Status) != 2 || d.Status[0].Values[1].Value != "0.00012" || d.Status[1].Level != 1 {
		t.Errorf("diagnostics %+v %v", d, err)
	}
	if d, err := DecodeDiagnosticStatus(c["diagnostic_status"]); err != nil || d.Level != 1 || d.Name != "tcs" || d.HardwareID != "" ||
		len(d.Values) != 2 || d.Values[1] != (KeyValue{"real_time_factor", "0.5"}) {
		t.Errorf("diagnostic_status %+v %v", d, err)
	}
	for _, d := range []Distro{Humble, Iron} {
		p, err := DecodeParticipantInfo(c["discovery_"+d.String()], d)
		if err != nil || p.Gid[15] != 16 || len(p.Nodes) != 1 || p.Nodes[0].Name != "tcs" || len(p.Nodes[0].Writers) != 2 || p.Nodes[0].Writers[1][0] != 120 {
			t.Errorf("discovery %s: %+v %v", d, p, err)
		}
	}
}

// TestNames checks the ROS 2 ↔ DDS naming.
func TestNames(t *testing.T) {
	for in, want := range map[string]string{"rosgraph_msgs/msg/Clock": "rosgraph_msgs::msg::dds_::Clock_", "std_msgs/Float64": "std_msgs::msg::dds_::Float64_"} {
		if got, err := DDSType(in); err != nil || got != want {
			t.Errorf("DDSType(%q) = %q, %v", in, got, err)
		}
	}
	if got := ROSType("rosgraph_msgs::msg::dds_::Clock_"); got != "rosgraph_msgs/msg/Clock" {
		t.Errorf("ROSType = %q", got)
	}
	for _, bad := range []string{"", "Clock", "a/b/c/d", "a//b", "a::b/c"} {
		if _, err := DDSType(bad); err == nil {
			t.Errorf("DDSType(%q) accepted", bad)
		}
	}
	if got, err := TopicName("/arm/command"); err != nil || got != "rt/arm/command" {
		t.Errorf("TopicName = %q %v", got, err)
	}
	for _, bad := range []string{"arm", "/", "/a/", "/a b", "/a//b"} {
		if _, err := TopicName(bad); err == nil {
			t.Errorf("TopicName(%q) accepted", bad)
		}
	}
}
