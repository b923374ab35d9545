package linux

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ProcEvents is a non-blocking socket of the kernel's process events
// connector: every fork and exit on the machine (it needs CAP_NET_ADMIN),
// read without allocating.
type ProcEvents struct {
	fd  int
	buf [16 << 10]byte
}

// OpenProcEvents subscribes to process events.
func OpenProcEvents() (*ProcEvents, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.NETLINK_CONNECTOR)
	if err != nil {
		return nil, os.NewSyscallError("socket netlink connector", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: cnIdxProc}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind process events", err)
	}
	// A larger buffer than the default: a burst of forks elsewhere on the
	// machine must not overflow it between two reads. SO_RCVBUFFORCE
	// passes net.core.rmem_max (root); SO_RCVBUF is capped by it.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	}
	var msg [nlmsgHdrLen + cnMsgLen + 4]byte
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], uint32(len(msg)))
	ne.PutUint16(msg[4:], unix.NLMSG_DONE)
	ne.PutUint32(msg[12:], uint32(os.Getpid()))
	cn := msg[nlmsgHdrLen:]
	ne.PutUint32(cn[0:], cnIdxProc)
	ne.PutUint32(cn[4:], cnValProc)
	ne.PutUint16(cn[16:], 4)
	ne.PutUint32(cn[cnMsgLen:], procCnMcastListen)
	if err := unix.Sendto(fd, msg[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("listen to process events", err)
	}
	return &ProcEvents{fd: fd}, nil
}

// Fd is the socket, for an epoll set.
func (e *ProcEvents) Fd() int { return e.fd }

// Read appends the events waiting on the socket to dst[:0] and returns it
// (empty when none wait). ErrEventsLost says the kernel dropped some; the
// events read are returned with it.
func (e *ProcEvents) Read(dst []ProcEvent) ([]ProcEvent, error) {
	dst = dst[:0]
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(e.fd), uintptr(unsafe.Pointer(&e.buf[0])), uintptr(len(e.buf)), 0, 0, 0)
		switch errno {
		case 0:
			dst = ParseProcEvents(e.buf[:n], dst)
		case unix.EINTR:
		case unix.EAGAIN:
			return dst, nil
		case unix.ENOBUFS:
			return dst, ErrEventsLost
		default:
			return dst, fmt.Errorf("read process events: %w", errno)
		}
	}
}

// Close closes the socket.
func (e *ProcEvents) Close() error {
	if e == nil || e.fd < 0 {
		return nil
	}
	err := unix.Close(e.fd)
	e.fd = -1
	return err
}
