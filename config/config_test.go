package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// minimal is the smallest valid scenario; tests build on it.
const minimal = `
duration: 10s
dynamics: {model: pendulum, step: 1ms}
robots:
  - name: arm
    clients:
      - name: pd
        cmd: [tcs, client, pd]
        class: periodic
        period: 1ms
`

func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse([]byte(src), "dir/test.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d example scenarios, want at least pendulum.yaml and two-robots.yaml", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			s, err := Load(f)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate after Load: %v", err)
			}
			if !filepath.IsAbs(s.Dir) {
				t.Errorf("Dir %q is not absolute after Load", s.Dir)
			}
		})
	}
}

func TestExamplePendulum(t *testing.T) {
	s, err := Load("pendulum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "pendulum" || s.Mode != ModeConsistent || s.Duration != 10*Second || s.Quantum != Millisecond {
		t.Errorf("run settings: %+v", s)
	}
	if s.Dynamics.Model != "pendulum" || s.Dynamics.Step != Millisecond {
		t.Errorf("dynamics: %+v", s.Dynamics)
	}
	if len(s.Robots) != 1 || s.Robots[0].Name != "arm" || s.ClientCount() != 1 {
		t.Fatalf("robots: %+v", s.Robots)
	}
	c := s.Robots[0].Clients[0]
	if c.Name != "pd" || !reflect.DeepEqual(c.Cmd, []string{"tcs", "client", "pd"}) || c.API != APINative ||
		c.Class != ClassPeriodic || c.Period != Millisecond {
		t.Errorf("client: %+v", c)
	}
}

func TestExampleTwoRobots(t *testing.T) {
	s, err := Load("two-robots.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Robots) != 2 || s.Robots[0].Name != "alpha" || s.Robots[1].Name != "beta" {
		t.Fatalf("robots: %+v", s.Robots)
	}
	refs := s.Clients()
	type row struct {
		name     string
		robot    int
		class    Class
		period   Duration
		priority int
		cmd      string
		subs     []int
	}
	want := []row{
		{"alpha_pd", 0, ClassPeriodic, 10 * Millisecond, 10, "tcs client pd --plan", []int{1}},
		{"alpha_planner", 0, ClassBestEffort, 0, 0, "tcs client planner", nil},
		{"beta_pd", 1, ClassPeriodic, 10 * Millisecond, 10, "tcs client pd", nil},
	}
	if len(refs) != len(want) {
		t.Fatalf("%d clients, want %d", len(refs), len(want))
	}
	for i, w := range want {
		r := refs[i]
		got := row{r.Client.Name, r.RobotIndex, r.Client.Class, r.Client.Period, r.Client.Priority, strings.Join(r.Client.Cmd, " "), r.Client.Subscribes}
		if !reflect.DeepEqual(got, w) || r.Index != i || r.Robot != &s.Robots[w.robot] {
			t.Errorf("client %d: got %+v, want %+v", i, got, w)
		}
	}
}

func TestDefaults(t *testing.T) {
	s := mustParse(t, minimal)
	want := &Scenario{
		Name:         "test",
		Mode:         ModeConsistent,
		Duration:     10 * Second,
		Quantum:      Millisecond,
		CPU:          -1,
		BasePriority: 80,
		Actuation:    ActuationExact,
		Compensation: true,
		WallLimit:    0,
		OnExit:       OnExitStop,
		Free:         Free{RTF: 1.0},
		Dynamics:     Dynamics{Model: "pendulum", Step: Millisecond},
		Robots: []Robot{{Name: "arm", CPUScale: 1.0, Clients: []Client{{
			Name: "pd", Cmd: []string{"tcs", "client", "pd"}, API: APINative, Class: ClassPeriodic,
			Period: Millisecond, Priority: 10, CPUScale: 1.0, Dir: "dir",
		}}}},
		File:  "dir/test.yaml",
		Dir:   "dir",
		lines: s.lines,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", s, want)
	}
	if got := s.EffectiveWallLimit(); got != 230*Second {
		t.Errorf("EffectiveWallLimit = %v, want 3m50s", got)
	}
}

