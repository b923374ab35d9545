package msgs

import (
	"encoding/binary"
	"math"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/geometry_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// The ROS 1 types a world's sensors are published as.
var (
	Imu           = mustType(sensor_msgs.Imu{})
	WrenchStamped = mustType(geometry_msgs.WrenchStamped{})
	Range         = mustType(sensor_msgs.Range{})
)

// SensorType is the ROS 1 type of a sensor of kind k.
func SensorType(k sensor.Kind) Type {
	switch k {
	case sensor.IMU:
		return Imu
	case sensor.Range:
		return Range
	}
	return WrenchStamped
}

// AppendSensor appends m as a frame of its ROS 1 message (header seq,
// stamp ns): a sensor_msgs/Imu with zero covariances, the first element
// −1 for a part it does not measure; a geometry_msgs/WrenchStamped; a
// sensor_msgs/Range of an infrared ray (field of view 0, range [0, +Inf)).
func AppendSensor(dst []byte, seq uint32, stamp int64, m *sensor.Message) []byte {
	dst, off := BeginFrame(dst)
	dst = binary.LittleEndian.AppendUint32(dst, seq)
	dst = appendTime(dst, stamp)
	dst = appendString(dst, m.Frame)
	f64 := func(v float64) { dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v)) }
	f32 := func(v float32) { dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v)) }
	cov := func(unknown bool) {
		first := 0.0
		if unknown {
			first = -1
		}
		f64(first)
		for range 8 {
			f64(0)
		}
	}
	switch m.Kind {
	case sensor.IMU:
		for _, v := range m.Orientation {
			f64(v)
		}
		cov(m.Unknown[0])
		for _, v := range m.Angular {
			f64(v)
		}
		cov(m.Unknown[1])
		for _, v := range m.Linear {
			f64(v)
		}
		cov(m.Unknown[2])
	case sensor.Wrench, sensor.Touch:
		for _, v := range m.Linear {
			f64(v)
		}
		for _, v := range m.Angular {
			f64(v)
		}
	case sensor.Range:
		dst = append(dst, sensor_msgs.Range_INFRARED)
		f32(0)
		f32(0)
		f32(float32(math.Inf(1)))
		f32(m.Range)
	}
	return EndFrame(dst, off)
}
