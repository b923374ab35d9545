package config

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The fields each mapping of the schema may have, in the order the
// "valid fields are" hint lists them.
var (
	scenarioFields = []string{"name", "mode", "duration", "quantum", "cpu", "base_priority", "user", "actuation",
		"compensation", "wall_limit", "stall_timeout", "max_rtf", "on_exit", "free", "ros", "dynamics", "robots"}
	freeFields     = []string{"rtf"}
	rosFields      = []string{"master", "startup_timeout", "diagnostics_period", "relay", "transport", "distro"}
	relayFields    = []string{"topic", "from"}
	dynamicsFields = []string{"model", "step", "params"}
	robotFields    = []string{"name", "cpu_scale", "command_topic", "clients"}
	clientFields   = []string{"name", "cmd", "api", "class", "period", "priority", "cpu_scale",
		"subscribes", "samples", "log", "env", "dir", "attach"}
)

// nodeBudget bounds the work of walking one document, aliases included, so
// that a small file of aliases to aliases cannot make Parse run for ever.
const nodeBudget = 1 << 20

var errBudget = errors.New("the document is too large or repeats aliases too often")

// decoder walks a yaml.Node tree into a Scenario, collecting every problem.
type decoder struct {
	file    string
	errs    Errors
	lines   map[string]int
	budget  int
	dropped int // problems not kept beyond maxErrors
}

// maxErrors bounds the problems Parse reports: past it, a file is not a
// scenario with mistakes but something else.
const maxErrors = 100

// decode is the parse step: YAML text to a Scenario with defaults filled
// in. It returns a nil Scenario only when there is no document to read.
func decode(data []byte, path string, abs bool) (s *Scenario, errs Errors, dropped int) {
	d := &decoder{file: path, lines: map[string]int{}, budget: nodeBudget}
	defer func() {
		// yaml.v3 and this walker should never panic; if one does, the
		// input is still only a bad file, never a crash.
		if r := recover(); r != nil {
			s = nil
			errs = append(d.errs, &FieldError{File: path, Msg: fmt.Sprintf("cannot read this file (internal error: %v); please report it", r)})
			dropped = d.dropped
		}
	}()

	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(0, "", "the file is empty; a scenario needs at least duration, dynamics and robots")
		} else {
			d.yamlError(err)
		}
		return nil, d.errs, d.dropped
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(extra.Line, "", "the file holds more than one YAML document (a line with ---); keep one scenario per file")
	} else if !errors.Is(err, io.EOF) {
		d.yamlError(err)
	}

	s = &Scenario{
		Mode:         DefaultMode,
		Quantum:      DefaultQuantum,
		CPU:          DefaultCPU,
		BasePriority: DefaultBasePriority,
		Actuation:    ActuationExact,
		Compensation: true,
		OnExit:       OnExitStop,
		Free:         Free{RTF: DefaultRTF},
		File:         path,
		lines:        d.lines,
	}
	s.Dir = filepath.Dir(path)
	if path == "" {
		s.Dir = "."
	}
	if abs {
		if a, err := filepath.Abs(s.Dir); err == nil {
			s.Dir = a
		}
	}
	base := filepath.Base(path)
	for _, ext := range []string{".yaml", ".yml"} {
		base = strings.TrimSuffix(base, ext)
	}
	if path == "" || base == "." || base == string(filepath.Separator) {
		base = "scenario"
	}
	s.Name = base

	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d.scenario(root, s)
	if errors.Is(d.budgetErr(), errBudget) {
		return nil, d.errs, d.dropped
	}
	s.Dynamics.resolveFiles(s.Dir)
	return s, d.errs, d.dropped
}

// modelFiles names, per model, the params that are file paths.
var modelFiles = map[string][]string{"mujoco": {"mjcf"}, "remote": {"socket"}}

