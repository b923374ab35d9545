package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// RunCgroups are the cgroups one run puts its clients in: a cgroup of the
// unified (v2) hierarchy, whose cgroup.kill ends every process in it,
// however far it forked or whichever session it made, and a cpuset cgroup
// whose only CPU is the simulation CPU, so that a client cannot move
// itself elsewhere with sched_setaffinity. A process's children are born
// in its cgroups. Either may be missing (Notes says which and why); the
// run then relies on process groups and on tcs setting affinities.
type RunCgroups struct {
	kill   string // v2 cgroup directory; "" when none
	cpuset string // v1 cpuset cgroup directory; "" when none
	notes  []string
}

// cgroupDrain bounds how long Remove waits for killed processes to leave
// their cgroups.
const cgroupDrain = 2 * time.Second

// NewRunCgroups creates the cgroups of the run of tcs process pid (named
// RunCgroupName(pid)) with cpu as the cpuset's CPU, after removing those
// of earlier runs whose tcs is gone (killing what was left in them). It
// does not fail: what it could not set up is in Notes, which the caller
// logs at start.
func NewRunCgroups(pid, cpu int) *RunCgroups {
	c := &RunCgroups{}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		c.notef("no cgroups (%v): descendants of a client that leave its process group outlive the run, and a client may move itself off the simulation CPU", err)
		return c
	}
	mounts := ParseCgroupMounts(b)
	c.removeStale(mounts)
	name := RunCgroupName(pid)
	if mounts.V2 == "" {
		c.notef("no cgroup v2 hierarchy mounted: descendants of a client that leave its process group outlive the run")
	} else if dir, err := makeCgroup(mounts.V2, name); err != nil {
		c.notef("cgroup v2 at %s not writable (%v): descendants of a client that leave its process group outlive the run", mounts.V2, err)
	} else {
		c.kill = dir
		if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
			c.notef("%s has no cgroup.kill (kernel before 5.14): its processes are killed one by one at the end", dir)
		}
	}
	switch {
	case mounts.CpusetV1 != "":
		dir, err := makeCpuset(mounts.CpusetV1, name, cpu)
		if err != nil {
			c.notef("cpuset cgroup under %s not usable (%v): a client may move itself off the simulation CPU", mounts.CpusetV1, err)
		} else {
			c.cpuset = dir
		}
	case mounts.V2 != "":
		c.notef("cpuset: only cgroup v2's is available, which holds a whole process (tcs's trampoline included) on one CPU; not used: a client may move itself off the simulation CPU")
	default:
		c.notef("no cpuset controller mounted: a client may move itself off the simulation CPU")
	}
	return c
}

