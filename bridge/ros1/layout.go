package ros1

import (
	"fmt"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/dynamics"
)

// gateRobots describes each robot of sc as the gate publishes it: the
// joints of its body's JointState and the length of its command, both
// from the scenario's dynamics model.
func gateRobots(sc *config.Scenario) ([]GateRobot, error) {
	w, err := dynamics.New(sc.Dynamics.Model, len(sc.Robots), sc.Dynamics.Step.Nanoseconds(), sc.Dynamics.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: dynamics: %w", sc.File, err)
	}
	out := make([]GateRobot, len(sc.Robots))
	for j, r := range sc.Robots {
		out[j] = GateRobot{Name: r.Name, Joints: jointNames(sc.Dynamics.Model), Commands: w.CommandLen(j)}
		if jn, ok := w.(dynamics.JointNamer); ok {
			out[j].Joints = jn.JointNames(j)
		}
		if out[j].Commands > MaxCommand {
			return nil, fmt.Errorf("%s: dynamics %s: body %d takes %d command values, the ROS bridge at most %d",
				sc.File, sc.Dynamics.Model, j, out[j].Commands, MaxCommand)
		}
	}
	return out, nil
}
