package dynamics

import (
	"errors"
	"sort"
	"sync"
)

// Maker builds a world of a registered model (Register), as New does.
type Maker func(bodies int, step int64, params map[string]any) (World, error)

// ModelSimulationInterfaces is the model of an external simulator stepped
// through ROS 2's simulation_interfaces services. A binary built with the
// tag ros2 registers it (package bridge/ros2).
const ModelSimulationInterfaces = "simulation_interfaces"

// ErrNoROS2 is New's error for ModelSimulationInterfaces in a binary built
// without the ROS 2 transport.
var ErrNoROS2 = errors.New("this tcs was built without ROS 2, which the model simulation_interfaces needs; " +
	"install Cyclone DDS 0.10 (apt-get install cyclonedds-dev) and build with: go build -tags ros2 ./cmd/tcs")

var registry struct {
	sync.Mutex
	makers map[string]Maker
}

// Register makes New build model with make: a world whose code lives in a
// package dynamics must not import (a transport's). It is for init
// functions; registering a name twice, or a name New knows itself, panics,
// as a program that does so is wrong whatever its input.
func Register(model string, make Maker) {
	registry.Lock()
	defer registry.Unlock()
	if registry.makers == nil {
		registry.makers = map[string]Maker{}
	}
	if _, dup := registry.makers[model]; dup || builtin(model) {
		panic("dynamics: model " + model + " registered twice")
	}
	registry.makers[model] = make
}

// registered returns the Maker of model, if one is registered.
func registered(model string) (Maker, bool) {
	registry.Lock()
	defer registry.Unlock()
	m, ok := registry.makers[model]
	return m, ok
}

// registeredNames lists the registered models, sorted.
func registeredNames() []string {
	registry.Lock()
	defer registry.Unlock()
	var out []string
	for k := range registry.makers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func builtin(model string) bool {
	switch model {
	case "mujoco", "pendulum", "remote", "ships":
		return true
	}
	return false
}