// A simulator stepped over ROS 2 makes whole steps: its actuation is hold,
// and exact is refused naming the line.
func TestSimulatorActuation(t *testing.T) {
	sim := strings.Replace(minimal, "model: pendulum", "model: "+ModelSimulator, 1)
	if sim == minimal {
		t.Fatal("the minimal scenario names no pendulum")
	}
	if s := mustParse(t, sim); s.Actuation != ActuationHold {
		t.Errorf("simulator: actuation %v, want hold", s.Actuation)
	}
	if _, err := Parse([]byte("actuation: exact\n"+sim), "dir/test.yaml"); err == nil || !strings.Contains(err.Error(), "dir/test.yaml:1: actuation: exact is not possible") {
		t.Errorf("simulator with actuation: exact: %v, want it refused on line 1", err)
	}
	if s := mustParse(t, minimal); s.Actuation != ActuationExact {
		t.Errorf("pendulum: actuation %v, want exact", s.Actuation)
	}
}

func TestClientDefaults(t *testing.T) {
	s := mustParse(t, `
duration: 1s
dynamics: {model: pendulum, step: 1ms}
robots:
  - name: slow
    cpu_scale: 2.5
    clients:
      - {name: ctl, cmd: [a], class: periodic, period: 1ms}
      - {name: plan, cmd: [b], class: best-effort, dir: sub, log: plan.txt, env: {A: 1, B: "x", C: }}
      - {name: fast, cmd: [c, 40, true], class: best-effort, priority: -3, cpu_scale: 0.5, dir: /abs, api: plain}
`)
	cs := s.Robots[0].Clients
	if cs[0].Priority != 10 || cs[1].Priority != 0 || cs[2].Priority != -3 {
		t.Errorf("priorities %d %d %d, want 10 0 -3", cs[0].Priority, cs[1].Priority, cs[2].Priority)
	}
	if cs[0].CPUScale != 2.5 || cs[1].CPUScale != 2.5 || cs[2].CPUScale != 0.5 {
		t.Errorf("cpu_scale %v %v %v, want 2.5 2.5 0.5", cs[0].CPUScale, cs[1].CPUScale, cs[2].CPUScale)
	}
	if cs[0].Dir != "dir" || cs[1].Dir != filepath.Join("dir", "sub") || cs[2].Dir != "/abs" {
		t.Errorf("dirs %q %q %q", cs[0].Dir, cs[1].Dir, cs[2].Dir)
	}
	if !reflect.DeepEqual(cs[1].Env, map[string]string{"A": "1", "B": "x", "C": ""}) {
		t.Errorf("env %v", cs[1].Env)
	}
	if got := cs[1].Environ(); !reflect.DeepEqual(got, []string{"A=1", "B=x", "C="}) {
		t.Errorf("Environ %v", got)
	}
	if !reflect.DeepEqual(cs[2].Cmd, []string{"c", "40", "true"}) || cs[2].API != APIPlain {
		t.Errorf("cmd %q api %v", cs[2].Cmd, cs[2].API)
	}
	if got := cs[0].LogPath("/out"); got != "/out/logs/ctl.log" {
		t.Errorf("default LogPath %q", got)
	}
	if got := cs[1].LogPath("/out"); got != "/out/plan.txt" {
		t.Errorf("relative LogPath %q", got)
	}
	cs[1].Log = "/var/log/x.log"
	if got := cs[1].LogPath("/out"); got != "/var/log/x.log" {
		t.Errorf("absolute LogPath %q", got)
	}
	if r, ok := s.FindClient("fast"); !ok || r.Index != 2 || r.Client != &cs[2] {
		t.Errorf("FindClient(fast) = %+v, %v", r, ok)
	}
	if _, ok := s.FindClient("nobody"); ok {
		t.Error("FindClient(nobody) found one")
	}
}

func TestRunSettings(t *testing.T) {
	s := mustParse(t, `
name: my.run_1
mode: lockstep
duration: 2.5
quantum: 250us
cpu: 3
base_priority: 50
actuation: hold
compensation: false
wall_limit: 1m
on_exit: continue
free: {rtf: 0}
dynamics: {model: pendulum, step: 0.0005, params: {mass: 2, nested: {a: [1, 2.5, x]}}}
robots: [{name: r, clients: [{name: c, cmd: [x], class: best-effort}]}]
`)
	if s.Name != "my.run_1" || s.Mode != ModeLockstep || s.Duration != 2500*Millisecond || s.Quantum != 250*Microsecond ||
		s.CPU != 3 || s.BasePriority != 50 || s.Actuation != ActuationHold || s.Compensation || s.WallLimit != 60*Second ||
		s.OnExit != OnExitContinue || s.Free.RTF != 0 || s.Dynamics.Step != 500*Microsecond {
		t.Errorf("settings: %+v", s)
	}
	want := map[string]any{"mass": 2, "nested": map[string]any{"a": []any{1, 2.5, "x"}}}
	if !reflect.DeepEqual(s.Dynamics.Params, want) {
		t.Errorf("params %#v, want %#v", s.Dynamics.Params, want)
	}
	if s.EffectiveWallLimit() != 60*Second {
		t.Errorf("EffectiveWallLimit %v", s.EffectiveWallLimit())
	}
}

