//go:build mujoco

package mujoco

/*
#cgo CFLAGS: -O2 -Wall
#cgo LDFLAGS: -lmujoco
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// Built reports whether this binary has the MuJoCo world (build tag
// mujoco).
const Built = true

// ErrLoad is returned (wrapped) by New when the MJCF file cannot be read or
// MuJoCo rejects it; the message names the file and carries MuJoCo's own.
var ErrLoad = errors.New("cannot load the MJCF model")

// ErrConf is returned (wrapped) by New when the model and the scenario do
// not fit together (robots, step, timestep).
var ErrConf = errors.New("the MuJoCo model does not fit the scenario")

// ErrSimulation is what Err wraps once MuJoCo failed inside a step.
var ErrSimulation = errors.New("MuJoCo failed")

// errSize is the size of the C buffer that receives MuJoCo's messages.
const errSize = 1024

// Conf configures New. Every field documents its default.
type Conf struct {
	// MJCF is the path of the model's MJCF (XML) file. Required. A
	// relative path is taken from the process's working directory; the
	// files the model refers to (meshes, includes) are found by MuJoCo
	// relative to the MJCF file's folder.
	MJCF string
}

// World is a MuJoCo model stepped as a tcs world: one body (robot 0) made
// of the whole model. See the package documentation for the layouts of its
// observation, command and sensors.
type World struct {
	file string
	h    *handle // the C objects, freed by Close
	ts   int64   // the model's opt.timestep, ns
	step int64   // the scenario's step, ns (a whole multiple of ts)
	now  int64

	// Views of the C arrays (nil once closed).
	qpos, qvel, ctrl, act, sensordata []float64

	jointQ, jointV []int // qpos and qvel addresses of the scalar joints
	joints         []string
	actuators      []Actuator
	sensors        []Sensor
	published      []sensor.Sensor // the sensors a ROS bridge publishes
	obsSensors     []int           // MuJoCo sensors in the observation, in order
	ctrlSaved      []float64       // Reset's scratch

	stale bool  // derived quantities (sensors) are older than the state
	err   error // the first MuJoCo failure; the physics is frozen since
}

// handle owns the C objects of one World.
type handle struct {
	m   *C.mjModel
	d   *C.mjData
	msg *C.char // errSize bytes
}

func (h *handle) free() {
	if h.d != nil {
		C.mj_deleteData(h.d)
		h.d = nil
	}
	if h.m != nil {
		C.mj_deleteModel(h.m)
		h.m = nil
	}
	if h.msg != nil {
		C.free(unsafe.Pointer(h.msg))
		h.msg = nil
	}
}

// New loads the MJCF model conf.MJCF as a world for a scenario of bodies
// robots (it must be 1: the whole model is robot 0's body) stepped by step
// ns, a whole multiple of the model's timestep (<option timestep>, which
// must itself be a whole number of ns). The model starts at its reference
// configuration (qpos0), at rest, with zero controls.
func New(conf Conf, bodies int, step int64) (*World, error) {
	if v := int(C.mj_version()); v != C.mjVERSION_HEADER {
		return nil, fmt.Errorf("mujoco: %w: the MuJoCo library is version %d but tcs was built with the headers of %d", ErrLoad, v, int(C.mjVERSION_HEADER))
	}
	if conf.MJCF == "" {
		return nil, fmt.Errorf("mujoco: %w: no MJCF file given (params: {mjcf: path/to/model.xml})", ErrLoad)
	}
	if st, err := os.Stat(conf.MJCF); err != nil {
		return nil, fmt.Errorf("mujoco: %w %s: %w", ErrLoad, conf.MJCF, err)
	} else if st.IsDir() {
		return nil, fmt.Errorf("mujoco: %w %s: is a directory, not an MJCF file", ErrLoad, conf.MJCF)
	}
	if bodies != 1 {
		return nil, fmt.Errorf("mujoco: %w: the whole model %s is one robot's body, but the scenario has %d robots", ErrConf, conf.MJCF, bodies)
	}
	if step <= 0 {
		return nil, fmt.Errorf("mujoco: %w: step must be > 0 ns, got %d", ErrConf, step)
	}
	C.tcs_mj_init()

	h := &handle{msg: (*C.char)(C.calloc(errSize, 1))}
	path := C.CString(conf.MJCF)
	defer C.free(unsafe.Pointer(path))
	h.m = C.mj_loadXML(path, nil, h.msg, errSize)
	if h.m == nil {
		msg := C.GoString(h.msg)
		h.free()
		return nil, fmt.Errorf("mujoco: %w %s: %s", ErrLoad, conf.MJCF, msg)
	}
	w := &World{file: conf.MJCF, h: h, step: step, stale: true}
	if err := w.init(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// init checks the model's timestep, makes its data and reads its names.
func (w *World) init() error {
	m := w.h.m
	tsS := float64(m.opt.timestep)
	tsNs := math.Round(tsS * 1e9)
	if !(tsNs >= 1) || tsNs > 1e9 || math.Abs(tsS*1e9-tsNs) > 1e-3 {
		return fmt.Errorf("mujoco: %w: %s: the model's timestep %g s must be a whole number of ns in [1 ns, 1 s]", ErrConf, w.file, tsS)
	}
	w.ts = int64(tsNs)
	if w.step%w.ts != 0 {
		return fmt.Errorf("mujoco: %w: dynamics.step %s is not a whole multiple of the timestep of %s, %s (<option timestep=\"%g\"/>): set dynamics.step to %s or a multiple of it",
			ErrConf, fmtNs(w.step), w.file, fmtNs(w.ts), tsS, fmtNs(w.ts))
	}
	w.h.d = C.tcs_mj_make(m, w.h.msg, errSize)
	if w.h.d == nil {
		return fmt.Errorf("mujoco: %w %s: %s", ErrLoad, w.file, C.GoString(w.h.msg))
	}
	d := w.h.d
	w.qpos = floats(d.qpos, m.nq)
	w.qvel = floats(d.qvel, m.nv)
	w.ctrl = floats(d.ctrl, m.nu)
	w.act = floats(d.act, m.na)
	w.sensordata = floats(d.sensordata, m.nsensordata)
	w.ctrlSaved = make([]float64, len(w.ctrl))

	jtype := ints(m.jnt_type, m.njnt)
	qadr := ints(m.jnt_qposadr, m.njnt)
	vadr := ints(m.jnt_dofadr, m.njnt)
	for j, t := range jtype {
		if t != C.mjJNT_HINGE && t != C.mjJNT_SLIDE {
			continue
		}
		w.joints = append(w.joints, w.name(C.mjOBJ_JOINT, j, "joint"))
		w.jointQ = append(w.jointQ, int(qadr[j]))
		w.jointV = append(w.jointV, int(vadr[j]))
	}
	w.actuators = w.readActuators()
	w.sensors = w.readSensors()
	w.published, w.obsSensors = groupSensors(w.sensors, 2*len(w.joints))
	return nil
}

// fmtNs writes ns as a scenario duration (2ms, 500us, 1500ns).
func fmtNs(ns int64) string {
	switch {
	case ns%1e6 == 0:
		return fmt.Sprintf("%dms", ns/1e6)
	case ns%1e3 == 0:
		return fmt.Sprintf("%dus", ns/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}

// floats views n mjtNums at p (nil when n is 0).
func floats(p *C.mjtNum, n C.int) []float64 {
	if p == nil || n <= 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(p)), int(n))
}

// ints views n C ints at p (nil when n is 0).
func ints(p *C.int, n C.int) []C.int {
	if p == nil || n <= 0 {
		return nil
	}
	return unsafe.Slice(p, int(n))
}

// name is object id's MJCF name, or prefix<id> when it has none.
func (w *World) name(objType C.int, id int, prefix string) string {
	if s := C.mj_id2name(w.h.m, objType, C.int(id)); s != nil {
		if n := C.GoString(s); n != "" {
			return n
		}
	}
	return fmt.Sprintf("%s%d", prefix, id)
}

// Close frees MuJoCo's model and data; a World that is not closed keeps
// them until the process exits. The World must not be used after.
func (w *World) Close() {
	w.h.free()
	w.qpos, w.qvel, w.ctrl, w.act, w.sensordata = nil, nil, nil, nil, nil
}

// File is the MJCF file the world was loaded from.
func (w *World) File() string { return w.file }

// Timestep is the model's timestep (ns): the step MuJoCo integrates by.
func (w *World) Timestep() int64 { return w.ts }

// StepSize is the scenario's step (ns), a whole multiple of Timestep.
func (w *World) StepSize() int64 { return w.step }

// Bodies implements dynamics.World: the whole model is body 0.
func (w *World) Bodies() int { return 1 }

// CommandLen implements dynamics.World: one value per actuator.
func (w *World) CommandLen(b int) int {
	if b != 0 {
		return 0
	}
	return len(w.actuators)
}

// ObservationLen implements dynamics.World: the position and the velocity
// of every hinge and slide joint, then the values of the sensors Sensors
// lists.
func (w *World) ObservationLen(b int) int {
	if b != 0 {
		return 0
	}
	n := 2 * len(w.joints)
	for _, i := range w.obsSensors {
		n += w.sensors[i].Dim
	}
	return n
}

// JointNames implements dynamics.JointNamer: the hinge and slide joints in
// model order, each named by its MJCF name or joint<id> when it has none.
// The slice is shared: do not modify it.
func (w *World) JointNames(b int) []string {
	if b != 0 {
		return nil
	}
	return w.joints
}

// SetCommand implements dynamics.World: cmd[i] is actuator i's control
// (mjData.ctrl) in actuator order; extra values are ignored, missing and
// non-finite ones are 0. MuJoCo clamps a control to its actuator's
// ctrlrange when the actuator is ctrllimited. An out-of-range b is ignored.
func (w *World) SetCommand(b int, cmd []float64) {
	if b != 0 || w.ctrl == nil {
		return
	}
	for i := range w.ctrl {
		v := 0.0
		if i < len(cmd) && !math.IsNaN(cmd[i]) && !math.IsInf(cmd[i], 0) {
			v = cmd[i]
		}
		w.ctrl[i] = v
	}
	w.stale = true
}

// Observe implements dynamics.World: dst gets [positions..., velocities...]
// of the joints JointNames names, then the values of the sensors Sensors
// lists (as many values as fit); it returns the number written. The
// sensors are evaluated at the current state (see ReadSensor); once
// MuJoCo failed they read 0. An out-of-range b writes nothing.
func (w *World) Observe(b int, dst []float64) int {
	if b != 0 || w.qpos == nil {
		return 0
	}
	n := len(w.jointQ)
	k := 0
	for i := 0; i < n && k < len(dst); i++ {
		dst[k] = w.qpos[w.jointQ[i]]
		k++
	}
	for i := 0; i < n && k < len(dst); i++ {
		dst[k] = w.qvel[w.jointV[i]]
		k++
	}
	if len(w.obsSensors) == 0 || k == len(dst) {
		return k
	}
	ok := w.forward()
	for _, i := range w.obsSensors {
		s := &w.sensors[i]
		for j := 0; j < s.Dim && k < len(dst); j++ {
			dst[k] = 0
			if ok {
				dst[k] = w.sensordata[s.adr+j]
			}
			k++
		}
	}
	return k
}

// Now implements dynamics.World.
func (w *World) Now() int64 { return w.now }

// Step implements dynamics.World: it advances the world by exactly h ns,
// in whole steps of the model's timestep and, for a remainder r, one step
// of r (the timestep is set to r for that step and restored), which is how
// a command takes effect at its instant between two steps. h ≤ 0 does
// nothing. Once MuJoCo failed (Err) the physics stays frozen and only time
// goes on.
func (w *World) Step(h int64) {
	if h <= 0 {
		return
	}
	w.now += h
	if w.err != nil || w.h.d == nil {
		return
	}
	n, r := h/w.ts, h%w.ts
	if C.tcs_mj_step(w.h.m, w.h.d, C.long(n), C.double(float64(r)*1e-9), w.h.msg, errSize) != 0 {
		w.fail("stepping to")
	}
	w.h.d.time = C.mjtNum(float64(w.now) / 1e9)
	w.stale = true
}

// fail records MuJoCo's message as the world's error (the first one only).
// It allocates, but only once per world.
func (w *World) fail(what string) {
	if w.err == nil {
		msg := C.GoString(w.h.msg)
		if strings.Contains(msg, "Stack overflow") {
			msg += " (raise <size nstack> in the model)"
		}
		w.err = fmt.Errorf("mujoco: %w %s t = %d ns (%s): %s", ErrSimulation, what, w.now, w.file, msg)
	}
}

// Err is nil, or the first failure of MuJoCo inside Step, Reset or a sensor
// read (wrapping ErrSimulation, with MuJoCo's message); the physics has
// not moved since.
func (w *World) Err() error { return w.err }

// Reset implements dynamics.Resetter: the model back at its initial state
// (mj_resetData), at rest; the controls and the time are kept.
func (w *World) Reset() {
	if w.err != nil || w.h.d == nil {
		return
	}
	copy(w.ctrlSaved, w.ctrl)
	if C.tcs_mj_reset(w.h.m, w.h.d, w.h.msg, errSize) != 0 {
		w.fail("resetting at")
		return
	}
	copy(w.ctrl, w.ctrlSaved)
	w.h.d.time = C.mjtNum(float64(w.now) / 1e9)
	w.stale = true
}

// forward brings the derived quantities (sensors) up to the current state
// and controls when they are stale: MuJoCo computes them inside a step
// from the state before it, so after Step they lag by one step. mj_forward
// leaves the state and the solver's warm start alone: a trajectory is the
// same bit for bit whether or not sensors were read along it.
func (w *World) forward() bool {
	if w.err != nil || w.h.d == nil {
		return false
	}
	if !w.stale {
		return true
	}
	if C.tcs_mj_forward(w.h.m, w.h.d, w.h.msg, errSize) != 0 {
		w.fail("evaluating the sensors at")
		return false
	}
	w.stale = false
	return true
}

// Warnings lists the warnings MuJoCo counted since the world was made
// (kind, count, MuJoCo's meaning), e.g. "badqacc: 2 (bad number in qacc:
// MuJoCo reset the state)"; nil when there were none. It allocates.
func (w *World) Warnings() []string {
	if w.h.d == nil {
		return nil
	}
	var out []string
	for k := range int(C.mjNWARNING) {
		if n := int(w.h.d.warning[k].number); n > 0 {
			out = append(out, fmt.Sprintf("%s: %d (%s)", warningNames[k], n, warningMeanings[k]))
		}
	}
	return out
}

// warningNames and warningMeanings follow mjtWarning (MuJoCo 2.2.2).
var (
	warningNames    = [...]string{"inertia", "contactfull", "cnstrfull", "vgeomfull", "badqpos", "badqvel", "badqacc", "badctrl"}
	warningMeanings = [...]string{
		"near-singular inertia matrix",
		"too many contacts: some were dropped (raise <size nconmax>)",
		"too many constraints: some were dropped (raise <size njmax>)",
		"too many visual geoms",
		"bad number in qpos: MuJoCo reset the state",
		"bad number in qvel: MuJoCo reset the state",
		"bad number in qacc: MuJoCo reset the state",
		"bad number in ctrl: MuJoCo zeroed the controls",
	}
)

// nativeSteps takes n steps with mj_step alone, as a program using MuJoCo
// directly would: the tests' reference.
func (w *World) nativeSteps(n int) {
	for range n {
		C.mj_step(w.h.m, w.h.d)
	}
}

// stateBits is the integration state (qpos, qvel, act, the warm start) as
// raw bits, for the tests' bit-for-bit comparisons.
func (w *World) stateBits() []uint64 {
	var out []uint64
	ws := floats(w.h.d.qacc_warmstart, w.h.m.nv)
	for _, s := range [][]float64{w.qpos, w.qvel, w.act, ws} {
		for _, v := range s {
			out = append(out, math.Float64bits(v))
		}
	}
	return out
}
