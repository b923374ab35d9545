package linux

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Stat is the part of a /proc/PID/stat (or /proc/PID/task/TID/stat) line
// that tcs uses.
type Stat struct {
	Pid        int
	Comm       string
	State      byte // R, S, D, T, t, Z, X, I, ...
	PPid       int
	PGrp       int
	Utime      uint64 // clock ticks
	Stime      uint64 // clock ticks
	NumThreads int
	Processor  int // CPU last run on
	RTPriority int
	Policy     int
}

// ParseStat parses one /proc/PID/stat line. The command name may hold spaces
// and parentheses: it runs from the first '(' to the last ')'.
func ParseStat(line []byte) (Stat, error) {
	var st Stat
	open := bytes.IndexByte(line, '(')
	closing := bytes.LastIndexByte(line, ')')
	if open < 1 || closing < open {
		return st, fmt.Errorf("parse stat line %q: no (comm)", clip(line))
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line[:open])))
	if err != nil {
		return st, fmt.Errorf("parse stat line %q: pid: %w", clip(line), err)
	}
	st.Pid = pid
	st.Comm = string(line[open+1 : closing])
	fields := bytes.Fields(line[closing+1:])
	// fields[0] is field 3 of proc(5) (state); field k is fields[k-3].
	const need = 41 - 3 + 1
	if len(fields) < need {
		return st, fmt.Errorf("parse stat line %q: %d fields after comm, want >= %d", clip(line), len(fields), need)
	}
	if len(fields[0]) != 1 {
		return st, fmt.Errorf("parse stat line %q: state %q", clip(line), fields[0])
	}
	st.State = fields[0][0]
	ints := []struct {
		field int
		dst   *int
	}{{4, &st.PPid}, {5, &st.PGrp}, {20, &st.NumThreads}, {39, &st.Processor}, {40, &st.RTPriority}, {41, &st.Policy}}
	for _, f := range ints {
		v, err := strconv.Atoi(string(fields[f.field-3]))
		if err != nil {
			return st, fmt.Errorf("parse stat line %q: field %d: %w", clip(line), f.field, err)
		}
		*f.dst = v
	}
	for _, f := range []struct {
		field int
		dst   *uint64
	}{{14, &st.Utime}, {15, &st.Stime}} {
		v, err := strconv.ParseUint(string(fields[f.field-3]), 10, 64)
		if err != nil {
			return st, fmt.Errorf("parse stat line %q: field %d: %w", clip(line), f.field, err)
		}
		*f.dst = v
	}
	return st, nil
}

// StatState returns the state letter of a /proc/PID/stat line (the field
// after the command, which may itself hold parentheses), or 0 when the line
// is not one. Unlike ParseStat it does not allocate.
func StatState(line []byte) byte {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 || i+2 >= len(line) || line[i+1] != ' ' {
		return 0
	}
	return line[i+2]
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// ReadStat reads and parses /proc/PID/stat, or /proc/PID/task/TID/stat when
// tid > 0.
func ReadStat(pid, tid int) (Stat, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	if tid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/stat"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseStat(b)
}

// Tasks lists the thread ids of process pid (/proc/PID/task), sorted.
func Tasks(pid int) ([]int, error) {
	return ids("/proc/"+strconv.Itoa(pid)+"/task", "list threads")
}

// Pids lists the ids of the processes in /proc, sorted.
func Pids() ([]int, error) { return ids("/proc", "list processes") }

// ids lists the numeric names in folder path, sorted.
func ids(path, what string) ([]int, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	sort.Ints(tids)
	return tids, nil
}

// Children lists the processes thread tid of process pid forked that are
// still its children (/proc/PID/task/TID/children).
func Children(pid, tid int) ([]int, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/children"
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var kids []int
	for _, f := range bytes.Fields(b) {
		if k, err := strconv.Atoi(string(f)); err == nil {
			kids = append(kids, k)
		}
	}
	return kids, nil
}

// ErrGone is returned by TaskDir methods when the process no longer exists.
var ErrGone = errors.New("process gone")

// ThreadRuntime returns the CPU time (ns) thread tid of process pid has
// used, from /proc/PID/task/TID/schedstat (the first field). It works for
// threads of other processes, whose per-thread CPU clocks clock_gettime
// refuses.
func ThreadRuntime(pid, tid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0, fmt.Errorf("read schedstat of %d/%d: %w", pid, tid, err)
	}
	return ParseSchedstat(b)
}

