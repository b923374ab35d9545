package config

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// base is a valid scenario with two robots and the features every rule
// touches; each validation case changes one thing in it.
const base = `
name: base
duration: 10s
dynamics: {model: pendulum, step: 1ms}
robots:
  - name: a
    clients:
      - name: pd
        cmd: [tcs, client, pd]
        class: periodic
        period: 1ms
        subscribes: [1, 2]
        env: {K: v}
      - name: plan
        cmd: [tcs, client, planner]
        class: best-effort
        log: plan.log
  - name: b
    clients:
      - name: pd2
        cmd: [ros2, run, x, y]
        api: plain
        class: periodic
        period: 2ms
`

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(s *Scenario)
		field string // "" means: valid
		msg   string
	}{
		{"base is valid", func(s *Scenario) {}, "", ""},
		{"name empty", func(s *Scenario) { s.Name = "" }, "name", "is empty; write a short word"},
		{"name bad chars", func(s *Scenario) { s.Name = "a/b" }, "name", `"a/b" may hold only letters, digits, _, . and -`},
		{"name dots ok", func(s *Scenario) { s.Name = "run.2-a_b" }, "", ""},
		{"mode out of range", func(s *Scenario) { s.Mode = Mode(7) }, "mode", "7 is not a mode; use one of consistent, lockstep, free"},
		{"mode free ok", func(s *Scenario) { s.Mode = ModeFree }, "", ""},
		{"duration zero", func(s *Scenario) { s.Duration = 0 }, "duration", "is required and must be > 0"},
		{"duration negative", func(s *Scenario) { s.Duration = -Second }, "duration", "must be > 0"},
		{"quantum too small", func(s *Scenario) { s.Quantum = 49 * Microsecond }, "quantum", "49µs is outside 50µs..100ms"},
		{"quantum too large", func(s *Scenario) { s.Quantum = 101 * Millisecond }, "quantum", "101ms is outside 50µs..100ms"},
		{"quantum min ok", func(s *Scenario) { s.Quantum = MinQuantum }, "", ""},
		{"quantum max ok", func(s *Scenario) { s.Quantum = MaxQuantum }, "", ""},
		{"cpu below -1", func(s *Scenario) { s.CPU = -2 }, "cpu", "-2 is not a CPU; write -1 for the last online CPU"},
		{"cpu 0 ok", func(s *Scenario) { s.CPU = 0 }, "", ""},
		{"base_priority low", func(s *Scenario) { s.BasePriority = 3 }, "base_priority", "3 is outside 4..99"},
		{"base_priority high", func(s *Scenario) { s.BasePriority = 100 }, "base_priority", "100 is outside 4..99"},
		{"base_priority bounds ok", func(s *Scenario) { s.BasePriority = 4 }, "", ""},
		{"actuation out of range", func(s *Scenario) { s.Actuation = Actuation(-1) }, "actuation", "use one of exact, hold"},
		{"wall_limit negative", func(s *Scenario) { s.WallLimit = -1 }, "wall_limit", "is negative"},
		{"on_exit out of range", func(s *Scenario) { s.OnExit = OnExit(2) }, "on_exit", "use one of stop, continue"},
		{"rtf negative", func(s *Scenario) { s.Free.RTF = -1 }, "free.rtf", "-1 is not a real-time factor"},
		{"rtf NaN", func(s *Scenario) { s.Free.RTF = math.NaN() }, "free.rtf", "NaN is not a real-time factor"},
		{"rtf Inf", func(s *Scenario) { s.Free.RTF = math.Inf(1) }, "free.rtf", "is not a real-time factor"},
		{"rtf 0 ok", func(s *Scenario) { s.Free.RTF = 0 }, "", ""},
		{"model missing", func(s *Scenario) { s.Dynamics.Model = "" }, "dynamics.model", "is required; name the embedded world model"},
		{"model bad", func(s *Scenario) { s.Dynamics.Model = "pen dulum" }, "dynamics.model", "is not a model name"},
		{"simulator with exact actuation", func(s *Scenario) { s.Dynamics.Model = ModelSimulator }, "actuation", "write actuation: hold"},
		{"simulator with hold ok", func(s *Scenario) { s.Dynamics.Model, s.Actuation = ModelSimulator, ActuationHold }, "", ""},
		{"step missing", func(s *Scenario) { s.Dynamics.Step = 0 }, "dynamics.step", "is required and must be > 0"},
		{"no robots", func(s *Scenario) { s.Robots = nil }, "robots", "needs at least one robot"},
		{"robot name missing", func(s *Scenario) { s.Robots[1].Name = "" }, "robots[1].name", "is required; name the robot"},
		{"robot name bad", func(s *Scenario) { s.Robots[1].Name = "b.1" }, "robots[1].name", `"b.1" may hold only letters, digits, _ and -`},
		{"robot name duplicate", func(s *Scenario) { s.Robots[1].Name = "a" }, "robots[1].name", `"a" is also the name of robots[0]; robot names must be unique`},
		{"robot cpu_scale zero", func(s *Scenario) { s.Robots[0].CPUScale = 0 }, "robots[0].cpu_scale", "must be a number > 0"},
		{"robot no clients", func(s *Scenario) { s.Robots[1].Clients = nil }, "robots[1].clients", "needs at least one client"},
		{"client name missing", func(s *Scenario) { s.Robots[0].Clients[1].Name = "" }, "robots[0].clients[1].name", "is required; name the client"},
		{"client name bad", func(s *Scenario) { s.Robots[0].Clients[1].Name = "p l" }, "robots[0].clients[1].name", "may hold only letters, digits, _ and -"},
		{"client name duplicate across robots", func(s *Scenario) { s.Robots[1].Clients[0].Name = "pd" }, "robots[1].clients[0].name", `"pd" is also the name of robots[0].clients[0]; client names must be unique in the scenario`},
		{"cmd missing", func(s *Scenario) { s.Robots[0].Clients[0].Cmd = nil }, "robots[0].clients[0].cmd", "is required: the program and its arguments"},
		{"cmd program empty", func(s *Scenario) { s.Robots[0].Clients[0].Cmd[0] = "" }, "robots[0].clients[0].cmd[0]", "is empty; the first item is the program to run"},
		{"cmd NUL", func(s *Scenario) { s.Robots[0].Clients[0].Cmd[2] = "a\x00b" }, "robots[0].clients[0].cmd[2]", "contains a NUL byte"},
		{"cmd empty argument ok", func(s *Scenario) { s.Robots[0].Clients[0].Cmd[2] = "" }, "", ""},
		{"api out of range", func(s *Scenario) { s.Robots[0].Clients[0].API = API(5) }, "robots[0].clients[0].api", "use one of native, plain, ros"},
		{"class missing", func(s *Scenario) { s.Robots[0].Clients[0].Class = ClassUnset }, "robots[0].clients[0].class", "is required; use periodic (with a period"},
		{"class out of range", func(s *Scenario) { s.Robots[0].Clients[0].Class = Class(9) }, "robots[0].clients[0].class", "9 is not a class"},
		{"period missing", func(s *Scenario) { s.Robots[0].Clients[0].Period = 0 }, "robots[0].clients[0].period", "is required for a periodic client and must be > 0"},
		{"period negative", func(s *Scenario) { s.Robots[0].Clients[0].Period = -Millisecond }, "robots[0].clients[0].period", "must be > 0"},
		{"period on best-effort", func(s *Scenario) { s.Robots[0].Clients[1].Period = Millisecond }, "robots[0].clients[1].period", "is only for periodic clients; remove it, or set class: periodic"},
		{"priority duplicate", func(s *Scenario) { s.Robots[0].Clients[1].Priority = 10 }, "robots[0].clients[1].priority", `10 is also the priority of client "pd" in this robot`},
		{"priority equal across robots ok", func(s *Scenario) { s.Robots[1].Clients[0].Priority = 0 }, "", ""},
		{"cpu_scale zero", func(s *Scenario) { s.Robots[0].Clients[0].CPUScale = 0 }, "robots[0].clients[0].cpu_scale", "must be a number > 0"},
		{"cpu_scale NaN", func(s *Scenario) { s.Robots[0].Clients[0].CPUScale = math.NaN() }, "robots[0].clients[0].cpu_scale", "must be a number > 0"},
		{"cpu_scale Inf", func(s *Scenario) { s.Robots[0].Clients[0].CPUScale = math.Inf(1) }, "robots[0].clients[0].cpu_scale", "must be a number > 0"},
		{"cpu_scale zero in lockstep ok", func(s *Scenario) { s.Mode = ModeLockstep; s.Robots[0].Clients[0].CPUScale = 0 }, "", ""},
		{"subscribes channel 0", func(s *Scenario) { s.Robots[0].Clients[0].Subscribes[1] = 0 }, "robots[0].clients[0].subscribes[1]", "channel 0 is not a message channel; channels are numbered from 1"},
		{"subscribes duplicate", func(s *Scenario) { s.Robots[0].Clients[0].Subscribes[1] = 1 }, "robots[0].clients[0].subscribes[1]", "channel 1 is listed twice"},
		{"subscribes on plain", func(s *Scenario) { s.Robots[1].Clients[0].Subscribes = []int{1} }, "robots[1].clients[0].subscribes", "is for native clients (api: native)"},
		{"samples out of range", func(s *Scenario) { s.Robots[1].Clients[0].Samples = Samples(5) }, "robots[1].clients[0].samples", "5 is not a samples setting; use one of each, at_activation"},
		{"samples at_activation on plain", func(s *Scenario) { s.Robots[1].Clients[0].Samples = SamplesAtActivation }, "robots[1].clients[0].samples", "at_activation is for ROS nodes (api: ros)"},
		{"samples at_activation best-effort", func(s *Scenario) {
			s.Robots[0].Clients[1].API, s.Robots[0].Clients[1].Samples = APIROS, SamplesAtActivation
		}, "robots[0].clients[1].samples", "at_activation is for periodic clients"},
		{"samples at_activation period off the step", func(s *Scenario) {
			s.Robots[1].Clients[0].API, s.Robots[1].Clients[0].Samples = APIROS, SamplesAtActivation
			s.Robots[1].Clients[0].Period = 2500 * Microsecond
		}, "robots[1].clients[0].samples", "needs a period (2.5ms) that is a multiple of dynamics.step (1ms)"},
		{"samples at_activation ok", func(s *Scenario) {
			s.Robots[1].Clients[0].API, s.Robots[1].Clients[0].Samples = APIROS, SamplesAtActivation
		}, "", ""},
		{"log is a folder", func(s *Scenario) { s.Robots[0].Clients[1].Log = "logs/" }, "robots[0].clients[1].log", `"logs/" is a folder; name a file, like log: plan.log`},
		{"log shared", func(s *Scenario) { s.Robots[1].Clients[0].Log = "./plan.log" }, "robots[1].clients[0].log", `"./plan.log" is also the log of client "plan"`},
		{"log is another's default", func(s *Scenario) { s.Robots[1].Clients[0].Log = "logs/pd.log" }, "robots[1].clients[0].log", `is also the log of client "pd"`},
		{"log is its own default ok", func(s *Scenario) { s.Robots[1].Clients[0].Log = "logs/pd2.log" }, "", ""},
		{"log NUL", func(s *Scenario) { s.Robots[0].Clients[1].Log = "a\x00" }, "robots[0].clients[1].log", "contains a NUL byte"},
		{"env name empty", func(s *Scenario) { s.Robots[0].Clients[0].Env[""] = "x" }, "robots[0].clients[0].env", `variable name "" is not valid`},
		{"env name with =", func(s *Scenario) { s.Robots[0].Clients[0].Env["A=B"] = "x" }, "robots[0].clients[0].env", `variable name "A=B" is not valid`},
		{"env value NUL", func(s *Scenario) { s.Robots[0].Clients[0].Env["K"] = "\x00" }, "robots[0].clients[0].env.K", "contains a NUL byte"},
		{"dir NUL", func(s *Scenario) { s.Robots[0].Clients[0].Dir = "\x00" }, "robots[0].clients[0].dir", "contains a NUL byte"},
		{"command_topic ok", func(s *Scenario) { s.Robots[0].CommandTopic = "/forward_position_controller/commands" }, "", ""},
		{"command_topic relative ok", func(s *Scenario) { s.Robots[0].CommandTopic = "effort_controller/commands" }, "", ""},
		{"command_topic bad", func(s *Scenario) { s.Robots[0].CommandTopic = "/a b" }, "robots[0].command_topic", `"/a b" is not a topic name`},
		{"command_topic trailing slash", func(s *Scenario) { s.Robots[0].CommandTopic = "/ctl/" }, "robots[0].command_topic", "is not a topic name"},
		{"command_topic twice", func(s *Scenario) {
			s.Robots[0].CommandTopic = "/ctl/commands"
			s.Robots[1].CommandTopic = "/ctl/commands"
		}, "robots[1].command_topic", "/ctl/commands is also the command topic of robot"},
		{"command_topic of tcs", func(s *Scenario) { s.Robots[0].CommandTopic = "/clock" }, "robots[0].command_topic", "/clock is a topic of tcs itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(base), "v.yaml")
			if err != nil {
				t.Fatalf("base: %v", err)
			}
			tt.edit(s)
			err = s.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("want Errors, got %T %v", err, err)
			}
			if len(es) != 1 {
				t.Errorf("want exactly one problem, got %d:\n%v", len(es), err)
			}
			e := es[0]
			if e.Field != tt.field || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got  %v\nwant field %q with %q", e, tt.field, tt.msg)
			}
			if e.File != "v.yaml" {
				t.Errorf("file %q", e.File)
			}
			// Fields the base file has, or whose item it has, carry a line.
			top := strings.SplitN(strings.SplitN(tt.field, ".", 2)[0], "[", 2)[0]
			if inFile := strings.Contains(base, "\n"+top+":"); inFile && e.Line == 0 {
				t.Errorf("no line in %v", e)
			}
		})
	}
}

// TestValidateLines checks that validation problems point at the line of
// the field, or of the item that lacks it.
func TestValidateLines(t *testing.T) {
	s, err := Parse([]byte(base), "v.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Robots[0].Clients[1].Period = Millisecond // not in the file: the client's line
	s.Robots[0].Clients[0].Period = 0           // in the file, line 11
	s.Duration = 0                              // line 3
	err = s.Validate()
	want := "v.yaml:3: duration: is required and must be > 0: the virtual time to simulate, like duration: 10s\n" +
		"v.yaml:11: robots[0].clients[0].period: is required for a periodic client and must be > 0, like period: 1ms\n" +
		"v.yaml:14: robots[0].clients[1].period: is only for periodic clients; remove it, or set class: periodic"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// TestValidateWithoutFile: a Scenario built in code validates too, without
// lines.
func TestValidateWithoutFile(t *testing.T) {
	s := &Scenario{Name: "x", Quantum: Millisecond, BasePriority: 80, Free: Free{RTF: 1}}
	err := s.Validate()
	if err == nil {
		t.Fatal("want problems")
	}
	if !strings.HasPrefix(err.Error(), "scenario: duration: is required") {
		t.Errorf("got %v", err)
	}
}
