//go:build mujoco

package dynamics

import (
	"errors"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/dynamics/mujoco"
)

func TestNewMuJoCo(t *testing.T) {
	w, err := New("mujoco", 1, 1e6, map[string]any{"mjcf": "mujoco/models/arm.xml"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.(*mujoco.World).Close()
	if got := JointNames(w, "mujoco", 0); strings.Join(got, ",") != "base_yaw,shoulder,elbow" {
		t.Fatalf("joints %v", got)
	}
	if _, ok := w.(Resetter); !ok {
		t.Fatal("not a Resetter")
	}
	w.SetCommand(0, []float64{1, 0, 0})
	w.Step(1e6)
	if w.Now() != 1e6 {
		t.Fatalf("Now %d", w.Now())
	}
}

func TestNewMuJoCoErrors(t *testing.T) {
	for _, tc := range []struct {
		bodies int
		step   int64
		params map[string]any
		is     error
		want   string
	}{
		{1, 1e6, nil, ErrBadParam, `"mjcf" is required`},
		{1, 1e6, map[string]any{"mjcf": 3}, ErrBadParam, "must be the path"},
		{1, 1e6, map[string]any{"mjcf": "a.xml", "zz": 1, "aa": 2}, ErrBadParam, `unknown parameter "aa" (valid: mjcf)`},
		{1, 1e6, map[string]any{"mjcf": "nope.xml"}, mujoco.ErrLoad, "nope.xml"},
		{2, 1e6, map[string]any{"mjcf": "mujoco/models/arm.xml"}, ErrBadParam, "2 robots"},
		{1, 1e5, map[string]any{"mjcf": "mujoco/models/arm.xml"}, mujoco.ErrConf, "set dynamics.step to 1ms"},
	} {
		w, err := New("mujoco", tc.bodies, tc.step, tc.params)
		if err == nil {
			w.(*mujoco.World).Close()
			t.Errorf("%v: accepted", tc.params)
			continue
		}
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %v saying %q", tc.params, err, tc.is, tc.want)
		}
	}
}
