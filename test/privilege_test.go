package test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/report"
)

// hostileScript is a plain client that shows what it is (uid, capabilities,
// CPUs, real-time limit), tries to raise its priority and to leave its CPU,
// starts a daemon in a session of its own (out of its process group) and
// then waits. Its log is what it saw; the daemon's pid is in its log too.
const hostileScript = `
status() { grep -E '^(Uid|CapEff|Cpus_allowed_list):' /proc/self/status | tr -s '\t' ' '; }
status
echo "rtprio limit: $(ulimit -r)"
if chrt -f -p 99 $$; then echo "raise priority: ok"; else echo "raise priority: failed"; fi
echo "policy after: $(chrt -p $$ | head -1)"
if taskset -a -p -c 0 $$ >/dev/null 2>&1; then echo "leave cpu: ok"; else echo "leave cpu: failed"; fi
echo "cpus after: $(grep Cpus_allowed_list /proc/self/status | tr -s '\t' ' ')"
setsid sh -c 'echo "daemon: $$"; exec sleep 600' &
exec sleep 600
`

// A client runs as the user who invoked tcs through sudo (SUDO_UID), or
// as root without capabilities when tcs runs as plain root; only a named
// root keeps root's privileges. An unprivileged client cannot raise its
// priority or leave the simulation CPU, and a daemon it starts outside its
// process group ends with the run (the run's cgroup). Checked from /proc
// while the run goes on and from the client's own log.
func TestClientPrivileges(t *testing.T) {
	needRT(t)
	cpus, err := linux.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	simCPU := strconv.Itoa(cpus[len(cpus)-1])
	for _, tc := range []struct {
		name       string
		env        []string // added to the test's
		user       string   // the scenario's user:
		uid        string
		privileged bool
	}{
		{name: "sudo nobody", env: []string{"SUDO_UID=65534", "SUDO_GID=65534"}, uid: "65534"},
		{name: "plain root", uid: "0"},
		{name: "user nobody", user: "nobody", uid: "65534"},
		{name: "user root", user: "root", uid: "0", privileged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The clients start in the scenario's folder, which they
			// must be able to enter as the user they run as.
			dir := t.TempDir()
			for _, d := range []string{dir, filepath.Dir(dir)} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			user := ""
			if tc.user != "" {
				user = "user: " + tc.user + "\n"
			}
			scen := filepath.Join(dir, "hostile.yaml")
			if err := os.WriteFile(scen, []byte(fmt.Sprintf(`name: hostile
duration: 3s
max_rtf: 1
%sdynamics: {model: pendulum, step: 1ms}
robots:
  - name: arm
    clients:
      - {name: pd, cmd: [tcs, client, pd], api: native, class: periodic, period: 10ms, priority: 20}
      - {name: hostile, cmd: [sh, -c, %q], api: plain, class: periodic, period: 100ms}
`, user, hostileScript)), 0o644); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			cmd := exec.Command(tcsBin, "run", scen, "--out", out, "--quiet", "--wait", "10m")
			cmd.Env = append(os.Environ(), tc.env...)
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// While the run goes on: the client's process as /proc shows it,
			// once it has tried everything.
			var seen map[string]string
			var waitErr error
			running := true
			deadline := time.Now().Add(2 * time.Minute)
			for ; running && seen == nil; time.Sleep(50 * time.Millisecond) {
				select {
				case waitErr = <-exited:
					running = false
				default:
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("tcs still running after 2 minutes\n%s", buf.String())
				}
				if pid := startedPid(out, "hostile"); pid > 0 {
					if log, _ := os.ReadFile(filepath.Join(out, "logs", "hostile.log")); strings.Contains(string(log), "daemon:") {
						seen = procStatus(t, pid)
					}
				}
			}
			if running {
				waitErr = <-exited
			}
			if waitErr != nil {
				t.Fatalf("tcs: %v\n%s%s", waitErr, buf.String(), warnings(out))
			}
			if seen == nil {
				log, _ := os.ReadFile(filepath.Join(out, "logs", "hostile.log"))
				t.Fatalf("the hostile client never got that far; its log:\n%s", log)
			}
			if s := readSummary(t, out); s.Ended != report.EndCompleted {
				t.Errorf("ended %q, want %q", s.Ended, report.EndCompleted)
			}
			t.Logf("/proc of the client while running: %v", seen)
			log, err := os.ReadFile(filepath.Join(out, "logs", "hostile.log"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("client's log:\n%s", log)
			if f := strings.Fields(seen["Uid"]); len(f) < 2 || f[0] != tc.uid || f[1] != tc.uid {
				t.Errorf("Uid %q, want %s", seen["Uid"], tc.uid)
			}
			if got := seen["Cpus_allowed_list"]; got != simCPU {
				t.Errorf("Cpus_allowed_list %q after it tried to leave, want %s", got, simCPU)
			}
			if !tc.privileged {
				if seen["CapEff"] != "0000000000000000" {
					t.Errorf("CapEff %s, want none", seen["CapEff"])
				}
				for _, want := range []string{"rtprio limit: 0", "raise priority: failed", "leave cpu: failed", "cpus after: Cpus_allowed_list: " + simCPU} {
					if !strings.Contains(string(log), want) {
						t.Errorf("the client's log lacks %q", want)
					}
				}
				if pol := seen["policy"]; pol != "" && strings.HasSuffix(pol, " 99") {
					t.Errorf("the client raised itself to priority 99: %s", pol)
				}
			} else if seen["CapEff"] == "0000000000000000" {
				t.Errorf("user: root: CapEff %s, want root's capabilities", seen["CapEff"])
			}
			daemon := 0
			for _, l := range strings.Split(string(log), "\n") {
				if s, ok := strings.CutPrefix(l, "daemon: "); ok {
					daemon, _ = strconv.Atoi(s)
				}
			}
			if daemon == 0 {
				t.Fatalf("the client's daemon did not report its pid")
			}
			checkNothingLeft(t, append(childPids(t, out), daemon), "after the run (daemon "+strconv.Itoa(daemon)+")")
		})
	}
}

// startedPid is the pid tcs.log gives for client name, 0 before it started.
func startedPid(out, name string) int {
	f, err := os.Open(filepath.Join(out, "tcs.log"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, `"message":"started"`) && strings.Contains(l, `"client":"`+name+`"`) {
			i := strings.Index(l, `"pid":`)
			if i < 0 {
				continue
			}
			n := l[i+6:]
			if j := strings.IndexAny(n, ",}"); j >= 0 {
				n = n[:j]
			}
			pid, _ := strconv.Atoi(n)
			return pid
		}
	}
	return 0
}

// procStatus reads the fields of /proc/pid/status this test checks, and
// the scheduling policy of the process's main thread.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("/proc/%d/status: %v", pid, err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			m[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	if pol, prio, err := linux.Policy(pid); err == nil {
		m["policy"] = fmt.Sprintf("%d %d", pol, prio)
	}
	return m
}