func TestAnchorsAndMerge(t *testing.T) {
	s := mustParse(t, `
duration: 1s
dynamics: {model: pendulum, step: 1ms}
x-ctl: &ctl {cmd: [tcs, client, pd], class: periodic, period: 1ms}
robots:
  - name: a
    clients:
      - {<<: *ctl, name: a_pd}
  - name: b
    clients:
      - <<: *ctl
        name: b_pd
        period: 2ms
`)
	cs := s.Clients()
	if len(cs) != 2 {
		t.Fatalf("%d clients", len(cs))
	}
	a, b := cs[0].Client, cs[1].Client
	if a.Name != "a_pd" || a.Period != Millisecond || a.Class != ClassPeriodic || len(a.Cmd) != 3 {
		t.Errorf("a: %+v", a)
	}
	if b.Name != "b_pd" || b.Period != 2*Millisecond || b.Class != ClassPeriodic || len(b.Cmd) != 3 {
		t.Errorf("b: %+v", b)
	}
	if l := s.Line("robots[1].clients[0].period"); l != 13 {
		t.Errorf("explicit key's line %d, want 13", l)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		line  int
		field string
		msg   string
	}{
		{"empty", ``, 0, "", "the file is empty"},
		{"only comments", "# nothing\n", 0, "", "the file is empty"},
		{"syntax", "duration: 1s\nrobots: [\n", 2, "", "YAML syntax"},
		{"tab indent", "duration: 1s\n\tquantum: 1ms\n", 2, "", "YAML syntax"},
		{"two documents", minimal + "---\nname: x\n", 11, "", "more than one YAML document"},
		{"not a mapping", "- a\n- b\n", 1, "", "must be a mapping"},
		{"unknown top", "duraton: 1s\n", 1, "duraton", `unknown field "duraton" (did you mean duration?); valid fields in a scenario are: name, mode`},
		{"unknown client", strings.Replace(minimal, "period: 1ms", "periode: 1ms", 1), 10, "robots[0].clients[0].periode", `valid fields in robots[0].clients[0] are: name, cmd, api, class, period,`},
		{"unknown dynamics", "dynamics: {model: p, stp: 1ms}\n", 1, "dynamics.stp", "did you mean step?"},
		{"unknown free", "free: {speed: 2}\n", 1, "free.speed", "valid fields in free are: rtf"},
		{"unknown robot", "robots: [{name: a, cpu: 1}]\n", 1, "robots[0].cpu", "valid fields in robots[0] are: name, cpu_scale, command_topic, clients"},
		{"duplicate key", "duration: 1s\nduration: 2s\n", 2, "duration", "appears twice"},
		{"bad duration", "duration: abc\n", 1, "duration", `"abc" is not a duration; write it like 1ms or 0.01s`},
		{"bad period", strings.Replace(minimal, "period: 1ms", "period: abc", 1), 10, "robots[0].clients[0].period", `"abc" is not a duration; write it like 1ms or 0.01s`},
		{"duration list", "duration: [1s]\n", 1, "duration", "must be a single value like 10s, not a list"},
		{"bad mode", "mode: fast\n", 1, "mode", `"fast" is not a valid mode; use one of consistent, lockstep, free`},
		{"bad actuation", "actuation: late\n", 1, "actuation", "use one of exact, hold"},
		{"bad on_exit", "on_exit: crash\n", 1, "on_exit", "use one of stop, continue"},
		{"bad class", "robots: [{clients: [{class: periodical}]}]\n", 1, "robots[0].clients[0].class", "use one of periodic, best-effort"},
		{"bad api", "robots: [{clients: [{api: ros2}]}]\n", 1, "robots[0].clients[0].api", "use one of native, plain, ros"},
		{"bad samples", "robots: [{clients: [{samples: latest}]}]\n", 1, "robots[0].clients[0].samples", `"latest" is not a valid samples; use one of each, at_activation`},
		{"bad cpu", "cpu: last\n", 1, "cpu", `"last" is not a whole number`},
		{"float priority", "base_priority: 80.5\n", 1, "base_priority", `"80.5" is not a whole number`},
		{"bad bool", "compensation: maybe\n", 1, "compensation", `"maybe" is not true or false`},
		{"bad rtf", "free: {rtf: fast}\n", 1, "free.rtf", `"fast" is not a number`},
		{"nan rtf", "free: {rtf: .nan}\n", 1, "free.rtf", "is not a number"},
		{"bad cpu_scale", "robots: [{cpu_scale: x}]\n", 1, "robots[0].cpu_scale", "is not a number"},
		{"free not mapping", "free: 1\n", 1, "free", "must be a mapping"},
		{"robots not list", "robots: {name: a}\n", 1, "robots", "must be a list"},
		{"clients not list", "robots: [{clients: pd}]\n", 1, "robots[0].clients", "must be a list"},
		{"robot not mapping", "robots: [arm]\n", 1, "robots[0]", "must be a mapping"},
		{"cmd string", "robots: [{clients: [{cmd: tcs client pd}]}]\n", 1, "robots[0].clients[0].cmd", "must be a list like [tcs, client, pd]"},
		{"cmd nested", "robots: [{clients: [{cmd: [[a]]}]}]\n", 1, "robots[0].clients[0].cmd[0]", "must be a single value"},
		{"subscribes string", "robots: [{clients: [{subscribes: one}]}]\n", 1, "robots[0].clients[0].subscribes", "must be a list like [1]"},
		{"subscribes item", "robots: [{clients: [{subscribes: [a]}]}]\n", 1, "robots[0].clients[0].subscribes[0]", `"a" is not a whole number`},
		{"env list", "robots: [{clients: [{env: [A]}]}]\n", 1, "robots[0].clients[0].env", "must be a mapping of variables"},
		{"env nested", "robots: [{clients: [{env: {A: [1]}}]}]\n", 1, "robots[0].clients[0].env.A", "must be a single value"},
		{"params list", "dynamics: {params: [1]}\n", 1, "dynamics.params", "must be a mapping of the model's settings"},
		{"params bad key", "dynamics: {params: {[1]: 2}}\n", 1, "dynamics.params", "cannot be read"},
		{"merge scalar", "<<: 3\n", 1, "", "<< merge of something that is not a mapping"},
		{"self alias", "a: &a\n  b: *a\n", 1, "a", "unknown field"},
		{"key not a name", "? [a]\n: 1\n", 1, "", "has a key that is not a name"},
		{"duration overflow", "duration: 1e300\n", 1, "duration", "too long"},
		{"duration overflow unit", "duration: 9999999999999h\n", 1, "duration", "duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.src), "x.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if s != nil {
				t.Errorf("Parse returned a scenario with an error")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			for _, e := range es {
				if e.Field == tt.field && strings.Contains(e.Msg, tt.msg) {
					if e.Line != tt.line {
						t.Errorf("line %d, want %d: %v", e.Line, tt.line, e)
					}
					if e.File != "x.yaml" {
						t.Errorf("file %q, want x.yaml", e.File)
					}
					return
				}
			}
			t.Errorf("no problem at field %q containing %q in:\n%v", tt.field, tt.msg, err)
		})
	}
}

