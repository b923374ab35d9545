package master

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreeURI returns a loopback master URI ("http://127.0.0.1:PORT/") on a
// TCP port that is free now and lies below the kernel's range of ephemeral
// ports (net.ipv4.ip_local_port_range). A port the kernel chose for a
// listener on port 0 is in that range: between closing that listener and
// the master binding the port, any process's outgoing connection may be
// given it ("Address already in use"); below the range only another
// listener can take it.
func FreeURI() (string, error) {
	lo := ephemeralLow()
	const first = 10000
	for try := 0; lo > first && try < 100; try++ {
		port := first + rand.IntN(lo-first)
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			_ = l.Close()
			return fmt.Sprintf("http://127.0.0.1:%d/", port), nil
		}
	}
	// No room below the range, or all taken: any free port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port for the ROS master: %w", err)
	}
	defer l.Close()
	return fmt.Sprintf("http://127.0.0.1:%d/", l.Addr().(*net.TCPAddr).Port), nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768,
// Linux's default, when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo < 1 || lo > 65535 {
		return 32768
	}
	return lo
}
