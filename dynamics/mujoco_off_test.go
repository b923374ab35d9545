//go:build !mujoco

package dynamics

import (
	"errors"
	"strings"
	"testing"
)

func TestMuJoCoNotBuilt(t *testing.T) {
	_, err := New("mujoco", 1, 1e6, map[string]any{"mjcf": "mujoco/models/arm.xml"})
	if !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), "go build -tags mujoco") || MuJoCoBuilt {
		t.Fatalf("New(mujoco) without the tag: %v", err)
	}
}
