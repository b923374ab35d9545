package linux

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// CgroupMounts is where the cgroup hierarchies tcs uses are mounted: the
// unified (v2) hierarchy, whose cgroup.kill ends every process of a
// cgroup and its descendants, and the cpuset controller, either a v1
// hierarchy of its own or a controller of the v2 one. Empty means absent.
type CgroupMounts struct {
	V2       string // mount point of the cgroup2 file system
	CpusetV1 string // mount point of a v1 hierarchy with the cpuset controller
}

// ParseCgroupMounts reads /proc/self/mountinfo's text: the first cgroup2
// mount and the first v1 cgroup mount whose super options name cpuset.
// Malformed lines are skipped (the kernel writes them; a line it writes
// differently is no mount tcs can use).
func ParseCgroupMounts(mountinfo []byte) CgroupMounts {
	var m CgroupMounts
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		point := unescapeMount(f[4])
		switch g[0] {
		case "cgroup2":
			if m.V2 == "" {
				m.V2 = point
			}
		case "cgroup":
			if m.CpusetV1 == "" && len(g) >= 3 && hasOption(g[2], "cpuset") {
				m.CpusetV1 = point
			}
		}
	}
	return m
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// RunCgroupName is the name of the cgroups of the run of tcs process pid,
// in every hierarchy.
func RunCgroupName(pid int) string { return "tcs-" + strconv.Itoa(pid) }

// ParseRunCgroupName returns the pid of the tcs whose run cgroup is name,
// and whether name is one.
func ParseRunCgroupName(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "tcs-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != s {
		return 0, false
	}
	return pid, true
}
