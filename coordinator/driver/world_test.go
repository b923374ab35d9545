package driver

import (
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/coordinator/native"
	"github.com/tcs-robotics/tcs/dynamics"
)

// sizedWorld is a world of one body with the given observation and command
// lengths (fitsNative reads nothing else).
type sizedWorld struct {
	dynamics.World
	obs, cmd int
}

func (w sizedWorld) Bodies() int            { return 1 }
func (w sizedWorld) ObservationLen(int) int { return w.obs }
func (w sizedWorld) CommandLen(int) int     { return w.cmd }

// A world whose observation or command is larger than the native
// protocol's vectors is refused, naming the model and the counts.
func TestFitsNative(t *testing.T) {
	m := native.MaxValues
	for _, tc := range []struct {
		obs, cmd int
		want     string
	}{
		{m, m, ""},
		{m + 2, 1, "observes 66 values (positions and velocities of 33 joints); tcs carries at most 64 (32 joints)"},
		{2, m + 1, "takes 65 command values"},
	} {
		err := fitsNative(sizedWorld{obs: tc.obs, cmd: tc.cmd}, "mujoco")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d/%d values: %v", tc.obs, tc.cmd, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "model mujoco")):
			t.Errorf("%d/%d values: %v, want %q", tc.obs, tc.cmd, err, tc.want)
		}
	}
}
