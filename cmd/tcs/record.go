package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/ros1"
	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/msgs/cdr"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

// recordingPath is DIR/run.mcap for a folder, else the file itself.
func recordingPath(arg string) string {
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return filepath.Join(arg, driver.RecordFile)
	}
	return arg
}

// cmdReport is tcs report DIR|FILE: the closing table and the plots,
// from the recording alone.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	plots := fs.String("plots", "", "folder for the plots (default: the recording's folder)")
	noPlots := fs.Bool("no-plots", false, "only the table")
	file, rest := splitFile(args)
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	if file == "" {
		fmt.Fprintln(stderr, "tcs report: name a run's output folder or its run.mcap")
		return 2
	}
	path := recordingPath(file)
	run, err := record.ReadRun(path)
	if err != nil {
		fmt.Fprintf(stderr, "tcs report: %v\n", err)
		return 1
	}
	fmt.Fprint(stderr, run.Describe())
	if err := report.Table(stdout, run.Summary); err != nil {
		fmt.Fprintf(stderr, "tcs report: %v\n", err)
		return 1
	}
	if *noPlots {
		return 0
	}
	dir := *plots
	if dir == "" {
		dir = filepath.Dir(path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "tcs report: %v\n", err)
		return 1
	}
	files, err := run.Plots(dir)
	if err != nil {
		fmt.Fprintf(stderr, "tcs report: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "plots: %d files in %s\n", len(files), dir)
	return 0
}

// playChannel is a recorded channel as tcs play republishes it.
type playChannel struct {
	pub  *ros1.Publisher
	conv *record.Converter
}

// cmdPlay is tcs play FILE: the recording's messages republished over ROS
// 1 at their log times (and the recorded /clock), like rosbag play --clock.
func cmdPlay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs play", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rate := fs.Float64("rate", 1, "playback speed (virtual seconds per wall second)")
	master := fs.String("master", "", "ROS master URI (default $ROS_MASTER_URI; one is started when none answers)")
	wait := fs.Duration("wait", 500*time.Millisecond, "wait this long for subscribers before playing")
	file, rest := splitFile(args)
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	if file == "" || *rate <= 0 {
		fmt.Fprintln(stderr, "tcs play: name a recording (DIR or DIR/run.mcap); --rate must be positive")
		return 2
	}
	path := recordingPath(file)
	log := zerolog.New(stderr).Level(zerolog.WarnLevel)
	uri := *master
	if uri == "" {
		uri = os.Getenv("ROS_MASTER_URI")
	}
	m, _, err := ros1.EnsureMaster(uri, time.Second, log)
	if err != nil {
		fmt.Fprintf(stderr, "tcs play: %v\n", err)
		return 1
	}
	if m != nil {
		defer m.Close()
		uri = m.URI()
	}
	if uri == "" {
		uri = ros1.DefaultMasterURI
	}
	node, err := ros1.NewNode(ros1.NodeConf{Name: "/tcs_play", MasterURI: uri, Log: log})
	if err != nil {
		fmt.Fprintf(stderr, "tcs play: %v\n", err)
		return 1
	}
	defer node.Close()
	if err := node.SetParamBool("/use_sim_time", true); err != nil {
		fmt.Fprintf(stderr, "tcs play: %v\n", err)
		return 1
	}
	// First pass: the channels, advertised before any message goes out.
	f, err := record.Read(path, nil)
	if err != nil {
		fmt.Fprintf(stderr, "tcs play: %v\n", err)
		return 1
	}
	chans := map[uint16]*playChannel{}
	for _, c := range f.Channels {
		t := msgs.Type{Name: c.Metadata[record.MetaROS1Type], MD5: c.Metadata[record.MetaROS1MD5], Definition: c.Metadata[record.MetaROS1Definition]}
		if t.Name == "" || t.MD5 == "" {
			fmt.Fprintf(stderr, "tcs play: %s (%s): no ROS 1 type recorded; skipped\n", c.Topic, c.Type)
			continue
		}
		conv, err := record.NewConverter(t.Name, t.Definition)
		if err != nil {
			fmt.Fprintf(stderr, "tcs play: %s: %v; skipped\n", c.Topic, err)
			continue
		}
		pub, err := node.Advertise(c.Topic, t, c.Topic == record.TopicClock)
		if err != nil {
			fmt.Fprintf(stderr, "tcs play: %v\n", err)
			return 1
		}
		chans[c.ID] = &playChannel{pub: pub, conv: conv}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	select {
	case <-ctx.Done():
		return 1
	case <-time.After(*wait):
	}
	fmt.Fprintf(stderr, "tcs play: %s: %d messages on %d topics, master %s, rate %g\n", path, f.Messages, len(chans), uri, *rate)
	var (
		rd      cdr.Reader
		body    []byte
		sent    int64
		bad     int64
		start   = time.Now()
		first   = int64(-1)
		byTopic = map[string]int64{}
	)
	_, err = record.Read(path, func(c *record.ReadChannel, msg *mcap.Message) error {
		pc := chans[c.ID]
		if pc == nil {
			return nil
		}
		lt := int64(msg.LogTime)
		if first < 0 {
			first = lt
		}
		if d := time.Until(start.Add(time.Duration(float64(lt-first) / *rate))); d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		var err error
		body, err = pc.conv.ToROS1(body[:0], msg.Data, &rd)
		if err != nil {
			bad++
			return nil
		}
		frame, off := msgs.BeginFrame(nil)
		frame = msgs.EndFrame(append(frame, body...), off)
		pc.pub.Write(frame)
		sent++
		byTopic[c.Topic]++
		return nil
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "tcs play: %v\n", err)
		return 1
	}
	topics := make([]string, 0, len(byTopic))
	for t := range byTopic {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		fmt.Fprintf(stdout, "%-28s %d\n", t, byTopic[t])
	}
	fmt.Fprintf(stdout, "played %d messages (%d not convertible) in %.1f s\n", sent, bad, time.Since(start).Seconds())
	if ctx.Err() != nil {
		return 1
	}
	return 0
}
