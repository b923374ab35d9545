package msgs

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/geometry_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// Each sensor frame is what goroslib encodes for the same message.
func TestSensorFrames(t *testing.T) {
	h := std_msgs.Header{Seq: 7, Stamp: time.Unix(0, Epoch+1_000_000_005), FrameId: "imu_link"}
	var unknown [9]float64
	unknown[0] = -1
	for _, c := range []struct {
		m    sensor.Message
		want any
	}{
		{sensor.Message{Kind: sensor.IMU, Frame: "imu_link", Orientation: [4]float64{0.5, -0.5, 0.5, 0.5},
			Angular: [3]float64{0.1, 0.2, -0.3}, Linear: [3]float64{0, 0.25, 9.81}, Unknown: [3]bool{false, true, false}},
			&sensor_msgs.Imu{Header: h, Orientation: geometry_msgs.Quaternion{X: 0.5, Y: -0.5, Z: 0.5, W: 0.5},
				AngularVelocity: geometry_msgs.Vector3{X: 0.1, Y: 0.2, Z: -0.3}, AngularVelocityCovariance: unknown,
				LinearAcceleration: geometry_msgs.Vector3{Y: 0.25, Z: 9.81}}},
		{sensor.Message{Kind: sensor.Wrench, Frame: "imu_link", Linear: [3]float64{1, -2, 3.5}, Angular: [3]float64{0, 0.125, -1}},
			&geometry_msgs.WrenchStamped{Header: h, Wrench: geometry_msgs.Wrench{Force: geometry_msgs.Vector3{X: 1, Y: -2, Z: 3.5},
				Torque: geometry_msgs.Vector3{Y: 0.125, Z: -1}}}},
		{sensor.Message{Kind: sensor.Range, Frame: "imu_link", Range: 2.75},
			&sensor_msgs.Range{Header: h, RadiationType: sensor_msgs.Range_INFRARED, MaxRange: float32(math.Inf(1)), Range: 2.75}},
	} {
		want := encode(t, c.want)
		got := AppendSensor(nil, 7, Epoch+1_000_000_005, &c.m)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n tcs      % x\n goroslib % x", c.m.Kind, got, want)
		}
		if SensorType(c.m.Kind).Name != map[sensor.Kind]string{sensor.IMU: "sensor_msgs/Imu", sensor.Wrench: "geometry_msgs/WrenchStamped",
			sensor.Range: "sensor_msgs/Range"}[c.m.Kind] {
			t.Errorf("%s: ROS 1 type %s", c.m.Kind, SensorType(c.m.Kind).Name)
		}
	}
	buf := make([]byte, 0, 512)
	m := sensor.Message{Kind: sensor.IMU, Frame: "imu"}
	if n := testing.AllocsPerRun(100, func() { buf = AppendSensor(buf[:0], 1, 1, &m) }); n != 0 {
		t.Errorf("AppendSensor: %g allocations", n)
	}
}
