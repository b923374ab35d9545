package ros2

import (
	"math"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// Type names of the messages a world's sensors are published as.
const (
	Imu           = "sensor_msgs/msg/Imu"
	WrenchStamped = "geometry_msgs/msg/WrenchStamped"
	Range         = "sensor_msgs/msg/Range"
)

// Range's radiation types.
const (
	RangeUltrasound = 0
	RangeInfrared   = 1
)

// WriteSensor writes m as its ROS message (m.Kind's type) stamped stamp:
// a sensor_msgs/Imu with zero covariances, the first element −1 for a
// part it does not measure; a geometry_msgs/WrenchStamped; a
// sensor_msgs/Range of an infrared ray (field of view 0, range [0, +Inf),
// variance 0: unknown). It does not allocate when w's buffer has room.
func WriteSensor(w *cdr.Writer, stamp int64, m *sensor.Message) {
	writeHeader(w, stamp, m.Frame)
	switch m.Kind {
	case sensor.IMU:
		for _, v := range m.Orientation {
			w.Float64(v)
		}
		writeCovariance(w, m.Unknown[0])
		writeVec(w, Vector3{m.Angular[0], m.Angular[1], m.Angular[2]})
		writeCovariance(w, m.Unknown[1])
		writeVec(w, Vector3{m.Linear[0], m.Linear[1], m.Linear[2]})
		writeCovariance(w, m.Unknown[2])
	case sensor.Wrench, sensor.Touch:
		writeVec(w, Vector3{m.Linear[0], m.Linear[1], m.Linear[2]})
		writeVec(w, Vector3{m.Angular[0], m.Angular[1], m.Angular[2]})
	case sensor.Range:
		w.Uint8(RangeInfrared)
		w.Float32(0)                    // field_of_view
		w.Float32(0)                    // min_range
		w.Float32(float32(math.Inf(1))) // max_range
		w.Float32(m.Range)              // range
		w.Float32(0)                    // variance
	}
}

// AppendSensor appends m as a sample (see WriteSensor).
func AppendSensor(dst []byte, stamp int64, m *sensor.Message) []byte {
	var w cdr.Writer
	w.Begin(dst)
	WriteSensor(&w, stamp, m)
	return w.Buf
}

// writeCovariance writes a float64[9] of zeros, its first element −1 when
// the part is not measured.
func writeCovariance(w *cdr.Writer, unknown bool) {
	first := 0.0
	if unknown {
		first = -1
	}
	w.Float64(first)
	for range 8 {
		w.Float64(0)
	}
}

// DecodeSensor reads a sample of kind's type into m (its Kind, Frame and
// the fields WriteSensor writes) and returns its stamp.
func DecodeSensor(sample []byte, kind sensor.Kind, m *sensor.Message) (int64, error) {
	var r cdr.Reader
	r.Reset(sample)
	h := readHeader(&r)
	*m = sensor.Message{Kind: kind, Frame: h.FrameID}
	readVec3 := func(dst *[3]float64) {
		v := readVec(&r)
		*dst = [3]float64{v.X, v.Y, v.Z}
	}
	readCov := func() bool {
		first := r.Float64()
		for range 8 {
			r.Float64()
		}
		return first == -1
	}
	switch kind {
	case sensor.IMU:
		for i := range m.Orientation {
			m.Orientation[i] = r.Float64()
		}
		m.Unknown[0] = readCov()
		readVec3(&m.Angular)
		m.Unknown[1] = readCov()
		readVec3(&m.Linear)
		m.Unknown[2] = readCov()
	case sensor.Wrench, sensor.Touch:
		readVec3(&m.Linear)
		readVec3(&m.Angular)
	case sensor.Range:
		r.Uint8()
		r.Float32()
		r.Float32()
		r.Float32()
		m.Range = r.Float32()
		r.Float32()
	}
	return h.Stamp, done(&r, kind.String())
}
