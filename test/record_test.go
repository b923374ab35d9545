package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

// runDemo runs tcs demo with extra args into a new folder and returns the
// folder and the run's stdout (the closing table).
func runDemo(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append([]string{"demo", "--out", out, "--quiet", "--wait", "10m"}, args...)
	cmd := exec.CommandContext(ctx, tcsBin, argv...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/nonexistent", "HOME=" + t.TempDir(), "ROS_MASTER_URI=" + freeMasterURI(t)}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tcs %v: %v\n%s%s", argv, err, stdout.String(), stderr.String())
	}
	return out, stdout.String()
}

// channels reads a recording with the Go reader and indexes its channels by
// topic.
func channels(t *testing.T, path string) (*record.File, map[string]*record.ReadChannel) {
	t.Helper()
	f, err := record.Read(path, nil)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	m := map[string]*record.ReadChannel{}
	for _, c := range f.Channels {
		m[c.Topic] = c
	}
	return f, m
}

// The demo's recording: a complete MCAP whose counts and log times match
// the run exactly, with the summary in it; tcs report reproduces the
// run's closing table from it alone; Foxglove's reader decodes it.
func TestRecordingDemo(t *testing.T) {
	needRT(t)
	out, table := runDemo(t)
	s := readSummary(t, out)
	if s.Ended != report.EndCompleted {
		t.Fatalf("ended %q", s.Ended)
	}
	path := filepath.Join(out, "run.mcap")
	f, ch := channels(t, path)
	if !f.Complete || f.Profile != "ros2" {
		t.Fatalf("complete %v (%v), profile %q", f.Complete, f.TruncatedErr, f.Profile)
	}
	const step, duration = int64(1e6), int64(10e9)
	steps := duration/step + 1 // boundaries 0, 1 ms, ..., 10 s
	want := map[string]struct {
		typ string
		n   int64
	}{
		"/clock":            {"rosgraph_msgs/msg/Clock", steps},
		"/arm/joint_states": {"sensor_msgs/msg/JointState", steps},
		"/diagnostics":      {"diagnostic_msgs/msg/DiagnosticArray", 11},
		"/tcs/run_status":   {"tcs_msgs/msg/RunStatus", duration / 10e6},
	}
	for topic, w := range want {
		c := ch[topic]
		if c == nil {
			t.Errorf("no channel %s", topic)
			continue
		}
		if c.Type != w.typ || c.Messages != w.n {
			t.Errorf("%s: %s × %d, want %s × %d", topic, c.Type, c.Messages, w.typ, w.n)
		}
	}
	pd := client(t, s, "pd")
	if c := ch["/tcs/progress"]; c == nil || c.Messages != duration/10e6+pd.Activations+pd.DeadlineMisses {
		t.Errorf("/tcs/progress: %+v, want %d status + %d activations + %d misses", c, duration/10e6, pd.Activations, pd.DeadlineMisses)
	}
	cmdCh := ch["/arm/command"]
	if cmdCh == nil || cmdCh.Type != "std_msgs/msg/Float64" || cmdCh.Messages < pd.Activations-1 || cmdCh.Messages > pd.Activations+1 {
		t.Errorf("/arm/command: %+v, want one per activation (%d)", cmdCh, pd.Activations)
	}
	first, last := int64(-1), int64(0)
	for _, c := range f.Channels {
		if first < 0 || c.FirstLog < first {
			first = c.FirstLog
		}
		last = max(last, c.LastLog)
	}
	if c := ch["/clock"]; c == nil || c.FirstLog != 0 || c.LastLog != duration || first != 0 || last != duration {
		t.Errorf("log times %d..%d (clock %+v), want 0..%d", first, last, c, duration)
	}
	if s.Recording == nil || s.Recording.Dropped != 0 || s.Recording.Messages != f.Messages {
		t.Errorf("summary recording %+v, file has %d messages; want none dropped", s.Recording, f.Messages)
	}
	for _, tc := range s.Recording.Topics {
		if c := ch[tc.Topic]; c == nil || c.Messages != tc.Messages {
			t.Errorf("summary says %s × %d, the file has %+v", tc.Topic, tc.Messages, c)
		}
	}
	js, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !bytes.Equal(f.Attachments["summary.json"], js) {
		t.Errorf("the recording's summary.json differs from the run's")
	}

	// tcs report: the same table, from the recording alone.
	plots := t.TempDir()
	rep := exec.Command(tcsBin, "report", path, "--plots", plots)
	var rout, rerr bytes.Buffer
	rep.Stdout, rep.Stderr = &rout, &rerr
	if err := rep.Run(); err != nil {
		t.Fatalf("tcs report: %v\n%s", err, rerr.String())
	}
	runTable, _, _ := strings.Cut(table, "summary: ")
	repTable, _, _ := strings.Cut(rout.String(), "plots: ")
	if runTable != repTable {
		t.Errorf("tcs report's table differs from the run's:\n--- run\n%s\n--- report\n%s", runTable, repTable)
	}
	for _, name := range []string{"drift", "progress", "misses", "overhead"} {
		for _, ext := range []string{".png", ".svg"} {
			if fi, err := os.Stat(filepath.Join(plots, name+ext)); err != nil || fi.Size() < 1000 {
				t.Errorf("plot %s%s: %v", name, ext, err)
			}
		}
	}

	// Foxglove's own reader.
	fx := foxglove(t, path)
	if fx == nil {
		return
	}
	if fx.Profile != "ros2" || int64(fx.Messages) != f.Messages {
		t.Errorf("foxglove: profile %q, %d messages; want ros2, %d", fx.Profile, fx.Messages, f.Messages)
	}
	for _, c := range fx.Channels {
		g := ch[c.Topic]
		if g == nil || c.Schema != g.Type || int64(c.Count) != g.Messages || c.MessageEncoding != "cdr" || c.Trailing != 0 {
			t.Errorf("foxglove: %+v, Go reader: %+v", c, g)
		}
	}
	if len(fx.Channels) != len(f.Channels) {
		t.Errorf("foxglove: %d channels, Go reader %d", len(fx.Channels), len(f.Channels))
	}
	if len(fx.Attachments) != 1 || fx.Attachments[0].Name != "summary.json" || fx.Attachments[0].Text != string(js) {
		t.Errorf("foxglove: attachments %+v", fx.Attachments)
	}
}