// ThreadComm returns the name of thread tid of process pid
// (/proc/PID/task/TID/comm), or "" if it cannot be read.
func ThreadComm(pid, tid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ParseSchedstat parses a /proc/.../schedstat line ("runtime waittime
// slices") and returns the runtime in ns. It does not allocate unless the
// line is malformed.
func ParseSchedstat(b []byte) (int64, error) {
	var v int64
	k := 0
	for ; k < len(b) && k < 19 && b[k] >= '0' && b[k] <= '9'; k++ {
		v = v*10 + int64(b[k]-'0')
	}
	if k == 0 || (k < len(b) && b[k] != ' ' && b[k] != '\n') {
		return 0, fmt.Errorf("schedstat %q: no runtime field", clip(b))
	}
	return v, nil
}

// userHZ is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const userHZ = 100

// ReadSteal returns the time (ns) the hypervisor has stolen from cpu since
// boot, from /proc/stat (the steal column, in 10 ms units: coarse, but the
// only interface the kernel offers).
func ReadSteal(cpu int) (int64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	return ParseSteal(b, cpu)
}

// ParseSteal finds cpu's line in the text of /proc/stat and returns its
// steal time in ns.
func ParseSteal(stat []byte, cpu int) (int64, error) {
	name := "cpu" + strconv.Itoa(cpu)
	for _, line := range strings.Split(string(stat), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != name {
			continue
		}
		// cpuN user nice system idle iowait irq softirq steal ...
		if len(f) < 9 {
			return 0, fmt.Errorf("/proc/stat %s: no steal column", name)
		}
		v, err := strconv.ParseInt(f[8], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat %s steal %q: %w", name, f[8], err)
		}
		return v * (1_000_000_000 / userHZ), nil
	}
	return 0, fmt.Errorf("/proc/stat: no line for %s", name)
}

// Status is the part of /proc/PID/status that tcs uses: what a soak
// watches of a process.
type Status struct {
	RSSKB     int64 // VmRSS: resident set size, kB
	RSSAnonKB int64 // RssAnon: its anonymous part (heap, stacks), kB
	Threads   int64 // Threads
}

// ParseStatus parses the text of a /proc/PID/status file. VmRSS and
// Threads must be there (a zombie has no VmRSS: an error); RssAnon (Linux
// ≥ 4.5) is 0 when it is not.
func ParseStatus(b []byte) (Status, error) {
	var st Status
	var haveRSS, haveThreads bool
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst, haveRSS = &st.RSSKB, true
		case "RssAnon":
			dst = &st.RSSAnonKB
		case "Threads":
			dst, haveThreads = &st.Threads, true
		default:
			continue
		}
		f := bytes.Fields(val)
		if len(f) == 0 || len(f) > 2 || len(f) == 2 && string(f[1]) != "kB" {
			return Status{}, fmt.Errorf("parse status: %s %q", key, clip(val))
		}
		v, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || v < 0 {
			return Status{}, fmt.Errorf("parse status: %s %q", key, clip(val))
		}
		*dst = v
	}
	if !haveRSS || !haveThreads {
		return Status{}, errors.New("parse status: no VmRSS or Threads line (a zombie, or not a status file)")
	}
	return st, nil
}

// ReadStatus reads and parses /proc/PID/status.
func ReadStatus(pid int) (Status, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	b, err := os.ReadFile(path)
	if err != nil {
		return Status{}, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := ParseStatus(b)
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// FdKinds counts process pid's open file descriptors by what they are:
// socket, pipe, pidfd, anon:<kind> (eventfd, eventpoll, timerfd, ...),
// proc (a /proc file), deleted (an unlinked file), file (any other path).
// A descriptor closed while it is read is left out.
func FdKinds(pid int) (map[string]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open fds: %w", err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("open fds: read %s: %w", dir, err)
	}
	out := map[string]int{}
	for _, n := range names {
		target, err := os.Readlink(dir + "/" + n)
		if err != nil {
			continue
		}
		out[fdKind(target)]++
	}
	return out, nil
}

// fdKind is what FdKinds calls a descriptor whose link reads target.
func fdKind(target string) string {
	switch {
	case strings.HasPrefix(target, "socket:"):
		return "socket"
	case strings.HasPrefix(target, "pipe:"):
		return "pipe"
	case target == "anon_inode:[pidfd]":
		return "pidfd"
	case strings.HasPrefix(target, "anon_inode:"):
		return "anon:" + strings.Trim(strings.TrimPrefix(target, "anon_inode:"), "[]")
	case strings.HasPrefix(target, "/proc/"):
		return "proc"
	case strings.HasSuffix(target, " (deleted)"):
		return "deleted"
	}
	return "file"
}

// OpenFds counts the open file descriptors of process pid (the entries of
// /proc/PID/fd).
func OpenFds(pid int) (int, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/fd"
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("count open fds: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("count open fds: read %s: %w", path, err)
	}
	return len(names), nil
}

// GoProgram reports whether process pid runs a Go program: its executable
// (/proc/PID/exe) carries the Go toolchain's build information. It reads
// the executable's headers and a section or two; false when it cannot.
func GoProgram(pid int) bool {
	_, err := buildinfo.ReadFile("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil
}
