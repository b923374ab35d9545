//go:build !mujoco

package dynamics

import "fmt"

// MuJoCoBuilt reports whether New knows the model "mujoco" (build tag
// mujoco).
const MuJoCoBuilt = false

// newMuJoCo fails: the binary was built without the mujoco tag.
func newMuJoCo(bodies int, step int64, params map[string]any) (World, error) {
	return nil, fmt.Errorf("dynamics: %w", ErrNotBuilt)
}
