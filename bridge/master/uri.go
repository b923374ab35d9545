package master

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrInvalidURI is wrapped by ParseURI's errors.
var ErrInvalidURI = errors.New("invalid ROS_MASTER_URI")

// ParseURI parses a ROS_MASTER_URI value ("http://host:port", a trailing
// slash allowed) and returns its "host:port".
func ParseURI(env string) (hostport string, err error) {
	bad := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w %q: %s", ErrInvalidURI, env, fmt.Sprintf(format, args...))
	}
	if env == "" {
		return bad("empty")
	}
	u, err := url.Parse(env)
	if err != nil {
		return bad("%v", errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http":
		if u.Scheme == "" || u.Host == "" && u.Opaque != "" {
			return bad(`want "http://host:port/"`)
		}
		return bad("scheme %q, want http", u.Scheme)
	case u.User != nil:
		return bad("user information is not allowed")
	case u.Path != "" && u.Path != "/":
		return bad("path %q, want none or /", u.Path)
	case u.RawQuery != "" || u.ForceQuery:
		return bad("a query is not allowed")
	case u.Fragment != "":
		return bad("a fragment is not allowed")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return bad("no host")
	}
	if port == "" {
		return bad("no port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return bad("port %q is not in 1-65535", port)
	}
	return net.JoinHostPort(host, port), nil
}

// Running reports whether a ROS master answers getSystemState at uri (a
// ROS_MASTER_URI value, or "host:port") within timeout.
func Running(uri string, timeout time.Duration) bool {
	hostport, err := ParseURI(uri)
	if err != nil {
		if _, _, err := net.SplitHostPort(uri); err != nil {
			return false
		}
		hostport = uri
	}
	var body bytes.Buffer
	if err := encodeCall(&body, "getSystemState", []any{"/tcs_master_probe"}); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	code, err := postCall(ctx, client, "http://"+hostport+"/", "getSystemState", &body)
	return err == nil && code == codeSuccess
}
