package linux

import (
	"fmt"
	"strconv"
)

// Cred is a process's credentials as a unix socket reports them
// (SO_PEERCRED), or the user a run acts for.
type Cred struct {
	Pid int
	Uid int
	Gid int
}

// ParseInvoker says whom a run acts for: the user sudo names in
// sudoUID/sudoGID (SUDO_UID, SUDO_GID) when the process runs as root
// (euid 0), else the process's own uid and gid. sudo sets both variables;
// one without the other, or a value that is not a uid, is an error naming
// the variable. A non-root process ignores them: `sudo -u alice` leaves
// SUDO_UID naming the caller, whom alice cannot act for.
func ParseInvoker(sudoUID, sudoGID string, euid, uid, gid int) (Cred, error) {
	own := Cred{Uid: uid, Gid: gid}
	if euid != 0 || (sudoUID == "" && sudoGID == "") {
		return own, nil
	}
	if sudoUID == "" || sudoGID == "" {
		return Cred{}, fmt.Errorf("SUDO_UID=%q and SUDO_GID=%q: sudo sets both; set both or neither", sudoUID, sudoGID)
	}
	u, err := parseID(sudoUID)
	if err != nil {
		return Cred{}, fmt.Errorf("SUDO_UID: %w", err)
	}
	g, err := parseID(sudoGID)
	if err != nil {
		return Cred{}, fmt.Errorf("SUDO_GID: %w", err)
	}
	return Cred{Uid: u, Gid: g}, nil
}

// parseID reads a uid or gid: a decimal below 2^32−1 ((uid_t)−1 means
// "no change" to chown and setuid).
func parseID(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 1<<32-1 {
		return 0, fmt.Errorf("%q is not a user or group id", s)
	}
	return int(n), nil
}
