package linux

import (
	"encoding/binary"
	"errors"
)

// The kernel's process events connector (linux/cn_proc.h, linux/connector.h).
const (
	cnIdxProc         = 1
	cnValProc         = 1
	procCnMcastListen = 1
	procEventFork     = 0x00000001
	procEventExit     = 0x80000000

	nlmsgHdrLen = 16 // struct nlmsghdr
	cnMsgLen    = 20 // struct cn_msg, up to its data
	procEvHdr   = 16 // struct proc_event, up to its event_data
)

// ProcEvent is a process being forked or exiting, anywhere on the machine.
type ProcEvent struct {
	Fork bool // a fork (a new thread when Pid != Tgid); otherwise an exit
	// Fork: the new task; exit: the task that exited.
	Pid, Tgid int
	// Fork: the task that forked (its thread and its process).
	ParentPid, ParentTgid int
}

// ErrEventsLost is returned when the kernel dropped process events (the
// socket's buffer was full): forks may have gone unseen.
var ErrEventsLost = errors.New("process events lost")

// ParseProcEvents appends the fork and exit events of the netlink
// messages in b to dst and returns it; other events and malformed or
// short messages are skipped.
func ParseProcEvents(b []byte, dst []ProcEvent) []ProcEvent {
	for len(b) >= nlmsgHdrLen {
		n := int(binary.NativeEndian.Uint32(b[0:4]))
		if n < nlmsgHdrLen || n > len(b) {
			return dst
		}
		msg := b[nlmsgHdrLen:n]
		b = b[min(len(b), (n+3)&^3):]
		if len(msg) < cnMsgLen+procEvHdr+16 {
			continue
		}
		if binary.NativeEndian.Uint32(msg[0:4]) != cnIdxProc || binary.NativeEndian.Uint32(msg[4:8]) != cnValProc {
			continue
		}
		ev := msg[cnMsgLen:]
		what := binary.NativeEndian.Uint32(ev[0:4])
		d := ev[procEvHdr:]
		u := func(k int) int { return int(binary.NativeEndian.Uint32(d[4*k:])) }
		switch what {
		case procEventFork:
			dst = append(dst, ProcEvent{Fork: true, ParentPid: u(0), ParentTgid: u(1), Pid: u(2), Tgid: u(3)})
		case procEventExit:
			dst = append(dst, ProcEvent{Pid: u(0), Tgid: u(1)})
		}
	}
	return dst
}
