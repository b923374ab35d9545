package bench

import (
	"bytes"
	"strings"
	"testing"
)

// The comparison table has a row per transport and the ratio of the
// medians.
func TestWriteComparison(t *testing.T) {
	var out bytes.Buffer
	o := DeliveryOpts{}.withDefaults()
	writeComparison(&out, o, DeliveryResult{
		GatedCall: Stats{N: 1, Med: 10000, P99: 20000}, GatedAll: Stats{N: 1, Med: 40000, P99: 80000},
		ROS2: &ROS2Delivery{GatedCall: Stats{N: 1, Med: 25000, P99: 30000}, GatedAll: Stats{N: 1, Med: 60000, P99: 80000},
			GatedLost: 1, Bytes: 300, Readers: "readers"},
	})
	s := out.String()
	t.Log("\n" + s)
	for _, want := range []string{"  ROS 1 (bridge/ros1", "  ROS 2 (bridge/ros2", "2.50", "1.50", "1.00"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in the table", want)
		}
	}
}
