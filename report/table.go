package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Table writes the closing table of a run: a header with the run's
// figures, one line per client, a total line and the overhead.
func Table(w io.Writer, s *Summary) error {
	var b strings.Builder
	name := s.Scenario
	if name == "" {
		name = "run"
	}
	ended := s.Ended
	if ended == "" {
		ended = "running"
	}
	fmt.Fprintf(&b, "%s: %s mode, quantum %s, %s\n", name, s.Mode, Span(s.QuantumS), ended)
	fmt.Fprintf(&b, "virtual %s in wall %s (rtf %s)  Δ max %s, p99 %s, final %s  leak %s  dispatches %d\n\n",
		secs(s.VirtualS), secs(s.WallS), ratio(s.RTF), Span(s.DriftMaxS), Span(s.DriftP99S), Span(s.DriftFinalS),
		Span(s.LeakS), s.Dispatches)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tROBOT\tCLASS\tPERIOD\tCPU\tPROGRESS\tACTIVATIONS\tMISSES\tLOST\tPERIOD ERR\tJITTER P99\tLATE MAX\tEXIT\tLOG")
	var cpu float64
	var acts, misses int64
	for i := range s.Clients {
		c := &s.Clients[i]
		cpu += c.CPUS
		acts += c.Activations
		misses += c.DeadlineMisses
		period, act, miss, lost, perr, jit, late := "-", "-", "-", "-", "-", "-", "-"
		if c.PeriodS > 0 {
			period = Span(c.PeriodS)
			act = strconv.FormatInt(c.Activations, 10)
			if c.Periods > 0 {
				act += " of " + strconv.FormatInt(c.Periods, 10)
			}
			lost = lostCauses(c.PeriodsLost)
			miss = strconv.FormatInt(c.DeadlineMisses, 10)
			if c.DeadlineMissesHost > 0 {
				miss += " (" + strconv.FormatInt(c.DeadlineMissesHost, 10) + " host)"
			}
			if c.ActivationsBegunLate > 0 {
				miss += " [" + strconv.FormatInt(c.ActivationsBegunLate, 10) + " begun late by tcs]"
			}
			perr = percent(c.PeriodError)
			jit = percent(c.PeriodJitterP99)
			late = Span(c.ActivationLateMaxS)
		}
		exit := "-"
		if c.ExitCode != nil {
			exit = strconv.Itoa(*c.ExitCode)
			if c.ExitedAtS != nil {
				exit += " at " + secs(*c.ExitedAtS)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			c.Name, dash(c.Robot), dash(c.Class), period, secs(c.CPUS), secs(c.ProgressS), act, miss, lost, perr, jit, late, exit, dash(c.Log))
	}
	fmt.Fprintf(tw, "total\t\t\t\t%s\t\t%d\t%d\t\t\t\t\t\t\n", secs(cpu), acts, misses)
	if err := tw.Flush(); err != nil {
		return err
	}
	o := s.Overhead
	split := ""
	if o.SimS > 0 {
		split = fmt.Sprintf(" (%s on the simulation CPU, other threads %s)", secs(o.SimS), secs(o.ThreadsS))
	}
	fmt.Fprintf(&b, "\noverhead: tcs %s%s, clients %s, dynamics %s: tcs %s of the total",
		secs(o.CoordinatorS), split, secs(o.ClientsS), secs(o.DynamicsS), percent(o.Fraction))
	if o.SimS > 0 {
		fmt.Fprintf(&b, " (%s of the simulation CPU's)", percent(o.SimFraction))
	}
	b.WriteString("\n")
	if s.LateTakebackMaxS > 0 || s.CoordinatorPerActivationUS > 0 || s.WallCostPollingS > 0 {
		fmt.Fprintf(&b, "timer takeback late p50 %s, p99 %s, max %s  tcs %.1f µs/activation  polling wall cost %s\n",
			Span(s.LateTakebackP50S), Span(s.LateTakebackP99S), Span(s.LateTakebackMaxS),
			s.CoordinatorPerActivationUS, secs(s.WallCostPollingS))
	}
	if s.HostOverrunS > 0 || s.HostStealS > 0 {
		fmt.Fprintf(&b, "host: %s of client CPU past slices not charged (a slice ended over 200 µs late: the host held a CPU), %s stolen\n",
			Span(s.HostOverrunS), Span(s.HostStealS))
	}
	// tabwriter pads empty trailing cells; drop the spaces.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// secs formats seconds with millisecond resolution: "10.000 s".
func secs(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64) + " s"
}

func ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*x, 'f', 3, 64) + "%"
}