// TestParseErrorNotRepeated: a field that failed to parse is not reported
// again by validation ("is required").
func TestParseErrorNotRepeated(t *testing.T) {
	_, err := Parse([]byte(strings.Replace(minimal, "duration: 10s", "duration: abc", 1)), "x.yaml")
	es := err.(Errors)
	if len(es) != 1 {
		t.Fatalf("want exactly one problem, got:\n%v", err)
	}
	want := `x.yaml:2: duration: "abc" is not a duration; write it like 1ms or 0.01s`
	if es[0].Error() != want {
		t.Errorf("got  %s\nwant %s", es[0], want)
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	src := `
mode: fast
duration: 0s
quantum: 1us
robots:
  - name: a
    clients:
      - name: c1
        cmd: [x]
        class: periodic
      - name: c1
        class: best-effort
        period: 1ms
        priority: 10
        bogus: 1
`
	_, err := Parse([]byte(src), "x.yaml")
	es, ok := err.(Errors)
	if !ok {
		t.Fatalf("err %T %v", err, err)
	}
	got := err.Error()
	for _, w := range []string{
		`x.yaml:2: mode: "fast" is not a valid mode`,
		`x.yaml:3: duration: is required and must be > 0`,
		`x.yaml:4: quantum: 1µs is outside 50µs..100ms`,
		`x.yaml:8: robots[0].clients[0].period: is required for a periodic client`,
		`x.yaml:11: robots[0].clients[1].name: "c1" is also the name of robots[0].clients[0]`,
		`x.yaml:11: robots[0].clients[1].cmd: is required`,
		`x.yaml:13: robots[0].clients[1].period: is only for periodic clients`,
		`x.yaml:14: robots[0].clients[1].priority: 10 is also the priority of client "c1"`,
		`x.yaml:15: robots[0].clients[1].bogus: unknown field "bogus"`,
		`dynamics.model: is required`,
		`dynamics.step: is required`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q", w)
		}
	}
	for i := 1; i < len(es); i++ {
		if es[i].Line != 0 && es[i-1].Line > es[i].Line {
			t.Errorf("problems not in line order:\n%v", err)
			break
		}
	}
	if len(es) != 11 {
		t.Errorf("%d problems, want 11:\n%v", len(es), err)
	}
}

