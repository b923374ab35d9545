package record

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// msgFields lists a .msg text's field lines in order and its constants
// sorted, comments and spacing left out; a type of the message's own
// package pkg is named with it.
func msgFields(text, pkg string) (fields, consts []string) {
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.Join(strings.Fields(line), " ")
		switch {
		case line == "":
		case strings.Contains(line, "="):
			consts = append(consts, strings.ReplaceAll(line, " ", ""))
		default:
			typ, name, _ := strings.Cut(line, " ")
			base, _, _ := strings.Cut(typ, "[")
			if _, prim := primitives[base]; !prim && !strings.Contains(typ, "/") {
				typ = pkg + "/" + typ
			}
			fields = append(fields, typ+" "+name)
		}
	}
	slices.Sort(consts)
	return fields, consts
}

// The recorded definitions of the world sensors' types are Jazzy's (Range
// with its variance): ros2 bag play and Foxglove decode the samples by
// them.
func TestSensorChannelsMatchJazzy(t *testing.T) {
	prefix := os.Getenv("TCS_ROS2_PREFIX")
	if prefix == "" {
		t.Skip("TCS_ROS2_PREFIX is not set: no installed ROS 2 to read the message definitions from")
	}
	for _, k := range []sensor.Kind{sensor.IMU, sensor.Wrench, sensor.Range} {
		c := SensorChannel("/r/s", k)
		if c.Type != k.String() {
			t.Errorf("%s: channel type %s", k, c.Type)
		}
		parts := strings.Split(k.String(), "/")
		b, err := os.ReadFile(filepath.Join(prefix, "share", parts[0], "msg", parts[2]+".msg"))
		if err != nil {
			t.Fatal(err)
		}
		top, _, _ := strings.Cut(c.Definition, "\n=====")
		gotF, gotC := msgFields(top, parts[0])
		wantF, wantC := msgFields(string(b), parts[0])
		if !slices.Equal(gotF, wantF) || !slices.Equal(gotC, wantC) {
			t.Errorf("%s: recorded fields %q constants %q, Jazzy's %q %q", k, gotF, gotC, wantF, wantC)
		}
	}
}
