package controllers

import "golang.org/x/sys/unix"

// threadCPU is the calling thread's CPU clock, ns (0 if unreadable).
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
