package coordinator

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scripted policy tests: each file in testdata/ is a scenario written as
// commands, each followed by "----" and what the policy answered, in the
// style of etcd raft's data-driven tests. The script plays the driver: it
// asks for the next action and reports what the fake processes did. Run
// with -rewrite to write the answers the policy gives now into the files
// (then read the diff: it is the change in behaviour).
//
// Commands (times take a unit: ns, us, ms, s; clients are named):
//
//	conf mode=consistent|lockstep|free quantum=1ms step=1ms duration=10ms [latecap=200us] [maxrtf=1] [continue] [hold] [compensation]
//	client NAME [robot=0] prio=10 class=periodic|best-effort [period=1ms] [api=native|plain|ros] [scale=1] [observed] [atactivation]
//	new                           build the policy from conf and clients
//	next [N]                      the next N actions (default 1); a Dispatch ends the list
//	ran NAME cpu=T stop=preempted|blocked|request|interrupted [timer] [late=T] [away=T]
//	holdover NAME cpu=T arm=T [alone] [sleep=T] [host] [polled]   the hold-over rule after a dispatch (before ran)
//	clock NAME [at=T]             the clock rule: at a dispatch (DispatchClock), or at boundary T
//	idle NAME wake=T | read NAME | actuate NAME | relay NAME to=A,B
//	resume NAME                   the rest of NAME's slice after ran ... stop=interrupted (Resume)
//	exited NAME code=N | clocklost NAME | delivered NAME | woke NAME | started NAME | probed
//	sample NAME at=T              the sample rule at boundary T (SampleNow): now or held
//	stats [NAME...]               the accounting of the named (default all) clients
//	state                         the policy's String
//	wall T                        the wall clock passed to Next (free mode)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scripts in testdata/")

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

type scriptCase struct {
	cmd  string
	want string
	line int
}

func parseScript(t *testing.T, path string) []scriptCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var cases []scriptCase
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := scriptCase{cmd: l, line: i + 1}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "----" {
			t.Fatalf("%s:%d: %q is not followed by ----", path, i+1, l)
		}
		i += 2
		var want []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		c.want = strings.Join(want, "\n")
		cases = append(cases, c)
	}
	return cases
}

func writeScript(t *testing.T, path string, cases []scriptCase, got []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the comments and blank lines before each command.
	lines := strings.Split(string(b), "\n")
	var out strings.Builder
	k := 0
	for i := 0; i < len(lines); i++ {
		if k < len(cases) && i+1 == cases[k].line {
			out.WriteString(cases[k].cmd + "\n----\n")
			if got[k] != "" {
				out.WriteString(got[k] + "\n")
			}
			i += 2
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				i++
			}
			if i < len(lines) {
				out.WriteString("\n")
			}
			k++
			continue
		}
		out.WriteString(lines[i])
		if i+1 < len(lines) {
			out.WriteString("\n")
		}
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

type scriptRun struct {
	conf  Conf
	p     *Policy
	names map[string]int
	wall  int64
	ran   bool     // a Dispatch is out: the next command must report it (ran)
	out   int      // the client it is out to
	log   []string // activations and misses the Recorder saw since the last command
}

func (s *scriptRun) Activation(c int, begin, due int64) {
	s.log = append(s.log, fmt.Sprintf("  (activation %s due=%s began=%s)", s.conf.Clients[c].Name, fmtNs(due), fmtNs(begin)))
}
func (s *scriptRun) Miss(c int, due int64) {
	s.log = append(s.log, fmt.Sprintf("  (miss %s due=%s)", s.conf.Clients[c].Name, fmtNs(due)))
}
func (s *scriptRun) Drift(int64) {}

func runScript(t *testing.T, path string) {
	cases := parseScript(t, path)
	s := &scriptRun{names: map[string]int{}}
	got := make([]string, len(cases))
	for k, c := range cases {
		out, err := s.do(c.cmd)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", path, c.line, c.cmd, err)
		}
		if s.p != nil {
			if err := s.p.checkCaches(); err != nil {
				t.Fatalf("%s:%d: %s: %v", path, c.line, c.cmd, err)
			}
		}
		got[k] = out
		if !*rewrite && out != c.want {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, c.line, c.cmd, out, c.want)
		}
	}
	if *rewrite {
		writeScript(t, path, cases, got)
	}
}

