package dynamics

import (
	"errors"
	"fmt"
	"time"

	"github.com/tcs-robotics/tcs/dynamics/remote"
)

var _ interface {
	World
	JointNamer
	Sensorer
	Resetter
	ResetAsker
	Process
	Failer
	Closer
} = (*remote.World)(nil)

// newRemote builds the "remote" model: params {cmd: [argv...]} or
// {socket: path}, and optionally timeout (a duration, default 10s).
func newRemote(bodies int, step int64, params map[string]any) (World, error) {
	var conf remote.Conf
	for k, v := range params {
		switch k {
		case "cmd":
			list, ok := v.([]any)
			for _, a := range list {
				s, isStr := a.(string)
				ok = ok && isStr && s != ""
				conf.Cmd = append(conf.Cmd, s)
			}
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("dynamics: remote: %w: parameter \"cmd\" must be a command as a list of words ([tcs, world, pendulum]), got %T %v", ErrBadParam, v, v)
			}
		case "socket":
			s, ok := v.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("dynamics: remote: %w: parameter \"socket\" must be the path of a world's socket, got %T %v", ErrBadParam, v, v)
			}
			conf.Socket = s
		case "timeout":
			s, _ := v.(string)
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("dynamics: remote: %w: parameter \"timeout\" must be a duration like 10s, got %v", ErrBadParam, v)
			}
			conf.Timeout = d
		default:
			return nil, fmt.Errorf("dynamics: remote: %w: unknown parameter %q (valid: cmd, socket, timeout)", ErrBadParam, k)
		}
	}
	if (len(conf.Cmd) == 0) == (conf.Socket == "") {
		return nil, fmt.Errorf("dynamics: remote: %w: give params cmd (a command that serves the world: [tcs, world, pendulum]) or socket (where a world serves), one of them", ErrBadParam)
	}
	w, err := remote.New(conf, bodies, step)
	if err != nil {
		if errors.Is(err, remote.ErrWorld) {
			return nil, fmt.Errorf("dynamics: %w", err)
		}
		return nil, fmt.Errorf("dynamics: remote: %w", err)
	}
	return w, nil
}