// resolveFiles makes the model's file params that are relative paths
// relative to dir, the scenario's folder (as a client's dir is).
func (dy *Dynamics) resolveFiles(dir string) {
	for _, k := range modelFiles[dy.Model] {
		if p, ok := dy.Params[k].(string); ok && p != "" && !filepath.IsAbs(p) {
			dy.Params[k] = filepath.Join(dir, p)
		}
	}
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError turns a yaml.v3 syntax error into a FieldError on its line.
func (d *decoder) yamlError(err error) {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLine.FindStringIndex(msg); m != nil && m[0] == 0 {
		msg = strings.TrimPrefix(strings.TrimPrefix(msg[m[1]:], ":"), " ")
	}
	d.errorf(line, "", "YAML syntax: %s", msg)
}

func (d *decoder) errorf(line int, field, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		d.dropped++
		return
	}
	d.errs = append(d.errs, &FieldError{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) budgetErr() error {
	if d.budget < 0 {
		return errBudget
	}
	return nil
}

// spend takes one node from the budget; false (and one error) when it is
// exhausted.
func (d *decoder) spend(n *yaml.Node) bool {
	d.budget--
	if d.budget == -1 {
		d.errorf(n.Line, "", "%v; simplify it", errBudget)
	}
	return d.budget >= 0
}

// resolve follows aliases (bounded: yaml.v3 can build alias cycles).
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// kindName says what a node is, for "must be a mapping, not a list".
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping (key: value lines)"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return fmt.Sprintf("single value %q", n.Value)
	}
	return "alias"
}

// fields reads a mapping whose valid keys are known. It reports unknown
// and duplicate keys, follows << merge keys, records every key's line, and
// returns the values by key (keys with a null value are left out: an empty
// field means "use the default"). ok is false when n is not a mapping.
func (d *decoder) fields(n *yaml.Node, path string, known []string) (map[string]*yaml.Node, bool) {
	out := map[string]*yaml.Node{}
	n = resolve(n)
	if n == nil || isNull(n) {
		return out, true
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, path, "must be a mapping (key: value lines), not a %s", kindName(n))
		return out, false
	}
	seen := map[string]bool{}
	d.mergeInto(out, seen, n, path, known, 0)
	return out, true
}

