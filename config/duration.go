package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a span of virtual or wall time in int64 nanoseconds.
//
// In a scenario file it is written like Go's time.ParseDuration ("1ms",
// "10s", "0.5s", "50us", "50µs", "1m30s") or as a bare number meaning
// seconds ("0.001", 10).
type Duration int64

// Common durations.
const (
	Nanosecond  Duration = 1
	Microsecond Duration = 1000
	Millisecond Duration = 1000 * Microsecond
	Second      Duration = 1000 * Millisecond
)

// ParseDuration parses a scenario-file duration: a Go duration string or a
// bare number of seconds. The error says how to write one.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("%q is not a duration; write it like 1ms or 0.01s", s)
	}
	if !isBareNumber(t) {
		d, err := time.ParseDuration(t)
		if err != nil {
			// time.ParseDuration also refuses durations over about 292
			// years this way.
			return 0, fmt.Errorf("%q is not a duration; write it like 1ms or 0.01s", s)
		}
		return Duration(d), nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a duration; write it like 1ms or 0.01s", s)
	}
	ns := math.Round(f * 1e9)
	if ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return 0, fmt.Errorf("%q is too long a duration (at most about 292 years)", s)
	}
	return Duration(ns), nil
}

// isBareNumber reports whether s is a plain decimal number (optional sign,
// digits, at most one point, optional exponent): seconds without a unit.
func isBareNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	digits, dot := 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		case (c == 'e' || c == 'E') && digits > 0:
			rest := s[i+1:]
			if rest != "" && (rest[0] == '+' || rest[0] == '-') {
				rest = rest[1:]
			}
			if rest == "" {
				return false
			}
			for j := 0; j < len(rest); j++ {
				if rest[j] < '0' || rest[j] > '9' {
					return false
				}
			}
			return true
		default:
			return false
		}
	}
	return digits > 0
}

// String formats d like time.Duration ("1ms", "10s", "1.5µs").
func (d Duration) String() string { return time.Duration(d).String() }

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return float64(d) / 1e9 }

// Nanoseconds returns d as int64 nanoseconds.
func (d Duration) Nanoseconds() int64 { return int64(d) }

// UnmarshalYAML implements yaml.Unmarshaler (a scalar, see ParseDuration).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a duration must be a single value like 1ms or 0.01s", n.Line)
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML implements yaml.Marshaler (written like "1ms").
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
