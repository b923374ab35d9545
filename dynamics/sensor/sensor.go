package sensor

import "math"

// Kind is the ROS message a world's sensor is published as.
type Kind uint8

// The kinds of sensor a ROS bridge publishes.
const (
	// IMU is a sensor_msgs/Imu: At[0] orientation (4 values, w x y z),
	// At[1] angular velocity (3, rad/s), At[2] linear acceleration (3,
	// m/s²), each in the sensor's frame; an absent part is published as
	// unknown (its covariance's first element −1, REP 145).
	IMU Kind = iota + 1
	// Wrench is a geometry_msgs/WrenchStamped: At[0] force (3, N), At[1]
	// torque (3, N·m); an absent part is zero.
	Wrench
	// Range is a sensor_msgs/Range: At[0] the distance (1, m), negative
	// when nothing is in reach (published as +Inf, REP 117).
	Range
	// Touch is a contact force (At[0], 1 value, N) published as a
	// geometry_msgs/WrenchStamped whose force is along the frame's z.
	Touch
)

// String is the kind's ROS message type (ROS 2 form).
func (k Kind) String() string {
	switch k {
	case IMU:
		return "sensor_msgs/msg/Imu"
	case Wrench, Touch:
		return "geometry_msgs/msg/WrenchStamped"
	case Range:
		return "sensor_msgs/msg/Range"
	}
	return "unknown"
}

// Sensor is a group of values of a body's observation that a ROS bridge
// publishes as one message: on /<robot>/<Name>, stamped with the sample's
// time, in frame Frame.
type Sensor struct {
	Name, Frame string
	Kind        Kind
	// At holds the offset in the observation of each of the kind's parts
	// (see Kind), -1 for a part the sensor lacks.
	At [3]int
}

// Len is the number of values of part p of a sensor of kind k; 0 for a
// part the kind does not have.
func Len(k Kind, p int) int {
	switch {
	case k == IMU && p == 0:
		return 4
	case k == IMU && (p == 1 || p == 2), k == Wrench && (p == 0 || p == 1):
		return 3
	case (k == Range || k == Touch) && p == 0:
		return 1
	}
	return 0
}

// Part returns part p of s in obs (Len(s.Kind, p) values), or nil when s
// lacks it or obs is too short. It does not allocate.
func (s *Sensor) Part(obs []float64, p int) []float64 {
	if p < 0 || p >= len(s.At) || s.At[p] < 0 {
		return nil
	}
	a, n := s.At[p], Len(s.Kind, p)
	if a+n > len(obs) {
		return nil
	}
	return obs[a : a+n]
}

// Message is a sensor's reading in the fields of its ROS message, in ROS's
// order and conventions.
type Message struct {
	Kind  Kind
	Frame string
	// Orientation is an IMU's (x, y, z, w).
	Orientation [4]float64
	// Angular is an IMU's angular velocity or a wrench's torque; Linear an
	// IMU's linear acceleration or a wrench's (a touch's) force.
	Angular, Linear [3]float64
	// Unknown marks an IMU's parts it does not measure: orientation,
	// angular velocity, linear acceleration (published with the first
	// covariance element −1).
	Unknown [3]bool
	// Range is a range's distance, +Inf when nothing is in reach.
	Range float32
}

// Message fills m with s's reading in obs. A part missing from obs reads
// as the kind's absent part. It does not allocate.
func (s *Sensor) Message(obs []float64, m *Message) {
	*m = Message{Kind: s.Kind, Frame: s.Frame}
	switch s.Kind {
	case IMU:
		m.Orientation[3] = 1
		if q := s.Part(obs, 0); q != nil {
			m.Orientation = [4]float64{q[1], q[2], q[3], q[0]}
		} else {
			m.Unknown[0] = true
		}
		if v := s.Part(obs, 1); v != nil {
			copy(m.Angular[:], v)
		} else {
			m.Unknown[1] = true
		}
		if v := s.Part(obs, 2); v != nil {
			copy(m.Linear[:], v)
		} else {
			m.Unknown[2] = true
		}
	case Wrench:
		if v := s.Part(obs, 0); v != nil {
			copy(m.Linear[:], v)
		}
		if v := s.Part(obs, 1); v != nil {
			copy(m.Angular[:], v)
		}
	case Touch:
		if v := s.Part(obs, 0); v != nil {
			m.Linear[2] = v[0]
		}
	case Range:
		m.Range = float32(math.Inf(1))
		if v := s.Part(obs, 0); v != nil && v[0] >= 0 {
			m.Range = float32(v[0])
		}
	}
}