func (d *decoder) mergeInto(out map[string]*yaml.Node, seen map[string]bool, n *yaml.Node, path string, known []string, depth int) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if !d.spend(n) {
			return
		}
		if k == nil || k.Kind != yaml.ScalarNode {
			line := n.Line
			if k != nil {
				line = k.Line
			}
			d.errorf(line, path, "has a key that is not a name; keys are words like %s", known[0])
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		key := k.Value
		field := join(path, key)
		if seen[key] && depth == 0 {
			d.errorf(k.Line, field, "appears twice in the same mapping; keep one")
			continue
		}
		if seen[key] {
			continue // a merged key never overrides one already there
		}
		seen[key] = true
		if depth == 0 && path == "" && strings.HasPrefix(key, "x-") {
			continue // an extension field: a place for anchors (&ctl) to merge
		}
		if !contains(known, key) {
			msg := fmt.Sprintf("unknown field %q", key)
			if s := closest(key, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			where := path
			if where == "" {
				where = "a scenario"
			}
			d.errorf(k.Line, field, "%s; valid fields in %s are: %s", msg, where, strings.Join(known, ", "))
			continue
		}
		if _, ok := d.lines[field]; !ok {
			d.lines[field] = k.Line
		}
		if rv := resolve(v); !isNull(rv) {
			out[key] = v
		}
	}
	for _, m := range merges {
		m = resolve(m)
		if m == nil || depth >= 8 {
			d.errorf(n.Line, path, "has a << merge that is nested too deeply or refers to itself")
			continue
		}
		var list []*yaml.Node
		switch m.Kind {
		case yaml.MappingNode:
			list = []*yaml.Node{m}
		case yaml.SequenceNode:
			list = m.Content
		}
		for _, e := range list {
			e = resolve(e)
			if e == nil || e.Kind != yaml.MappingNode {
				d.errorf(m.Line, path, "has a << merge of something that is not a mapping; merge an anchored mapping like <<: *defaults")
				continue
			}
			d.mergeInto(out, seen, e, path, known, depth+1)
		}
		if len(list) == 0 && m.Kind != yaml.MappingNode {
			d.errorf(m.Line, path, "has a << merge of something that is not a mapping; merge an anchored mapping like <<: *defaults")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closest returns the valid name nearest to s when it is a likely typo.
func closest(s string, valid []string) string {
	best, bestD := "", 3
	for _, v := range valid {
		if d := editDistance(strings.ToLower(s), v); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scalar returns the text of a single value, or reports that n is a list
// or a mapping.
func (d *decoder) scalar(n *yaml.Node, field, example string) (string, int, bool) {
	r := resolve(n)
	if r == nil {
		d.errorf(n.Line, field, "is an alias that refers to itself")
		return "", n.Line, false
	}
	if r.Kind != yaml.ScalarNode {
		d.errorf(r.Line, field, "must be a single value like %s, not a %s", example, kindName(r))
		return "", r.Line, false
	}
	return r.Value, r.Line, true
}

func (d *decoder) str(n *yaml.Node, field string, dst *string, example string) {
	if v, _, ok := d.scalar(n, field, example); ok {
		*dst = v
	}
}

func (d *decoder) integer(n *yaml.Node, field string, dst *int, example string) bool {
	v, line, ok := d.scalar(n, field, example)
	if !ok {
		return false
	}
	var x int
	if r := resolve(n); r.ShortTag() != "!!int" || r.Decode(&x) != nil {
		d.errorf(line, field, "%q is not a whole number; write it like %s", v, example)
		return false
	}
	*dst = x
	return true
}

func (d *decoder) float(n *yaml.Node, field string, dst *float64, example string) bool {
	v, line, ok := d.scalar(n, field, example)
	if !ok {
		return false
	}
	var x float64
	if err := resolve(n).Decode(&x); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		d.errorf(line, field, "%q is not a number; write it like %s", v, example)
		return false
	}
	*dst = x
	return true
}

func (d *decoder) boolean(n *yaml.Node, field string, dst *bool) {
	v, line, ok := d.scalar(n, field, "true")
	if !ok {
		return
	}
	var x bool
	if err := resolve(n).Decode(&x); err != nil {
		d.errorf(line, field, "%q is not true or false", v)
		return
	}
	*dst = x
}

func (d *decoder) duration(n *yaml.Node, field string, dst *Duration, example string) bool {
	v, line, ok := d.scalar(n, field, example)
	if !ok {
		return false
	}
	x, err := ParseDuration(v)
	if err != nil {
		d.errorf(line, field, "%v", err)
		return false
	}
	*dst = x
	return true
}

// enum reads a named value with parse (ParseMode, ...), whose errors list
// the valid names.
func enum[T any](d *decoder, n *yaml.Node, field string, dst *T, parse func(string) (T, error), example string) bool {
	v, line, ok := d.scalar(n, field, example)
	if !ok {
		return false
	}
	x, err := parse(v)
	if err != nil {
		d.errorf(line, field, "%v", err)
		return false
	}
	*dst = x
	return true
}

// list returns the items of a list, or reports that n is not one.
func (d *decoder) list(n *yaml.Node, field, example string) ([]*yaml.Node, bool) {
	r := resolve(n)
	if r == nil {
		d.errorf(n.Line, field, "is an alias that refers to itself")
		return nil, false
	}
	if r.Kind != yaml.SequenceNode {
		d.errorf(r.Line, field, "must be a list like %s, not a %s", example, kindName(r))
		return nil, false
	}
	return r.Content, true
}

func (d *decoder) scenario(root *yaml.Node, s *Scenario) {
	f, ok := d.fields(root, "", scenarioFields)
	if !ok {
		return
	}
	if n := f["user"]; n != nil {
		d.str(n, "user", &s.User, "alice")
	}
	if n := f["name"]; n != nil {
		d.str(n, "name", &s.Name, "pendulum")
	}
	if n := f["mode"]; n != nil {
		enum(d, n, "mode", &s.Mode, ParseMode, "consistent")
	}
	if n := f["duration"]; n != nil {
		d.duration(n, "duration", &s.Duration, "10s")
	}
	if n := f["quantum"]; n != nil {
		d.duration(n, "quantum", &s.Quantum, "1ms")
	}
	if n := f["cpu"]; n != nil {
		d.integer(n, "cpu", &s.CPU, "-1 (the last online CPU) or 3")
	}
	if n := f["base_priority"]; n != nil {
		d.integer(n, "base_priority", &s.BasePriority, "80")
	}
	if n := f["actuation"]; n != nil {
		enum(d, n, "actuation", &s.Actuation, ParseActuation, "exact")
	}
	if n := f["compensation"]; n != nil {
		d.boolean(n, "compensation", &s.Compensation)
	}
	if n := f["max_rtf"]; n != nil {
		d.float(n, "max_rtf", &s.MaxRTF, "1.0 (0: no ceiling)")
	}
	if n := f["stall_timeout"]; n != nil {
		d.duration(n, "stall_timeout", &s.StallTimeout, "10s")
	}
	if n := f["wall_limit"]; n != nil {
		d.duration(n, "wall_limit", &s.WallLimit, "5m")
	}
	if n := f["on_exit"]; n != nil {
		enum(d, n, "on_exit", &s.OnExit, ParseOnExit, "stop")
	}
	if n := f["free"]; n != nil {
		ff, _ := d.fields(n, "free", freeFields)
		if n := ff["rtf"]; n != nil {
			d.float(n, "free.rtf", &s.Free.RTF, "1.0 (0: as fast as possible)")
		}
	}
	if n := f["ros"]; n != nil {
		rf, _ := d.fields(n, "ros", rosFields)
		if n := rf["master"]; n != nil {
			d.str(n, "ros.master", &s.ROS.Master, "http://127.0.0.1:11311")
		}
		if n := rf["startup_timeout"]; n != nil {
			d.duration(n, "ros.startup_timeout", &s.ROS.StartupTimeout, "30s")
		}
		if n := rf["diagnostics_period"]; n != nil {
			d.duration(n, "ros.diagnostics_period", &s.ROS.DiagnosticsPeriod, "1s")
		}
		if n := rf["transport"]; n != nil {
			enum(d, n, "ros.transport", &s.ROS.Transport, ParseTransport, "ros2")
		}
		if n := rf["distro"]; n != nil {
			d.str(n, "ros.distro", &s.ROS.Distro, "jazzy")
		}
		if n := rf["relay"]; n != nil {
			items, _ := d.list(n, "ros.relay", "- {topic: /arm/plan, from: planner}")
			for i, it := range items {
				path := index("ros.relay", i)
				var r Relay
				if ff, ok := d.fields(it, path, relayFields); ok {
					if n := ff["topic"]; n != nil {
						d.str(n, path+".topic", &r.Topic, "/arm/plan")
					}
					if n := ff["from"]; n != nil {
						d.str(n, path+".from", &r.From, "planner")
					}
				}
				s.ROS.Relay = append(s.ROS.Relay, r)
			}
		}
	}
	if n := f["dynamics"]; n != nil {
		d.dynamics(n, &s.Dynamics)
	}
	if f["actuation"] == nil && s.Dynamics.Model == ModelSimulator {
		// A simulator makes whole steps only: a command acts from the
		// next one (Validate refuses exact with it).
		s.Actuation = ActuationHold
	}
	if n := f["robots"]; n != nil {
		items, _ := d.list(n, "robots", "- name: arm")
		for i, it := range items {
			if !d.spend(it) {
				return
			}
			s.Robots = append(s.Robots, d.robot(it, index("robots", i), s))
		}
	}
}

func (d *decoder) dynamics(n *yaml.Node, dy *Dynamics) {
	f, ok := d.fields(n, "dynamics", dynamicsFields)
	if !ok {
		return
	}
	if n := f["model"]; n != nil {
		d.str(n, "dynamics.model", &dy.Model, "pendulum")
	}
	if n := f["step"]; n != nil {
		d.duration(n, "dynamics.step", &dy.Step, "1ms")
	}
	if n := f["params"]; n != nil {
		r := resolve(n)
		if r == nil || r.Kind != yaml.MappingNode {
			line := n.Line
			what := "alias that refers to itself"
			if r != nil {
				line, what = r.Line, kindName(r)
			}
			d.errorf(line, "dynamics.params", "must be a mapping of the model's settings like {mass: 1.0}, not a %s", what)
			return
		}
		var m map[string]any
		if err := r.Decode(&m); err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
			d.errorf(r.Line, "dynamics.params", "cannot be read as the model's settings (%s); write it as name: value pairs", msg)
			return
		}
		dy.Params = m
	}
}

func (d *decoder) robot(n *yaml.Node, path string, s *Scenario) Robot {
	r := Robot{CPUScale: 1.0}
	if rn := resolve(n); rn != nil {
		d.lines[path] = rn.Line
	}
	f, ok := d.fields(n, path, robotFields)
	if !ok {
		return r
	}
	if n := f["name"]; n != nil {
		d.str(n, join(path, "name"), &r.Name, "arm")
	}
	if n := f["cpu_scale"]; n != nil {
		d.float(n, join(path, "cpu_scale"), &r.CPUScale, "1.0")
	}
	if n := f["command_topic"]; n != nil {
		d.str(n, join(path, "command_topic"), &r.CommandTopic, "/forward_position_controller/commands")
	}
	if n := f["clients"]; n != nil {
		items, _ := d.list(n, join(path, "clients"), "- name: pd")
		for i, it := range items {
			if !d.spend(it) {
				return r
			}
			r.Clients = append(r.Clients, d.client(it, index(join(path, "clients"), i), &r, s))
		}
	}
	return r
}

func (d *decoder) client(n *yaml.Node, path string, r *Robot, s *Scenario) Client {
	c := Client{API: APINative, CPUScale: r.CPUScale, Dir: s.Dir}
	if cn := resolve(n); cn != nil {
		d.lines[path] = cn.Line
	}
	f, ok := d.fields(n, path, clientFields)
	if !ok {
		return c
	}
	if n := f["name"]; n != nil {
		d.str(n, join(path, "name"), &c.Name, "pd")
	}
	if n := f["cmd"]; n != nil {
		field := join(path, "cmd")
		items, _ := d.list(n, field, "[tcs, client, pd]")
		c.Cmd = make([]string, 0, len(items))
		for i, it := range items {
			var a string
			if !d.spend(it) {
				return c
			}
			d.str(it, index(field, i), &a, `"--kp"`)
			c.Cmd = append(c.Cmd, a)
		}
	}
	if n := f["attach"]; n != nil {
		d.boolean(n, join(path, "attach"), &c.Attach)
	}
	if n := f["api"]; n != nil {
		enum(d, n, join(path, "api"), &c.API, ParseAPI, "native")
	}
	if n := f["class"]; n != nil {
		enum(d, n, join(path, "class"), &c.Class, ParseClass, "periodic")
	}
	if n := f["period"]; n != nil {
		d.duration(n, join(path, "period"), &c.Period, "1ms")
	}
	c.Priority = DefaultBestEffortPriority
	if c.Class == ClassPeriodic {
		c.Priority = DefaultPeriodicPriority
	}
	if n := f["priority"]; n != nil {
		d.integer(n, join(path, "priority"), &c.Priority, "10")
	}
	if n := f["cpu_scale"]; n != nil {
		d.float(n, join(path, "cpu_scale"), &c.CPUScale, "1.0")
	}
	if n := f["samples"]; n != nil {
		enum(d, n, join(path, "samples"), &c.Samples, ParseSamples, "at_activation")
	}
	if n := f["subscribes"]; n != nil {
		field := join(path, "subscribes")
		items, _ := d.list(n, field, "[1]")
		for i, it := range items {
			var ch int
			if !d.spend(it) {
				return c
			}
			if d.integer(it, index(field, i), &ch, "1") {
				c.Subscribes = append(c.Subscribes, ch)
			}
		}
	}
	if n := f["log"]; n != nil {
		d.str(n, join(path, "log"), &c.Log, "pd.log")
	}
	if n := f["env"]; n != nil {
		field := join(path, "env")
		ef, ok := d.envFields(n, field)
		if ok {
			c.Env = ef
		}
	}
	if n := f["dir"]; n != nil {
		var dir string
		d.str(n, join(path, "dir"), &dir, ".")
		if dir != "" && !filepath.IsAbs(dir) {
			dir = filepath.Join(s.Dir, dir)
		}
		if dir != "" {
			c.Dir = dir
		}
	}
	return c
}

// envFields reads env: a mapping of names to single values (numbers are
// taken as written).
func (d *decoder) envFields(n *yaml.Node, field string) (map[string]string, bool) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode {
		what := "alias that refers to itself"
		line := n.Line
		if r != nil {
			what, line = kindName(r), r.Line
		}
		d.errorf(line, field, "must be a mapping of variables like {ROS_DOMAIN_ID: 7}, not a %s", what)
		return nil, false
	}
	out := map[string]string{}
	for i := 0; i+1 < len(r.Content); i += 2 {
		if !d.spend(r) {
			return nil, false
		}
		k, v := resolve(r.Content[i]), resolve(r.Content[i+1])
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errorf(r.Line, field, "has a variable name that is not a single word")
			continue
		}
		kf := join(field, k.Value)
		d.lines[kf] = k.Line
		if _, dup := out[k.Value]; dup {
			d.errorf(k.Line, kf, "appears twice; keep one")
			continue
		}
		switch {
		case isNull(v):
			out[k.Value] = ""
		case v == nil || v.Kind != yaml.ScalarNode:
			d.errorf(k.Line, kf, "must be a single value; quote it if it contains : or #")
		default:
			out[k.Value] = v.Value
		}
	}
	return out, true
}