// spanUnit picks the unit for a span of x seconds: s, ms, µs or ns.
func spanUnit(x float64) (scale float64, unit string) {
	a := math.Abs(x)
	switch {
	case a >= 1:
		return 1, "s"
	case a >= 1e-3:
		return 1e3, "ms"
	case a >= 1e-6:
		return 1e6, "µs"
	default:
		return 1e9, "ns"
	}
}

// digits formats v with three significant digits (at least 0 decimals).
func digits(dst []byte, v float64) []byte {
	a := math.Abs(v)
	prec := 2
	switch {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	return strconv.AppendFloat(dst, v, 'f', prec, 64)
}

// Span formats a span of x seconds in a readable unit with three
// significant digits: "1.02 ms", "12.0 µs", "168 s", "0 s".
func Span(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	if x == 0 {
		return "0 s"
	}
	scale, unit := spanUnit(x)
	return string(digits(nil, x*scale)) + " " + unit
}

// Status is what the live status line shows.
type Status struct {
	Virtual    int64   // virtual time reached, ns
	Goal       int64   // the scenario's duration, ns
	RTF        float64 // real-time factor so far
	Drift      int64   // Δ now (or its max so far), ns
	DriftP99   int64   // p99 of Δ so far, ns
	Misses     int64   // deadline misses, all clients
	Dispatches int64
	Paused     bool // the world waits for a play or step request
}

// StatusWidth is the width StatusLine pads its line to, so that printing
// "\r" + line overwrites the previous line completely.
const StatusWidth = 79

// StatusLine formats the live status line:
//
//	t=3.412/10.000 s  rtf 0.87  Δ 1.02 ms (p99 0.98)  misses 0  dispatches 12345
//
// padded with spaces to StatusWidth and without a newline: print it as
// "\r" + line, and a "\n" when the run ends.
func StatusLine(st Status) string {
	return string(AppendStatus(make([]byte, 0, 96), st))
}

// AppendStatus appends the status line (see StatusLine) to dst; it does
// not allocate when dst has room.
func AppendStatus(dst []byte, st Status) []byte {
	start := len(dst)
	dst = append(dst, "t="...)
	dst = strconv.AppendFloat(dst, Seconds(st.Virtual), 'f', 3, 64)
	dst = append(dst, '/')
	dst = strconv.AppendFloat(dst, Seconds(st.Goal), 'f', 3, 64)
	dst = append(dst, " s  rtf "...)
	if math.IsNaN(st.RTF) || math.IsInf(st.RTF, 0) {
		dst = append(dst, '-')
	} else {
		dst = strconv.AppendFloat(dst, st.RTF, 'f', 2, 64)
	}
	dst = append(dst, "  Δ "...)
	d := Seconds(st.Drift)
	scale, unit := spanUnit(d)
	if st.Drift == 0 {
		scale, unit = spanUnit(Seconds(st.DriftP99))
	}
	dst = digits(dst, d*scale)
	dst = append(dst, ' ')
	dst = append(dst, unit...)
	dst = append(dst, " (p99 "...)
	dst = digits(dst, Seconds(st.DriftP99)*scale)
	dst = append(dst, ")  misses "...)
	dst = strconv.AppendInt(dst, st.Misses, 10)
	dst = append(dst, "  dispatches "...)
	dst = strconv.AppendInt(dst, st.Dispatches, 10)
	if st.Paused {
		dst = append(dst, "  PAUSED"...)
	}
	for n := runeCount(dst[start:]); n < StatusWidth; n++ {
		dst = append(dst, ' ')
	}
	return dst
}

func runeCount(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// lostCauses is a client's lost periods for the table: "0", or each cause
// that lost any ("31 start, 2 exit").
func lostCauses(l *PeriodsLost) string {
	if l == nil || l.Total == 0 {
		return "0"
	}
	var parts []string
	for _, p := range []struct {
		n    int64
		name string
	}{{l.BeforeStart, "start"}, {l.AfterExit, "exit"}, {l.Overrun, "overrun"}, {l.Host, "host"}} {
		if p.n > 0 {
			parts = append(parts, strconv.FormatInt(p.n, 10)+" "+p.name)
		}
	}
	return strings.Join(parts, ", ")
}