func (c *RunCgroups) notef(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// Notes says what could not be set up, and what the run loses by it.
func (c *RunCgroups) Notes() []string { return c.notes }

// KillDir and CpusetDir are the cgroup directories ("" when none).
func (c *RunCgroups) KillDir() string   { return c.kill }
func (c *RunCgroups) CpusetDir() string { return c.cpuset }

// AddProcess moves every thread of process pid into the run's v2 cgroup.
func (c *RunCgroups) AddProcess(pid int) error {
	if c == nil || c.kill == "" {
		return nil
	}
	return writeCgroupFile(filepath.Join(c.kill, "cgroup.procs"), strconv.Itoa(pid))
}

// AddThread moves thread tid (alone) into the run's cpuset: the kernel
// sets its affinity to the simulation CPU, and threads and processes it
// creates are born there.
func (c *RunCgroups) AddThread(tid int) error {
	if c == nil || c.cpuset == "" {
		return nil
	}
	return writeCgroupFile(filepath.Join(c.cpuset, "tasks"), strconv.Itoa(tid))
}

// Kill sends SIGKILL to every process left in the run's cgroups and
// returns how many there were.
func (c *RunCgroups) Kill() (int, error) {
	if c == nil {
		return 0, nil
	}
	var n int
	var errs []error
	for _, dir := range []string{c.kill, c.cpuset} {
		if dir == "" {
			continue
		}
		k, err := killCgroup(dir)
		n = max(n, k)
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// Remove waits (a bounded time) for the run's cgroups to be empty and
// removes them.
func (c *RunCgroups) Remove() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, dir := range []string{c.kill, c.cpuset} {
		if dir != "" {
			errs = append(errs, removeCgroup(dir, cgroupDrain))
		}
	}
	c.kill, c.cpuset = "", ""
	return errors.Join(errs...)
}

// removeStale removes the run cgroups whose tcs process is gone (killed
// with SIGKILL, which leaves no time to clean up), killing what was left
// in them: grandchildren that had left their process group.
func (c *RunCgroups) removeStale(m CgroupMounts) {
	for _, root := range []string{m.V2, m.CpusetV1} {
		if root == "" {
			continue
		}
		ents, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range ents {
			pid, ok := ParseRunCgroupName(e.Name())
			if !ok || !e.IsDir() || processExists(pid) {
				continue
			}
			dir := filepath.Join(root, e.Name())
			n, err := killCgroup(dir)
			if err == nil {
				err = removeCgroup(dir, cgroupDrain)
			}
			if err != nil {
				c.notef("cgroup %s of an earlier run (tcs pid %d, gone): %v", dir, pid, err)
				continue
			}
			c.notef("removed cgroup %s of an earlier run (tcs pid %d, gone); killed %d processes left in it", dir, pid, n)
		}
	}
}

func processExists(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// makeCgroup creates root/name (an existing one, left by a process that
// had this pid, is reused).
func makeCgroup(root, name string) (string, error) {
	dir := filepath.Join(root, name)
	if err := retryEINTR(func() error { return unix.Mkdir(dir, 0o755) }); err != nil && !errors.Is(err, unix.EEXIST) {
		return "", os.NewSyscallError("mkdir "+dir, err)
	}
	return dir, nil
}

// makeCpuset creates a v1 cpuset cgroup root/name with CPU cpu and the
// memory nodes of root (a v1 cpuset takes no task before both are set).
func makeCpuset(root, name string, cpu int) (string, error) {
	mems, err := os.ReadFile(filepath.Join(root, "cpuset.mems"))
	if err != nil {
		return "", err
	}
	dir, err := makeCgroup(root, name)
	if err != nil {
		return "", err
	}
	if err := writeCgroupFile(filepath.Join(dir, "cpuset.cpus"), strconv.Itoa(cpu)); err != nil {
		_ = unix.Rmdir(dir)
		return "", err
	}
	if err := writeCgroupFile(filepath.Join(dir, "cpuset.mems"), strings.TrimSpace(string(mems))); err != nil {
		_ = unix.Rmdir(dir)
		return "", err
	}
	return dir, nil
}

// writeCgroupFile writes s to a cgroup control file in one write(2), as
// the kernel wants it.
func writeCgroupFile(path, s string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("open "+path, err)
	}
	defer unix.Close(fd)
	if err := retryEINTR(func() error { _, err := unix.Write(fd, []byte(s)); return err }); err != nil {
		return os.NewSyscallError("write "+path, err)
	}
	return nil
}

// cgroupPids lists the processes in cgroup dir.
func cgroupPids(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// killCgroup ends every process in dir: through cgroup.kill where the
// kernel has it (atomic, forks included), else by SIGKILL to each listed
// process, repeated while forks add more. It returns how many processes
// it found there.
func killCgroup(dir string) (int, error) {
	pids, err := cgroupPids(dir)
	if err != nil || len(pids) == 0 {
		return 0, err
	}
	if err := writeCgroupFile(filepath.Join(dir, "cgroup.kill"), "1"); err == nil {
		return len(pids), nil
	}
	seen := map[int]bool{}
	for round := 0; round < 100 && len(pids) > 0; round++ {
		for _, pid := range pids {
			seen[pid] = true
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(time.Millisecond)
		if pids, err = cgroupPids(dir); err != nil {
			return len(seen), err
		}
	}
	return len(seen), nil
}

// removeCgroup waits up to wait for dir to hold no process (killed ones
// leave it once the kernel has torn them down) and removes it.
func removeCgroup(dir string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := retryEINTR(func() error { return unix.Rmdir(dir) })
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			pids, _ := cgroupPids(dir)
			return fmt.Errorf("remove cgroup %s (%d processes in it): %w", dir, len(pids), os.NewSyscallError("rmdir", err))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
