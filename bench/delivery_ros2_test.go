//go:build ros2

package bench

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The ROS 1 / ROS 2 comparison at a small size: both transports deliver
// every message to every subscriber and the table has both rows (the
// figures are printed, not asserted: see `tcs bench delivery`). Needs the
// ros2 tag, cyclonedds-dev, libfastrtps-dev, libfastcdr-dev and g++.
func TestDeliveryROS2Comparison(t *testing.T) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		t.Skipf("%s missing: apt-get install g++ libfastrtps-dev libfastcdr-dev", cxx)
	}
	var out bytes.Buffer
	res, err := Delivery(&out, DeliveryOpts{Subscribers: 2, Messages: 200})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.GatedLost != 0 || res.GatedCall.N != 200 || res.GatedAll.N != 200 {
		t.Errorf("ROS 1: lost %d, calls %d, deliveries %d; want 0, 200, 200", res.GatedLost, res.GatedCall.N, res.GatedAll.N)
	}
	r2 := res.ROS2
	if r2 == nil {
		t.Fatal("no ROS 2 result in a ros2 build")
	}
	if r2.GatedLost != 0 || r2.GatedCall.N != 200 || r2.GatedAll.N != 200 {
		t.Errorf("ROS 2: lost %d, calls %d, deliveries %d; want 0, 200, 200", r2.GatedLost, r2.GatedCall.N, r2.GatedAll.N)
	}
	if res.GatedCall.Med <= 0 || res.GatedAll.Med <= 0 || r2.GatedCall.Med <= 0 || r2.GatedAll.Med <= 0 {
		t.Errorf("empty medians: ROS 1 %+v / %+v, ROS 2 %+v / %+v", res.GatedCall, res.GatedAll, r2.GatedCall, r2.GatedAll)
	}
	for _, row := range []string{"  ROS 1 (bridge/ros1", "  ROS 2 (bridge/ros2", "  ratio ROS2/ROS1"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("the table has no row %q", row)
		}
	}
}
