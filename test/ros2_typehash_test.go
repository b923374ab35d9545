//go:build ros2

package test

import (
	"strings"
	"testing"
)

// checkTypeHash finds, in the output of `ros2 topic info --verbose`, the
// endpoint of node of kind (PUBLISHER, SUBSCRIPTION) and checks that its
// "Topic type hash" is want (rclpy prints INVALID for none).
func checkTypeHash(t *testing.T, info, node, kind, want string) {
	t.Helper()
	found := false
	for _, block := range strings.Split(info, "\n\n") {
		if !strings.Contains(block, "Node name: "+node+"\n") || !strings.Contains(block, "Endpoint type: "+kind+"\n") {
			continue
		}
		found = true
		if !strings.Contains(block, "Topic type hash: "+want+"\n") {
			t.Errorf("ros2 topic info: %s's %s endpoint does not carry type hash %s:\n%s", node, kind, want, block)
		}
	}
	if !found {
		t.Errorf("ros2 topic info: no %s endpoint of node %s in\n%s", kind, node, info)
	}
}
