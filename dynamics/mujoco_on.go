//go:build mujoco

package dynamics

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tcs-robotics/tcs/dynamics/mujoco"
)

// MuJoCoBuilt reports whether New knows the model "mujoco" (build tag
// mujoco).
const MuJoCoBuilt = true

var _ interface {
	World
	JointNamer
	Resetter
	Failer
	Closer
	Sensorer
} = (*mujoco.World)(nil)

// newMuJoCo builds the "mujoco" model: params {mjcf: path} (required).
func newMuJoCo(bodies int, step int64, params map[string]any) (World, error) {
	conf, err := mujocoConf(params)
	if err != nil {
		return nil, err
	}
	w, err := mujoco.New(conf, bodies, step)
	if errors.Is(err, mujoco.ErrConf) {
		return nil, fmt.Errorf("dynamics: %w: %w", ErrBadParam, err)
	}
	if err != nil {
		return nil, fmt.Errorf("dynamics: %w", err)
	}
	return w, nil
}

// mujocoConf reads the "mujoco" model's params.
func mujocoConf(params map[string]any) (mujoco.Conf, error) {
	var c mujoco.Conf
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic: the first bad key in order is reported
	for _, k := range keys {
		v := params[k]
		if k != "mjcf" {
			return c, fmt.Errorf("dynamics: mujoco: %w: unknown parameter %q (valid: mjcf)", ErrBadParam, k)
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return c, fmt.Errorf("dynamics: mujoco: %w: parameter \"mjcf\" must be the path of an MJCF file, got %T %v", ErrBadParam, v, v)
		}
		c.MJCF = s
	}
	if c.MJCF == "" {
		return c, fmt.Errorf("dynamics: mujoco: %w: parameter \"mjcf\" is required: the path of the model's MJCF file (params: {mjcf: arm.xml})", ErrBadParam)
	}
	return c, nil
}
