package ros1

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// With nothing at ROS_MASTER_URI an embedded master starts there; a second
// caller finds it running and does not start another.
func TestEnsureMaster(t *testing.T) {
	uri := "http://" + freeAddr(t) + "/"
	m, started, err := EnsureMaster(uri, 300*time.Millisecond, zerolog.Nop())
	if err != nil || !started || m == nil {
		t.Fatalf("EnsureMaster(%s) = %v, %v, %v; want a started master", uri, m, started, err)
	}
	defer m.Close()
	if m.URI() != uri {
		t.Errorf("started at %s, want %s", m.URI(), uri)
	}
	m2, started2, err := EnsureMaster(uri, time.Second, zerolog.Nop())
	if err != nil || started2 || m2 != nil {
		t.Errorf("second EnsureMaster = %v, %v, %v; want the running one used", m2, started2, err)
	}
}

// Nothing is started on an address that is not loopback; the error says
// what to do.
func TestEnsureMasterRefusesRemote(t *testing.T) {
	_, _, err := EnsureMaster("http://192.0.2.1:11311", 200*time.Millisecond, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "only on loopback") {
		t.Errorf("err = %v, want a refusal naming loopback", err)
	}
	if _, _, err := EnsureMaster("ftp://x", time.Millisecond, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "ROS_MASTER_URI") {
		t.Errorf("bad URI: err = %v", err)
	}
}
