package ros2

import (
	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/dynamics"
)

// WorldServerConf configures ServeWorld.
type WorldServerConf struct {
	// World is the world served, at its time 0; Model names it (for its
	// default joint names).
	World dynamics.World
	Model string
	// Step is the world's step, ns: one StepSimulation step.
	Step int64
	// Robots names the bodies: body j publishes /<Robots[j]>/joint_states
	// and takes /<Robots[j]>/commands.
	Robots []string
	// Namespace is where the simulation_interfaces services are; default
	// "/tcs".
	Namespace string
	// Log receives what goes wrong.
	Log zerolog.Logger
}