// --no-record records nothing.
func TestNoRecord(t *testing.T) {
	needRT(t)
	out, _ := runDemo(t, "--duration", "1s", "--no-record")
	if _, err := os.Stat(filepath.Join(out, "run.mcap")); !os.IsNotExist(err) {
		t.Errorf("run.mcap with --no-record: %v", err)
	}
	if s := readSummary(t, out); s.Recording != nil {
		t.Errorf("summary has a recording: %+v", s.Recording)
	}
}

// startDemo starts a long demo (60 s virtual) and waits until the run's
// virtual time began (the recording has more than its first chunk).
func startDemo(t *testing.T) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(tcsBin, "demo", "--out", out, "--quiet", "--wait", "10m", "--duration", "60s")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/nonexistent", "HOME=" + t.TempDir(), "ROS_MASTER_URI=" + freeMasterURI(t)}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(filepath.Join(out, "run.mcap")); err == nil && fi.Size() > 4*record.DefaultChunkSize {
			return cmd, out, &buf
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the demo's recording did not grow:\n%s", buf.String())
	return nil, "", nil
}

// SIGINT mid-run: the recording is closed, complete and readable by both
// readers, with the summary (ended: interrupted) in it.
func TestRecordingSIGINT(t *testing.T) {
	needRT(t)
	cmd, out, buf := startDemo(t)
	interrupt(t, cmd, buf)
	s := readSummary(t, out)
	if s.Ended != report.EndInterrupted || s.VirtualS >= 60 {
		t.Fatalf("ended %q at %g s", s.Ended, s.VirtualS)
	}
	path := filepath.Join(out, "run.mcap")
	f, ch := channels(t, path)
	if !f.Complete {
		t.Fatalf("recording not complete after SIGINT: %v", f.TruncatedErr)
	}
	var sum report.Summary
	if err := json.Unmarshal(f.Attachments["summary.json"], &sum); err != nil || sum.Ended != report.EndInterrupted {
		t.Errorf("summary.json in the recording: %v, ended %q", err, sum.Ended)
	}
	// /clock goes out at world-step boundaries (1 ms); an interrupt may
	// leave the world between two (a partial step to apply a command).
	last := int64(s.VirtualS*1e9+0.5) / 1e6 * 1e6
	if c := ch["/clock"]; c == nil || c.FirstLog != 0 || c.LastLog != last || c.Messages != last/1e6+1 {
		t.Errorf("/clock %+v, want %d messages from 0 to %d", c, last/1e6+1, last)
	}
	t.Logf("interrupted at %.3f s virtual: %d messages, %d dropped", s.VirtualS, f.Messages, s.Recording.Dropped)
	if fx := foxglove(t, path); fx != nil && int64(fx.Messages) != f.Messages {
		t.Errorf("foxglove read %d messages, Go %d", fx.Messages, f.Messages)
	}
}

