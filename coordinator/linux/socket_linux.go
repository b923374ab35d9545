package linux

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrWouldBlock reports that a non-blocking socket could not take (or had
// not) the whole of what was asked at once.
var ErrWouldBlock = errors.New("socket would block")

// SendAll writes b to the stream socket fd without blocking and without
// SIGPIPE. It succeeds only if every byte was taken: on loopback the bytes
// are then in the receiver's socket. A partial write returns the count and
// ErrWouldBlock (the stream is then out of frame: close it).
func SendAll(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := send(fd, b[n:], unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return n, ErrWouldBlock
		case err != nil:
			return n, os.NewSyscallError("send", err)
		}
		n += k
	}
	return n, nil
}

// send is send(2) on a connected socket: sendto with no address, which
// the kernel takes without copying in a msghdr (x/sys's Sendmsg builds
// one). It never blocks when flags has MSG_DONTWAIT, so it is a raw
// system call, outside the Go scheduler.
func send(fd int, b []byte, flags int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// recv is recv(2) on a connected socket: recvfrom with no address
// (x/sys's Recvfrom allocates one for the sender's address on every
// call). Raw, as send, for flags with MSG_DONTWAIT.
func recv(fd int, b []byte, flags int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// DupConn returns a close-on-exec duplicate of c's descriptor for the
// caller to own (and to close with Close). The socket stays open through
// it after c is closed, and outside Go's network poller then, so the
// runtime no longer wakes a thread each time it becomes readable.
func DupConn(c syscall.Conn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("dup socket: %w", err)
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, fmt.Errorf("dup socket: %w", err)
	}
	if derr != nil {
		return -1, os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", derr)
	}
	return fd, nil
}

// Close closes descriptor fd.
func Close(fd int) error {
	if err := unix.Close(fd); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// RecvSome reads what is available on the stream socket fd into b without
// blocking. It returns 0 and ErrWouldBlock when nothing is there, and 0 and
// nil when the peer closed the connection.
func RecvSome(fd int, b []byte) (int, error) {
	for {
		n, err := recv(fd, b, unix.MSG_DONTWAIT)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, ErrWouldBlock
		case err != nil:
			return 0, os.NewSyscallError("recv", err)
		}
		return n, nil
	}
}
