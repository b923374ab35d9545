//go:build mujoco

package test

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/test/rosenv"
)

var (
	mujocoTCSOnce sync.Once
	mujocoTCS     string
	mujocoTCSErr  error
)

// mujocoBuild builds, once, tcs with the tag mujoco.
func mujocoBuild(t *testing.T) string {
	t.Helper()
	mujocoTCSOnce.Do(func() {
		mujocoTCS = filepath.Join(filepath.Dir(tcsBin), "tcs-mujoco")
		if out, err := exec.Command("go", "build", "-tags", "mujoco", "-o", mujocoTCS, "../cmd/tcs").CombinedOutput(); err != nil {
			mujocoTCSErr = err
			t.Logf("%s", out)
		}
	})
	if mujocoTCSErr != nil {
		t.Fatalf("go build -tags mujoco ../cmd/tcs (apt-get install libmujoco-dev): %v", mujocoTCSErr)
	}
	return mujocoTCS
}

// An unmodified rospy node drives the MuJoCo differential-drive base
// toward its wall through the ROS 1 bridge and reads its IMU and
// rangefinder as sensor_msgs/Imu and Range (see checkDiffDriveSensors).
func TestROS1MuJoCoSensors(t *testing.T) {
	needRT(t)
	tcs := mujocoBuild(t)
	rosenv.New(t, "http://127.0.0.1:1/")
	script, err := filepath.Abs("controllers/rospy/sensors.py")
	if err != nil {
		t.Fatal(err)
	}
	path := diffDriveScenario(t, "ros:\n  master: "+freeMasterURI(t)+"\n", []string{rosenv.Python, script})
	old := tcsBin
	tcsBin = tcs
	defer func() { tcsBin = old }()
	checkDiffDriveSensors(t, runTCS(t, 5*time.Minute, path))
}
