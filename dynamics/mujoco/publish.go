//go:build mujoco

package mujoco

import "github.com/tcs-robotics/tcs/dynamics/sensor"

// groupSensors makes the sensors a ROS bridge publishes from the model's
// MuJoCo sensors: the accelerometer, gyro and framequat of one site make
// an IMU, named after the site; its force and torque a wrench, named
// after the site too (both get the suffix _imu and _wrench when one site
// has both); each rangefinder a range and each touch a contact force,
// named after the sensor. The frame is the site's name. A second sensor
// of the same part on one site is left out (ReadSensor still reads it).
// It returns the groups and the MuJoCo sensors whose values follow the
// joints in the observation, in order; the groups' offsets count from
// base.
func groupSensors(sensors []Sensor, base int) ([]sensor.Sensor, []int) {
	type key struct {
		site string
		kind sensor.Kind
	}
	type group struct {
		s     sensor.Sensor
		parts [3]int // MuJoCo sensor index per part, -1 when none
	}
	var groups []*group
	bySite := map[key]*group{}
	onSite := func(site string, kind sensor.Kind) *group {
		k := key{site, kind}
		if g := bySite[k]; g != nil {
			return g
		}
		g := &group{s: sensor.Sensor{Name: site, Frame: site, Kind: kind}, parts: [3]int{-1, -1, -1}}
		bySite[k] = g
		groups = append(groups, g)
		return g
	}
	for i, s := range sensors {
		if s.ObjectType != "site" || s.Object == "" {
			continue
		}
		var g *group
		part := 0
		switch s.Type {
		case FrameQuat:
			g = onSite(s.Object, sensor.IMU)
		case Gyro:
			g, part = onSite(s.Object, sensor.IMU), 1
		case Accelerometer:
			g, part = onSite(s.Object, sensor.IMU), 2
		case Force:
			g = onSite(s.Object, sensor.Wrench)
		case Torque:
			g, part = onSite(s.Object, sensor.Wrench), 1
		case Rangefinder, Touch:
			kind := sensor.Range
			if s.Type == Touch {
				kind = sensor.Touch
			}
			g = &group{s: sensor.Sensor{Name: s.Name, Frame: s.Object, Kind: kind}, parts: [3]int{-1, -1, -1}}
			groups = append(groups, g)
		default:
			continue
		}
		if g.parts[part] < 0 && s.Dim == sensor.Len(g.s.Kind, part) {
			g.parts[part] = i
		}
	}
	var out []sensor.Sensor
	var order []int
	at := base
	for _, g := range groups {
		if bySite[key{g.s.Frame, sensor.IMU}] != nil && bySite[key{g.s.Frame, sensor.Wrench}] != nil {
			switch g.s.Kind {
			case sensor.IMU:
				g.s.Name += "_imu"
			case sensor.Wrench:
				g.s.Name += "_wrench"
			}
		}
		g.s.At = [3]int{-1, -1, -1}
		for p, i := range g.parts {
			if i >= 0 {
				g.s.At[p] = at
				at += sensors[i].Dim
				order = append(order, i)
			}
		}
		if g.s.At != [3]int{-1, -1, -1} {
			out = append(out, g.s)
		}
	}
	return out, order
}

// SensorGroups implements dynamics.Sensorer: the model's sensors a ROS bridge
// publishes (see groupSensors), their values after the joints' in the
// observation. The slice is shared: do not modify it.
func (w *World) SensorGroups(b int) []sensor.Sensor {
	if b != 0 {
		return nil
	}
	return w.published
}
