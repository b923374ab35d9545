//go:build mujoco

package mujoco

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// ActuatorKind is what an actuator's control means, as ros2_control names
// its command interfaces.
type ActuatorKind string

// The kinds of actuator a controller can drive with a Float64MultiArray of
// the matching interface.
const (
	// KindEffort: ctrl is a force or torque (<motor>, or <general> with a
	// fixed gain and no bias).
	KindEffort ActuatorKind = "effort"
	// KindPosition: ctrl is a target position (<position kp="...">).
	KindPosition ActuatorKind = "position"
	// KindVelocity: ctrl is a target velocity (<velocity kv="...">).
	KindVelocity ActuatorKind = "velocity"
	// KindOther: any other actuator (with activation dynamics, a muscle, a
	// cylinder, a general gain or bias).
	KindOther ActuatorKind = "other"
)

// Actuator describes one actuator, in the order of the command vector.
type Actuator struct {
	// Name is the MJCF name, or actuator<id> when it has none.
	Name string
	// Joint is the joint it drives, "" when its transmission is not a
	// joint (a tendon, a site, a slider-crank).
	Joint string
	// Kind is what its control means.
	Kind ActuatorKind
	// CtrlRange is its control range; Limited says whether MuJoCo clamps
	// the control to it.
	CtrlRange [2]float64
	Limited   bool
}

// Actuators lists the actuators in command order: SetCommand's cmd[i] is
// Actuators()[i]'s control. The slice is shared: do not modify it.
func (w *World) Actuators() []Actuator { return w.actuators }

func (w *World) readActuators() []Actuator {
	m := w.h.m
	nu := int(m.nu)
	if nu == 0 {
		return nil
	}
	trntype := ints(m.actuator_trntype, m.nu)
	trnid := ints(m.actuator_trnid, 2*m.nu)
	dyntype := ints(m.actuator_dyntype, m.nu)
	gaintype := ints(m.actuator_gaintype, m.nu)
	biastype := ints(m.actuator_biastype, m.nu)
	gain := floats(m.actuator_gainprm, m.nu*C.mjNGAIN)
	bias := floats(m.actuator_biasprm, m.nu*C.mjNBIAS)
	ctrlrange := floats(m.actuator_ctrlrange, 2*m.nu)
	limited := unsafeBytes(m.actuator_ctrllimited, int(m.nu))
	out := make([]Actuator, nu)
	for i := range out {
		a := &out[i]
		a.Name = w.name(C.mjOBJ_ACTUATOR, i, "actuator")
		if trntype[i] == C.mjTRN_JOINT {
			a.Joint = w.name(C.mjOBJ_JOINT, int(trnid[2*i]), "joint")
		}
		g := gain[i*C.mjNGAIN : (i+1)*C.mjNGAIN]
		b := bias[i*C.mjNBIAS : (i+1)*C.mjNBIAS]
		a.Kind = KindOther
		if dyntype[i] == C.mjDYN_NONE && gaintype[i] == C.mjGAIN_FIXED {
			switch {
			case biastype[i] == C.mjBIAS_NONE:
				a.Kind = KindEffort
			case biastype[i] == C.mjBIAS_AFFINE && b[0] == 0 && b[1] == -g[0] && b[2] == 0:
				a.Kind = KindPosition
			case biastype[i] == C.mjBIAS_AFFINE && b[0] == 0 && b[1] == 0 && b[2] == -g[0]:
				a.Kind = KindVelocity
			}
		}
		a.CtrlRange = [2]float64{ctrlrange[2*i], ctrlrange[2*i+1]}
		a.Limited = limited[i] != 0
	}
	return out
}

// SensorType is a MuJoCo sensor's type, named as its MJCF element
// (accelerometer, gyro, force, torque, rangefinder, touch, framequat, ...).
type SensorType string

// The sensor types a ROS bridge maps onto messages; Sensor.Type holds any
// of MuJoCo's types.
const (
	Touch         SensorType = "touch"         // 1 value: normal contact force in the site's zone, N
	Accelerometer SensorType = "accelerometer" // 3 values: linear acceleration in the site's frame (gravity included), m/s²
	Gyro          SensorType = "gyro"          // 3 values: angular velocity in the site's frame, rad/s
	Force         SensorType = "force"         // 3 values: force the parent exerts on the site's body, in the site's frame, N
	Torque        SensorType = "torque"        // 3 values: torque likewise, N·m
	Rangefinder   SensorType = "rangefinder"   // 1 value: distance along the site's +z to the nearest geom, m; −1 when none
	FrameQuat     SensorType = "framequat"     // 4 values: orientation (w, x, y, z) of a frame in the world (or reference) frame
	FramePos      SensorType = "framepos"      // 3 values: position of a frame, m
)

