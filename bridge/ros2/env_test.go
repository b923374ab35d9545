//go:build ros2

package ros2

import (
	"slices"
	"testing"
)

// A client of a loopback-bound bridge gets a Cyclone configuration bound to
// loopback unless the user has one (a Jazzy node needs it to meet tcs).
func TestClientEnv(t *testing.T) {
	for _, tc := range []struct {
		loopback, userURI bool
		want              []string
	}{
		{true, false, []string{"ROS_DOMAIN_ID=3", "ROS_LOCALHOST_ONLY=1", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "CYCLONEDDS_URI=" + ClientConfig}},
		{true, true, []string{"ROS_DOMAIN_ID=3", "ROS_LOCALHOST_ONLY=1", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"}},
		{false, false, []string{"ROS_DOMAIN_ID=3"}},
	} {
		if got := ClientEnv(3, tc.loopback, tc.userURI); !slices.Equal(got, tc.want) {
			t.Errorf("ClientEnv(3, %v, %v) = %q, want %q", tc.loopback, tc.userURI, got, tc.want)
		}
	}
}