// fmtNs writes a virtual time in the scripts' units.
func fmtNs(ns int64) string {
	switch {
	case ns == 0:
		return "0"
	case ns%int64(time.Millisecond) == 0:
		return strconv.FormatInt(ns/int64(time.Millisecond), 10) + "ms"
	case ns%int64(time.Microsecond) == 0:
		return strconv.FormatInt(ns/int64(time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(ns, 10) + "ns"
}

func parseNs(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(v)
	return int64(d), err
}

func (s *scriptRun) client(name string) (int, error) {
	c, ok := s.names[name]
	if !ok {
		return 0, fmt.Errorf("no client %q", name)
	}
	return c, nil
}

func (s *scriptRun) do(cmd string) (string, error) {
	f := strings.Fields(cmd)
	args := map[string]string{}
	var pos []string
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			args[k] = v
		} else {
			pos = append(pos, a)
		}
	}
	ns := func(k string) (int64, error) {
		v, ok := args[k]
		if !ok {
			return 0, fmt.Errorf("missing %s=", k)
		}
		return parseNs(v)
	}
	flagSet := func(k string) bool {
		for _, p := range pos {
			if p == k {
				return true
			}
		}
		return false
	}
	s.log = s.log[:0]
	var out string
	var err error
	switch f[0] {
	case "conf":
		s.conf = Conf{Mode: map[string]Mode{"consistent": Consistent, "lockstep": Lockstep, "free": Free}[args["mode"]],
			Robots: 1, ContinueOnExit: flagSet("continue"), Compensation: flagSet("compensation")}
		if flagSet("hold") {
			s.conf.Actuation = Hold
		}
		if s.conf.Quantum, err = ns("quantum"); err != nil {
			return "", err
		}
		if s.conf.Step, err = ns("step"); err != nil {
			return "", err
		}
		if s.conf.Duration, err = ns("duration"); err != nil {
			return "", err
		}
		if _, ok := args["latecap"]; ok {
			if s.conf.LateCap, err = ns("latecap"); err != nil {
				return "", err
			}
		}
		if v, ok := args["robots"]; ok {
			s.conf.Robots, _ = strconv.Atoi(v)
		}
		if v, ok := args["maxrtf"]; ok {
			s.conf.MaxRTF, _ = strconv.ParseFloat(v, 64)
		}
	case "client":
		cc := ClientConf{Name: pos[0], Class: Periodic}
		cc.Robot, _ = strconv.Atoi(args["robot"])
		cc.Priority, _ = strconv.Atoi(args["prio"])
		if args["class"] == "best-effort" {
			cc.Class = BestEffort
		}
		if _, ok := args["period"]; ok {
			if cc.Period, err = ns("period"); err != nil {
				return "", err
			}
		}
		cc.API = map[string]API{"": Native, "native": Native, "plain": Plain, "ros": ROS}[args["api"]]
		if v, ok := args["scale"]; ok {
			cc.CPUScale, _ = strconv.ParseFloat(v, 64)
		}
		cc.Observed = flagSet("observed")
		cc.SamplesAtActivation = flagSet("atactivation")
		s.names[cc.Name] = len(s.conf.Clients)
		s.conf.Clients = append(s.conf.Clients, cc)
	case "new":
		s.p, err = New(s.conf, s)
	case "wall":
		s.wall, err = parseNs(pos[0])
	case "next":
		n := 1
		if len(pos) > 0 {
			n, _ = strconv.Atoi(pos[0])
		}
		if s.ran {
			return "", fmt.Errorf("a dispatch is out: report it with ran first")
		}
		var lines []string
		for i := 0; i < n; i++ {
			s.log = s.log[:0]
			a := s.p.Next(s.wall)
			if err := s.p.checkCaches(); err != nil {
				return "", fmt.Errorf("after %v: %w", a, err)
			}
			s.ran, s.out = a.Kind == KindDispatch, a.Client
			lines = append(lines, a.String())
			lines = append(lines, s.log...)
			if a.Kind == KindDispatch || a.Kind == KindFinish || a.Kind == KindProbe || a.Kind == KindWait || a.Kind == KindHold || a.Kind == KindPause {
				break
			}
		}
		s.log = s.log[:0]
		out = strings.Join(lines, "\n")
	case "ran":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		sl := Slice{Stop: map[string]Stop{"preempted": Preempted, "blocked": Blocked, "request": Request, "interrupted": Interrupted}[args["stop"]],
			Timer: flagSet("timer") || args["stop"] == "preempted"}
		if sl.Stop == 0 {
			return "", fmt.Errorf("stop=%q", args["stop"])
		}
		if sl.CPU, err = ns("cpu"); err != nil {
			return "", err
		}
		if _, ok := args["late"]; ok {
			sl.Late, _ = ns("late")
		}
		if _, ok := args["away"]; ok {
			sl.Away, _ = ns("away")
		}
		if !s.ran || s.out != c {
			return "", fmt.Errorf("%s was not dispatched", pos[0])
		}
		s.ran = false
		ch := s.p.Ran(c, sl)
		if ch.Host > 0 {
			out = fmt.Sprintf("charged %s, host %s", fmtNs(ch.CPU), fmtNs(ch.Host))
		}
	case "clock":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		if _, ok := args["at"]; ok {
			t, err := ns("at")
			if err != nil {
				return "", err
			}
			out = fmt.Sprintf("boundary: %v", s.p.BoundaryClock(c, t))
			break
		}
		if t, ok := s.p.DispatchClock(c); ok {
			out = "dispatch: " + fmtNs(t)
		} else {
			out = "dispatch: none"
		}
	case "holdover":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		cpu, err := ns("cpu")
		if err != nil {
			return "", err
		}
		arm, err := ns("arm")
		if err != nil {
			return "", err
		}
		if !s.p.HoldOver(c, flagSet("alone"), cpu, arm) {
			return "not asked", nil
		}
		var ws Waits
		if _, ws.Timed = args["sleep"]; ws.Timed {
			if ws.Sleep, err = ns("sleep"); err != nil {
				return "", err
			}
		}
		ws.Host = flagSet("host")
		ws.Polled = flagSet("polled")
		if b := s.p.HoldBudget(c, ws, cpu, arm); b > 0 {
			out = "held budget=" + fmtNs(b)
		} else {
			out = "asked, not held"
		}
	case "idle":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		w, err := ns("wake")
		if err != nil {
			return "", err
		}
		s.p.Idle(c, w)
	case "read":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		out = fmt.Sprintf("available %v", s.p.Read(c))
	case "resume":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		if s.ran {
			return "", fmt.Errorf("a dispatch is out: report it with ran first")
		}
		a, ok := s.p.Resume(c)
		if !ok {
			out = "the slice ends"
			break
		}
		s.ran, s.out = true, a.Client
		out = a.String()
	case "actuate":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		out = fmt.Sprintf("slot %d", s.p.Actuate(c))
	case "relay":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		var to uint64
		for _, n := range strings.Split(args["to"], ",") {
			r, err := s.client(n)
			if err != nil {
				return "", err
			}
			to |= 1 << r
		}
		slot, at, ok := s.p.Relay(c, to)
		out = fmt.Sprintf("slot %d at %s ok %v", slot, fmtNs(at), ok)
	case "exited":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		code, _ := strconv.Atoi(args["code"])
		s.p.Exited(c, code)
	case "clocklost":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		s.p.ClockLost(c)
	case "sample":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		t, err := ns("at")
		if err != nil {
			return "", err
		}
		out = "sample: held"
		if s.p.SampleNow(c, t) {
			out = "sample: now"
		}
	case "delivered":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		s.p.Delivered(c)
	case "woke":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		s.p.Woke(c)
	case "started":
		c, err := s.client(pos[0])
		if err != nil {
			return "", err
		}
		s.p.Started(c)
	case "probed":
		s.p.Probed()
	case "pause":
		out = "limit=" + fmtNs(s.p.Pause())
	case "play":
		s.p.Play(s.wall)
	case "stepby":
		n, _ := strconv.ParseInt(pos[0], 10, 64)
		if l, ok := s.p.StepBy(n, s.wall); ok {
			out = "limit=" + fmtNs(l)
		} else {
			out = "refused"
		}
	case "stats":
		names := pos
		if len(names) == 0 {
			for _, cc := range s.conf.Clients {
				names = append(names, cc.Name)
			}
		}
		var lines []string
		for _, n := range names {
			c, err := s.client(n)
			if err != nil {
				return "", err
			}
			lines = append(lines, s.stats(c))
		}
		out = strings.Join(lines, "\n")
	case "state":
		out = s.p.String()
	default:
		return "", fmt.Errorf("unknown command %q", f[0])
	}
	if err != nil {
		return "", err
	}
	if len(s.log) > 0 {
		if out != "" {
			out += "\n"
		}
		out += strings.Join(s.log, "\n")
	}
	return out, nil
}

// stats formats client c's accounting and checks the period identity
// (activations + lost = periods + extra), which every script must keep.
func (s *scriptRun) stats(c int) string {
	st := s.p.Stats(c)
	line := fmt.Sprintf("%s: %s progress=%s cpu=%s", s.conf.Clients[c].Name, st.State, fmtNs(st.Progress), fmtNs(st.CPU))
	if s.conf.Clients[c].Class == Periodic {
		line += fmt.Sprintf(" periods=%d activations=%d misses=%d lost{before=%d after=%d overrun=%d host=%d}",
			st.Periods, st.Activations, st.Misses, st.Lost.BeforeStart, st.Lost.AfterExit, st.Lost.Overrun, st.Lost.Host)
		if st.Extra > 0 {
			line += fmt.Sprintf(" extra=%d", st.Extra)
		}
		if st.Activations-st.Extra+st.Lost.Total() != st.Periods {
			line += " PERIODS DO NOT ADD UP"
		}
	}
	if st.HostMisses > 0 || st.HostNs > 0 {
		line += fmt.Sprintf(" host{misses=%d cpu=%s}", st.HostMisses, fmtNs(st.HostNs))
	}
	if st.LateBegins > 0 {
		line += fmt.Sprintf(" late-begins=%d", st.LateBegins)
	}
	if st.PausedNs > 0 {
		line += " paused-cpu=" + fmtNs(st.PausedNs)
	}
	if st.Exited {
		line += fmt.Sprintf(" exit=%d at=%s", st.ExitCode, fmtNs(st.ExitedAt))
	}
	if st.ClockLost {
		line += " clock-lost"
	}
	return line
}
