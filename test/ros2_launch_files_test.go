package test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The ROS 2 launch files compile with python3 (syntax), in the default
// build, without a ROS 2 install; ros2_launch_test.go runs them with the
// real ros2 launch.
func TestROS2LaunchFilesCompile(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 missing")
	}
	files, err := filepath.Glob("../launch/ros2/*.launch.py")
	if err != nil || len(files) < 2 {
		t.Fatalf("launch/ros2: %v %v", files, err)
	}
	for _, f := range files {
		cfile := filepath.Join(t.TempDir(), filepath.Base(f)+"c")
		if out, err := exec.Command(py, "-c", "import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", f, cfile).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
}
