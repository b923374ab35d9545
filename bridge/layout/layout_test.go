package layout

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/config"
)

const pursuit = `
name: t
duration: 1s
dynamics: {model: ships, step: 10ms}
ros:
  relay: [{topic: /predator/plan, from: planner}]
robots:
  - name: prey
    clients:
      - {name: prey, cmd: [x], api: ros, class: periodic, period: 10ms}
  - name: predator
    clients:
      - {name: controller, cmd: [x], api: ros, class: periodic, period: 10ms, priority: 20}
      - {name: planner, cmd: [x], api: ros, class: best-effort}
      - {name: logger, cmd: [x], api: native, class: periodic, period: 10ms, priority: 5}
`

// The layout of a two-robot scenario: robots from the dynamics model,
// clients indexed as in the run, relays by publishing client.
func TestOfPursuit(t *testing.T) {
	sc, err := config.Parse([]byte(pursuit), "pursuit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Of(sc, 64)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Robots) != 2 || l.Robots[1].Name != "predator" || l.Robots[1].Commands != 6 || len(l.Robots[1].Joints) == 0 {
		t.Errorf("robots %+v", l.Robots)
	}
	want := []Client{{"prey", 0, true}, {"controller", 1, true}, {"planner", 1, true}, {"logger", 1, false}}
	if !reflect.DeepEqual(l.Clients, want) {
		t.Errorf("clients %+v, want %+v", l.Clients, want)
	}
	if !reflect.DeepEqual(l.Relays, []Relay{{"/predator/plan", 2}}) {
		t.Errorf("relays %+v", l.Relays)
	}
	// A bridge that carries fewer command values than the body takes
	// refuses the scenario, naming the file.
	if _, err := Of(sc, 1); err == nil || !strings.Contains(err.Error(), "pursuit.yaml") {
		t.Errorf("maxCommand 1: err %v", err)
	}
}
