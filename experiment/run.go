package experiment

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/bridge/ros1"
	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/report"
)

// lockWait is how long a run waits for another run holding the
// simulation CPU.
const lockWait = 30 * time.Minute

// runScenario runs the scenario held in yaml into dir (summary.json,
// logs/, tcs.log, run.mcap), showing label's progress on progress. tr,
// when not nil, receives the run's per-activation and per-slice records.
func runScenario(yaml, dir, label string, progress io.Writer, stop <-chan struct{}, tr *driver.Trace) (*report.Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	file := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	sc, err := config.Load(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if sc.HasROS() && sc.ROS.Master == "" && os.Getenv("ROS_MASTER_URI") == "" {
		// A master of its own on a free port: two experiments (or a test
		// and an experiment) on one machine must not share 11311, where
		// one's embedded master would end under the other's nodes.
		if sc.ROS.Master, err = master.FreeURI(); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	logFile, err := os.Create(filepath.Join(dir, "tcs.log"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	defer logFile.Close()
	logger := zerolog.New(logFile).With().Timestamp().Logger()
	bar := newBar(progress, label)
	defer bar.done()
	rc := driver.RunConf{Scenario: sc, OutDir: dir, Stop: stop, Log: &logger, LockTimeout: lockWait,
		Status: bar, StatusEvery: bar.every(), Trace: tr}
	world, err := dynamics.New(sc.Dynamics.Model, len(sc.Robots), sc.Dynamics.Step.Nanoseconds(), sc.Dynamics.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: dynamics: %w", label, err)
	}
	defer dynamics.Close(world)
	rc.World = world
	if sc.HasROS() {
		b, err := ros1.StartBridge(sc, world, logger.With().Str("part", "ros1").Logger())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		defer func() {
			if err := b.Close(); err != nil {
				logger.Warn().Err(err).Msg("close the ROS bridge")
			}
		}()
		rc.Bridge = b
	}
	sum, err := driver.Run(rc)
	if err != nil {
		return sum, fmt.Errorf("%s: %w", label, err)
	}
	if sum.Ended != report.EndCompleted {
		return sum, fmt.Errorf("%s: the run ended early: %s (see %s)", label, sum.Ended, dir)
	}
	return sum, nil
}

// bar is a progress bar for one run, fed the runner's status lines
// ("t=1.234/20.000 s ..."): redrawn in place on a terminal, a plain line
// every few seconds otherwise.
type bar struct {
	w     io.Writer
	label string
	tty   bool
	mu    sync.Mutex
	last  string
}

func newBar(w io.Writer, label string) *bar {
	b := &bar{w: w, label: label}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

func (b *bar) every() time.Duration {
	if b.tty {
		return 250 * time.Millisecond
	}
	return 5 * time.Second
}

// Write takes status lines from the runner.
func (b *bar) Write(p []byte) (int, error) {
	line := strings.TrimSpace(strings.TrimLeft(string(p), "\r"))
	if b.w == nil || !strings.HasPrefix(line, "t=") {
		return len(p), nil
	}
	cur, goal := 0.0, 0.0
	if f := strings.Fields(line[2:]); len(f) > 0 {
		if a, g, ok := strings.Cut(f[0], "/"); ok {
			cur, _ = strconv.ParseFloat(a, 64)
			goal, _ = strconv.ParseFloat(g, 64)
		}
	}
	frac := 0.0
	if goal > 0 {
		frac = min(1, max(0, cur/goal))
	}
	const width = 30
	n := int(frac * width)
	s := fmt.Sprintf("%s [%s%s] %3.0f%%  %s", b.label, strings.Repeat("#", n), strings.Repeat("-", width-n), 100*frac, line)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last = s
	if b.tty {
		fmt.Fprintf(b.w, "\r\033[K%s", s)
	} else {
		fmt.Fprintln(b.w, s)
	}
	return len(p), nil
}

func (b *bar) done() {
	if b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty {
		fmt.Fprint(b.w, "\r\033[K")
	}
	fmt.Fprintf(b.w, "%s done\n", b.label)
}

// readSamples reads the "distance T D" lines the prey node writes to its
// log.
func readSamples(path string) (t, d []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read distance samples: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 || fs[0] != "distance" {
			continue
		}
		a, errA := strconv.ParseFloat(fs[1], 64)
		b, errB := strconv.ParseFloat(fs[2], 64)
		// Ticks before the first clock (ROS time 0) read t < 0: not samples.
		if errA == nil && errB == nil && a >= 0 {
			t = append(t, a)
			d = append(d, b)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read distance samples from %s: %w", path, err)
	}
	return t, d, nil
}