// sensorTypes follows mjtSensor (MuJoCo 2.2.2).
var sensorTypes = [...]SensorType{
	Touch, Accelerometer, "velocimeter", Gyro, Force, Torque, "magnetometer", Rangefinder,
	"jointpos", "jointvel", "tendonpos", "tendonvel", "actuatorpos", "actuatorvel", "actuatorfrc",
	"ballquat", "ballangvel",
	"jointlimitpos", "jointlimitvel", "jointlimitfrc", "tendonlimitpos", "tendonlimitvel", "tendonlimitfrc",
	FramePos, FrameQuat, "framexaxis", "frameyaxis", "framezaxis", "framelinvel", "frameangvel", "framelinacc", "frameangacc",
	"subtreecom", "subtreelinvel", "subtreeangmom",
	"clock", "user",
}

// nSensorTypes and nObjectTypes are the lengths of mjtSensor and mjtObj
// in the headers this package is built with.
const (
	nSensorTypes = C.mjSENS_USER + 1
	nObjectTypes = C.mjOBJ_KEY + 1
)

// objectTypes follows mjtObj (MuJoCo 2.2.2): the kinds of object a sensor
// is attached to.
var objectTypes = [...]string{
	"", "body", "xbody", "joint", "dof", "geom", "site", "camera", "light", "mesh", "skin", "hfield",
	"texture", "material", "pair", "exclude", "equality", "tendon", "actuator", "sensor", "numeric",
	"text", "tuple", "key",
}

// Sensor describes one MuJoCo sensor of the model.
type Sensor struct {
	// Name is the MJCF name, or sensor<id> when it has none.
	Name string
	// Type is the sensor's type.
	Type SensorType
	// Object is the name of what the sensor is attached to (a site for
	// touch, IMU, force-torque and range sensors) and ObjectType its kind
	// ("site", "body", "joint", ...); both "" when none. A ROS bridge
	// takes the frame of a message from it and groups the sensors of one
	// site (an accelerometer and a gyro make one IMU).
	Object, ObjectType string
	// Dim is the number of values.
	Dim int

	adr int // in mjData.sensordata
}

// Sensors lists the model's sensors in model order; ReadSensor(i, ...)
// reads Sensors()[i]. The slice is shared: do not modify it.
func (w *World) Sensors() []Sensor { return w.sensors }

func (w *World) readSensors() []Sensor {
	m := w.h.m
	n := int(m.nsensor)
	if n == 0 {
		return nil
	}
	typ := ints(m.sensor_type, m.nsensor)
	objtype := ints(m.sensor_objtype, m.nsensor)
	objid := ints(m.sensor_objid, m.nsensor)
	dim := ints(m.sensor_dim, m.nsensor)
	adr := ints(m.sensor_adr, m.nsensor)
	out := make([]Sensor, n)
	for i := range out {
		s := &out[i]
		s.Name = w.name(C.mjOBJ_SENSOR, i, "sensor")
		s.Type = SensorType("unknown")
		if t := int(typ[i]); t >= 0 && t < len(sensorTypes) {
			s.Type = sensorTypes[t]
		}
		if t := int(objtype[i]); t > 0 && t < len(objectTypes) && objid[i] >= 0 {
			nameType := objtype[i]
			if nameType == C.mjOBJ_XBODY {
				nameType = C.mjOBJ_BODY
			}
			s.ObjectType = objectTypes[t]
			s.Object = w.name(nameType, int(objid[i]), s.ObjectType)
		}
		s.Dim = int(dim[i])
		s.adr = int(adr[i])
	}
	return out
}

// ReadSensor copies sensor i's values at the world's current time and
// controls into dst (as many as fit) and returns the number written; 0 for
// an out-of-range i or once MuJoCo failed (Err). The first read after a
// Step, SetCommand or Reset evaluates the model at the current state
// (mj_forward, about as costly as a step); later reads are copies.
// It does not allocate.
func (w *World) ReadSensor(i int, dst []float64) int {
	if i < 0 || i >= len(w.sensors) || !w.forward() {
		return 0
	}
	s := &w.sensors[i]
	return copy(dst, w.sensordata[s.adr:s.adr+s.Dim])
}

func unsafeBytes(p *C.mjtByte, n int) []C.mjtByte {
	if p == nil || n <= 0 {
		return nil
	}
	return unsafe.Slice(p, n)
}