func TestFieldErrorFormat(t *testing.T) {
	tests := []struct {
		e    FieldError
		want string
	}{
		{FieldError{"config/x.yaml", 12, "robots[0].clients[1].period", `"abc" is not a duration; write it like 1ms or 0.01s`},
			`config/x.yaml:12: robots[0].clients[1].period: "abc" is not a duration; write it like 1ms or 0.01s`},
		{FieldError{"x.yaml", 0, "duration", "m"}, "x.yaml: duration: m"},
		{FieldError{"x.yaml", 3, "", "m"}, "x.yaml:3: m"},
		{FieldError{"", 0, "", "m"}, "scenario: m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	es := Errors{&tests[0].e, &tests[1].e}
	if es.Error() != tests[0].want+"\n"+tests[1].want {
		t.Errorf("Errors.Error() = %q", es.Error())
	}
	var fe *FieldError
	if !errors.As(error(es), &fe) || fe != &tests[0].e {
		t.Errorf("errors.As did not find the first FieldError")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

func TestLoadResolvesDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yml")
	if err := os.WriteFile(p, []byte(strings.Replace(minimal, "class: periodic", "class: periodic\n        dir: work", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "s" || s.Dir != dir || s.Robots[0].Clients[0].Dir != filepath.Join(dir, "work") {
		t.Errorf("name %q dir %q client dir %q", s.Name, s.Dir, s.Robots[0].Clients[0].Dir)
	}
}

// A model's file params (mujoco's mjcf) are relative to the scenario's
// folder; absolute ones and other models' params are left alone.
func TestLoadResolvesModelFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ dynamics, key, want string }{
		{"{model: mujoco, step: 2ms, params: {mjcf: models/arm.xml}}", "mjcf", filepath.Join(dir, "models/arm.xml")},
		{"{model: mujoco, step: 2ms, params: {mjcf: /m/arm.xml}}", "mjcf", "/m/arm.xml"},
		{"{model: pendulum, step: 1ms, params: {mjcf: arm.xml}}", "mjcf", "arm.xml"},
	} {
		p := filepath.Join(dir, "s.yaml")
		src := strings.Replace(minimal, "{model: pendulum, step: 1ms}", tc.dynamics, 1)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Dynamics.Params[tc.key]; got != tc.want {
			t.Errorf("%s: %s = %v, want %s", tc.dynamics, tc.key, got, tc.want)
		}
	}
}

// A robot's command topic: /<robot>/command by default; command_topic
// absolute as written, relative in the robot's namespace.
func TestCommandTopic(t *testing.T) {
	for topic, want := range map[string]string{"": "/arm/command", "/fpc/commands": "/fpc/commands", "fpc/commands": "/arm/fpc/commands"} {
		s := mustParse(t, strings.Replace(minimal, "  - name: arm\n", "  - name: arm\n    command_topic: \""+topic+"\"\n", 1))
		if got := s.Robots[0].Command(); got != want || s.Robots[0].CommandTopic != topic {
			t.Errorf("command_topic %q: Command() %q (field %q), want %q", topic, got, s.Robots[0].CommandTopic, want)
		}
	}
}

func TestDefaultNameFromPath(t *testing.T) {
	for path, want := range map[string]string{"": "scenario", "a/b/run.yaml": "run", "run.yml": "run", "x": "x"} {
		s, err := Parse([]byte(minimal), path)
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		if s.Name != want {
			t.Errorf("path %q: name %q, want %q", path, s.Name, want)
		}
	}
	if _, err := Parse([]byte(minimal), "my run.yaml"); err == nil || !strings.Contains(err.Error(), "name:") {
		t.Errorf("a file name with a space should ask for name:, got %v", err)
	}
}

func TestEffectiveWallLimitSaturates(t *testing.T) {
	s := &Scenario{Duration: Duration(1 << 62)}
	if s.EffectiveWallLimit() != Duration(1<<63-1) {
		t.Errorf("EffectiveWallLimit overflowed: %v", s.EffectiveWallLimit())
	}
}

func TestLine(t *testing.T) {
	s := mustParse(t, minimal)
	for field, want := range map[string]int{
		"duration":                     2,
		"robots":                       4,
		"robots[0]":                    5,
		"robots[0].clients[0]":         7,
		"robots[0].clients[0].period":  10,
		"robots[0].clients[0].cmd[2]":  8,
		"robots[0].clients[0].nothing": 7,
		"quantum":                      0,
	} {
		if got := s.Line(field); got != want {
			t.Errorf("Line(%q) = %d, want %d", field, got, want)
		}
	}
}

func TestManyProblemsAreCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("bogus" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ": 1\n")
	}
	_, err := Parse([]byte(b.String()), "x.yaml")
	es := err.(Errors)
	if len(es) != maxErrors+1 || !strings.Contains(es[maxErrors].Msg, "more problems; fix these first") {
		t.Errorf("%d problems, last %v", len(es), es[len(es)-1])
	}
}

func TestAliasBombIsRefused(t *testing.T) {
	for _, depth := range []int{6, 7, 8} {
		aliasBomb(t, depth)
	}
}

func aliasBomb(t *testing.T, depth int) {
	src := "x-a: &a {name: n}\n"
	prev := "a"
	for i := 0; i < depth; i++ {
		cur := string(rune('b' + i))
		src += "x-" + cur + ": &" + cur + " {<<: [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]}\n"
		prev = cur
	}
	src += "robots: [{<<: *" + prev + "}]\n"
	_, err := Parse([]byte(src), "x.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
}

// ros.relay, attach and max_rtf: each mistake names its field.
func TestROSRelayAttachAndPacingErrors(t *testing.T) {
	ros := strings.Replace(minimal, "class: periodic", "api: ros\n        class: periodic", 1)
	for _, tc := range []struct{ name, src, want string }{
		{"relative topic", ros + "ros: {relay: [{topic: plan, from: pd}]}\n", `ros.relay[0].topic: "plan" is not an absolute topic name`},
		{"tcs topic", ros + "ros: {relay: [{topic: /clock, from: pd}]}\n", "ros.relay[0].topic: /clock is a topic of tcs itself"},
		{"twice", ros + "ros: {relay: [{topic: /a, from: pd}, {topic: /a, from: pd}]}\n", "ros.relay[1].topic: /a is relayed twice"},
		{"no from", ros + "ros: {relay: [{topic: /a}]}\n", "ros.relay[0].from: is required"},
		{"unknown from", ros + "ros: {relay: [{topic: /a, from: planner}]}\n", `ros.relay[0].from: "planner" is not a client of this scenario; clients: pd`},
		{"native from", minimal + "ros: {relay: [{topic: /a, from: pd}]}\n", `ros.relay[0].from: client "pd" is not a ROS node`},
		{"relay field", ros + "ros: {relay: [{topic: /a, form: pd}]}\n", `unknown field "form"`},
		{"attach with cmd", strings.Replace(ros, "class: periodic", "attach: true\n        class: periodic", 1), "robots[0].clients[0].cmd: is for clients tcs starts"},
		{"attach native", strings.Replace(minimal, "cmd: [tcs, client, pd]", "attach: true", 1), "robots[0].clients[0].attach: is for ROS nodes"},
		{"max_rtf", minimal + "max_rtf: -1\n", "max_rtf: -1 is not a real-time factor"},
	} {
		_, err := Parse([]byte(tc.src), "x.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	s := mustParse(t, strings.Replace(ros, "cmd: [tcs, client, pd]", "attach: true", 1)+"max_rtf: 1\nros: {relay: [{topic: /arm/plan, from: pd}]}\n")
	if !s.Robots[0].Clients[0].Attach || s.MaxRTF != 1 || len(s.ROS.Relay) != 1 || s.ROS.Relay[0] != (Relay{Topic: "/arm/plan", From: "pd"}) {
		t.Errorf("parsed %+v %+v %v", s.Robots[0].Clients[0], s.ROS.Relay, s.MaxRTF)
	}
}
