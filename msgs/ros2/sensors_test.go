package ros2

import (
	"testing"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

func TestWriteSensorAllocates(t *testing.T) {
	buf := make([]byte, 0, 512)
	for _, k := range []sensor.Kind{sensor.IMU, sensor.Wrench, sensor.Touch, sensor.Range} {
		m := sensor.Message{Kind: k, Frame: "f"}
		if n := testing.AllocsPerRun(100, func() { buf = AppendSensor(buf[:0], 1, &m) }); n != 0 {
			t.Errorf("%s: %g allocations", k, n)
		}
	}
}