// SIGKILL mid-run: what was written is a readable prefix (whole chunks),
// from virtual time 0 on, and tcs report rebuilds a table from it.
func TestRecordingSIGKILL(t *testing.T) {
	needRT(t)
	cmd, out, _ := startDemo(t)
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	path := filepath.Join(out, "run.mcap")
	f, ch := channels(t, path)
	if f.Complete {
		t.Fatalf("a killed run's recording is complete?")
	}
	c := ch["/clock"]
	if c == nil || c.FirstLog != 0 || c.Messages < 100 || c.LastLog != (c.Messages-1)*1e6 {
		t.Fatalf("/clock in the prefix: %+v", c)
	}
	t.Logf("killed: a prefix of %d messages, /clock up to %.3f s (%v)", f.Messages, float64(c.LastLog)/1e9, f.TruncatedErr)
	rep := exec.Command(tcsBin, "report", out, "--no-plots")
	b, err := rep.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "cut short") || !strings.Contains(string(b), "pd ") {
		t.Errorf("tcs report on the prefix: %v\n%s", err, b)
	}
}

// fxReport is what test/foxglove/read.js prints.
type fxReport struct {
	Profile  string `json:"profile"`
	Messages int    `json:"messages"`
	Channels []struct {
		Topic           string `json:"topic"`
		Schema          string `json:"schema"`
		MessageEncoding string `json:"message_encoding"`
		Count           int    `json:"count"`
		FirstLogNs      string `json:"first_log_ns"`
		LastLogNs       string `json:"last_log_ns"`
		Trailing        int    `json:"trailing"`
	} `json:"channels"`
	Attachments []struct {
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"attachments"`
}

// foxglove reads a recording with test/foxglove/read.js (Foxglove's
// @mcap/core and @foxglove/rosmsg2-serialization), installing the pinned
// packages with npm ci when needed; nil (and the test skipped) without
// node or npm.
func foxglove(t *testing.T, path string) *fxReport {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (apt-get install -y nodejs npm): Foxglove's reader not run")
	}
	dir, _ := filepath.Abs("foxglove")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@mcap", "core")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is not installed (apt-get install -y nodejs npm): Foxglove's reader not run")
		}
		ci := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		ci.Dir = dir
		if b, err := ci.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, b)
		}
	}
	cmd := exec.Command(node, filepath.Join(dir, "read.js"), path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Foxglove's reader refused %s: %v\n%s", path, err, stderr.String())
	}
	var r fxReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("read.js output: %v", err)
	}
	return &r
}
