//go:build !ros2

package ros2

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// Built reports whether this binary has the ROS 2 transport (build tag
// ros2).
const Built = false

// ErrNotBuilt is StartBridge's error in a binary built without the ros2
// tag.
var ErrNotBuilt = errors.New("this tcs was built without the ROS 2 transport (ros.transport: ros2); " +
	"install Cyclone DDS 0.10 (apt-get install cyclonedds-dev) and build with: go build -tags ros2 ./cmd/tcs")

// Bridge stands for the ROS 2 bridge in a build without it.
type Bridge struct{ driver.Bridge }

// StartBridge fails: the binary was built without the ros2 tag.
func StartBridge(sc *config.Scenario, w dynamics.World, log zerolog.Logger) (*Bridge, error) {
	return nil, ErrNotBuilt
}

// ServeSimulation fails: the binary was built without the ros2 tag.
func (b *Bridge) ServeSimulation(ctl *simcontrol.Controller, resettable bool) error {
	return ErrNotBuilt
}

// ToolEnv is nil: there is no bridge.
func (b *Bridge) ToolEnv() []string { return nil }

// Close does nothing.
func (b *Bridge) Close() error { return nil }

// ServeWorld fails: the binary was built without the ros2 tag.
func ServeWorld(ctx context.Context, conf WorldServerConf) error { return ErrNotBuilt }
