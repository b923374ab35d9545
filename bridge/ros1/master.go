package ros1

import (
	"fmt"
	"net"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/master"
)

// DefaultMasterURI is ROS's default ROS_MASTER_URI.
const DefaultMasterURI = "http://127.0.0.1:11311/"

// EnsureMaster returns a master to use at uri (a ROS_MASTER_URI value; ""
// means DefaultMasterURI): the one that answers there, or, when none does
// within timeout, an embedded master started on that address. started
// reports whether the caller owns (and must Close) the returned master; it
// is nil when an outside master answered. tcs starts its own master on a
// loopback address only.
func EnsureMaster(uri string, timeout time.Duration, log zerolog.Logger) (m *master.Master, started bool, err error) {
	if uri == "" {
		uri = DefaultMasterURI
	}
	hostport, err := master.ParseURI(uri)
	if err != nil {
		return nil, false, fmt.Errorf("ROS_MASTER_URI %q: %w", uri, err)
	}
	if master.Running(hostport, timeout) {
		log.Info().Str("uri", uri).Msg("ros1: using the master that answers at ROS_MASTER_URI")
		return nil, false, nil
	}
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, false, fmt.Errorf("ROS_MASTER_URI %q: %w", uri, err)
	}
	if !isLoopback(host) {
		return nil, false, fmt.Errorf("no ROS master answers at ROS_MASTER_URI %s, and tcs starts its own only on loopback: "+
			"start roscore there, or unset ROS_MASTER_URI (or set it to %s)", uri, DefaultMasterURI)
	}
	ml := log.With().Str("part", "master").Logger()
	m, err = master.New(master.Conf{Addr: hostport, Log: &ml})
	if err != nil {
		return nil, false, fmt.Errorf("start the embedded ROS master at %s: %w", hostport, err)
	}
	log.Info().Str("uri", m.URI()).Msg("ros1: no master answered; started the embedded master")
	return m, true, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
