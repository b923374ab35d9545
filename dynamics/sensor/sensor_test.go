package sensor

import (
	"math"
	"testing"
)

func TestMessage(t *testing.T) {
	obs := []float64{9, 9, 0.5, 0.5, 0.5, 0.5, 1, 2, 3, 4, 5, 6, -1, 7}
	var m Message
	imu := Sensor{Name: "imu", Frame: "f", Kind: IMU, At: [3]int{2, 6, 9}}
	imu.Message(obs, &m)
	if m.Orientation != [4]float64{0.5, 0.5, 0.5, 0.5} || m.Angular != [3]float64{1, 2, 3} || m.Linear != [3]float64{4, 5, 6} ||
		m.Unknown != [3]bool{} || m.Frame != "f" || m.Kind != IMU {
		t.Errorf("imu: %+v", m)
	}
	obs[2] = 0.9 // w first in MuJoCo, last in ROS
	imu.Message(obs, &m)
	if m.Orientation[3] != 0.9 || m.Orientation[0] != 0.5 {
		t.Errorf("imu orientation (x y z w) %v from (w x y z) %v", m.Orientation, obs[2:6])
	}
	gyroOnly := Sensor{Kind: IMU, At: [3]int{-1, 6, -1}}
	gyroOnly.Message(obs, &m)
	if m.Unknown != [3]bool{true, false, true} || m.Orientation != [4]float64{0, 0, 0, 1} || m.Linear != [3]float64{} {
		t.Errorf("imu with a gyro alone: %+v", m)
	}
	w := Sensor{Kind: Wrench, At: [3]int{6, 9, -1}}
	w.Message(obs, &m)
	if m.Linear != [3]float64{1, 2, 3} || m.Angular != [3]float64{4, 5, 6} {
		t.Errorf("wrench: %+v", m)
	}
	touch := Sensor{Kind: Touch, At: [3]int{13, -1, -1}}
	touch.Message(obs, &m)
	if m.Linear != [3]float64{0, 0, 7} || m.Angular != [3]float64{} {
		t.Errorf("touch: %+v", m)
	}
	for _, c := range []struct {
		at   int
		want float32
	}{{13, 7}, {12, float32(math.Inf(1))}, {14, float32(math.Inf(1))}} {
		r := Sensor{Kind: Range, At: [3]int{c.at, -1, -1}}
		r.Message(obs, &m)
		if m.Range != c.want {
			t.Errorf("range at %d: %v, want %v", c.at, m.Range, c.want)
		}
	}
	short := Sensor{Kind: Wrench, At: [3]int{12, 13, -1}} // past the end: absent
	short.Message(obs, &m)
	if m.Linear != [3]float64{} || m.Angular != [3]float64{} {
		t.Errorf("wrench past the observation's end: %+v", m)
	}
	if n := testing.AllocsPerRun(100, func() { imu.Message(obs, &m) }); n != 0 {
		t.Errorf("%g allocations", n)
	}
	for k, want := range map[Kind]string{IMU: "sensor_msgs/msg/Imu", Wrench: "geometry_msgs/msg/WrenchStamped",
		Touch: "geometry_msgs/msg/WrenchStamped", Range: "sensor_msgs/msg/Range", 0: "unknown"} {
		if k.String() != want {
			t.Errorf("kind %d: %s", k, k)
		}
	}
}
