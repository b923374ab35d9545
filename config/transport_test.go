package config

import (
	"strings"
	"testing"
)

// ros.transport and ros.distro: parsed, defaulted, and each mistake names
// its field.
func TestROSTransport(t *testing.T) {
	ros := strings.Replace(minimal, "class: periodic", "api: ros\n        class: periodic", 1)
	if s := mustParse(t, ros); s.ROS.Transport != TransportROS1 || s.ROS.Distro != "" || s.ROS.ROS2Distro() != "" {
		t.Errorf("default transport %v distro %q (%q)", s.ROS.Transport, s.ROS.Distro, s.ROS.ROS2Distro())
	}
	s := mustParse(t, ros+"ros: {transport: ros2, distro: humble}\n")
	if s.ROS.Transport != TransportROS2 || s.ROS.Distro != "humble" || s.ROS.ROS2Distro() != "humble" {
		t.Errorf("parsed transport %v distro %q (%q)", s.ROS.Transport, s.ROS.Distro, s.ROS.ROS2Distro())
	}
	if s := mustParse(t, ros+"ros: {transport: ros2}\n"); s.ROS.ROS2Distro() != DefaultROS2Distro {
		t.Errorf("ros2 without distro: %q, want %q", s.ROS.ROS2Distro(), DefaultROS2Distro)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"bad transport", ros + "ros: {transport: dds}\n", "ros.transport"},
		{"bad distro", ros + "ros: {transport: ros2, distro: hydro}\n", `ros.distro: "hydro" is not a ROS 2 distribution`},
		{"distro on ros1", ros + "ros: {distro: humble}\n", "ros.distro: is for ROS 2"},
		{"master on ros2", ros + "ros: {transport: ros2, master: http://127.0.0.1:11311}\n", "ros.master: is for ROS 1"},
	} {
		_, err := Parse([]byte(tc.src), "x.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
