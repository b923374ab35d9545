package config

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want Duration
		err  string
	}{
		{"1ms", Millisecond, ""},
		{"10s", 10 * Second, ""},
		{"0.5s", 500 * Millisecond, ""},
		{"50us", 50 * Microsecond, ""},
		{"50µs", 50 * Microsecond, ""},
		{"1m30s", 90 * Second, ""},
		{"250ns", 250, ""},
		{"  2ms ", 2 * Millisecond, ""},
		{"1", Second, ""},
		{"0", 0, ""},
		{"0.001", Millisecond, ""},
		{"1e-3", Millisecond, ""},
		{"2.5", 2500 * Millisecond, ""},
		{"-1", -Second, ""},
		{"-1ms", -Millisecond, ""},
		{"0.0000000004", 0, ""},
		{"0.0000000006", 1, ""},
		{"", 0, `"" is not a duration; write it like 1ms or 0.01s`},
		{"abc", 0, `"abc" is not a duration; write it like 1ms or 0.01s`},
		{"1 ms", 0, "is not a duration"},
		{"1x", 0, "is not a duration"},
		{"ms", 0, "is not a duration"},
		{"NaN", 0, "is not a duration"},
		{"Inf", 0, "is not a duration"},
		{".", 0, "is not a duration"},
		{"1e", 0, "is not a duration"},
		{"1e400", 0, "is not a duration"},
		{"1e300", 0, "too long"},
		{"-1e300", 0, "too long"},
		{"9999999999999h", 0, "is not a duration"},
		{"0x10", 0, "is not a duration"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("ParseDuration(%q): %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseDuration(%q) = %v, %v; want error with %q", tt.in, got, err, tt.err)
		case tt.err == "" && got != tt.want:
			t.Errorf("ParseDuration(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestDurationYAML(t *testing.T) {
	var v struct {
		A, B, C Duration
	}
	if err := yaml.Unmarshal([]byte("a: 1ms\nb: 2\nc: 0.25\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.A != Millisecond || v.B != 2*Second || v.C != 250*Millisecond {
		t.Errorf("%+v", v)
	}
	if err := yaml.Unmarshal([]byte("a: [1]\n"), &v); err == nil {
		t.Error("a list decoded as a Duration")
	}
	if err := yaml.Unmarshal([]byte("a: xyz\n"), &v); err == nil {
		t.Error("xyz decoded as a Duration")
	}
	out, err := yaml.Marshal(struct{ D Duration }{1500 * Microsecond})
	if err != nil || string(out) != "d: 1.5ms\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
	if (1500*Microsecond).Seconds() != 0.0015 || Second.Nanoseconds() != 1e9 || Millisecond.String() != "1ms" {
		t.Error("Seconds/Nanoseconds/String")
	}
}

func TestEnums(t *testing.T) {
	type enum interface {
		String() string
		MarshalText() ([]byte, error)
	}
	tests := []struct {
		v     enum
		name  string
		parse func(string) (enum, error)
	}{
		{ModeConsistent, "consistent", func(s string) (enum, error) { return ParseMode(s) }},
		{ModeLockstep, "lockstep", func(s string) (enum, error) { return ParseMode(s) }},
		{ModeFree, "free", func(s string) (enum, error) { return ParseMode(s) }},
		{ClassPeriodic, "periodic", func(s string) (enum, error) { return ParseClass(s) }},
		{ClassBestEffort, "best-effort", func(s string) (enum, error) { return ParseClass(s) }},
		{APINative, "native", func(s string) (enum, error) { return ParseAPI(s) }},
		{APIPlain, "plain", func(s string) (enum, error) { return ParseAPI(s) }},
		{ActuationExact, "exact", func(s string) (enum, error) { return ParseActuation(s) }},
		{ActuationHold, "hold", func(s string) (enum, error) { return ParseActuation(s) }},
		{OnExitStop, "stop", func(s string) (enum, error) { return ParseOnExit(s) }},
		{OnExitContinue, "continue", func(s string) (enum, error) { return ParseOnExit(s) }},
	}
	for _, tt := range tests {
		if tt.v.String() != tt.name {
			t.Errorf("String() = %q, want %q", tt.v.String(), tt.name)
		}
		if b, _ := tt.v.MarshalText(); string(b) != tt.name {
			t.Errorf("MarshalText = %q", b)
		}
		got, err := tt.parse(tt.name)
		if err != nil || got != tt.v {
			t.Errorf("parse(%q) = %v, %v", tt.name, got, err)
		}
		if _, err := tt.parse(strings.ToUpper(tt.name)); err == nil {
			t.Errorf("parse(%q) accepted upper case", strings.ToUpper(tt.name))
		}
	}
	if _, err := ParseClass(""); err == nil || !strings.Contains(err.Error(), "use one of periodic, best-effort") {
		t.Errorf("ParseClass(\"\") = %v", err)
	}
	if Mode(9).String() != "Mode(9)" || ClassUnset.String() != "" {
		t.Errorf("out of range: %q %q", Mode(9).String(), ClassUnset.String())
	}
	var m Mode
	if err := m.UnmarshalText([]byte("free")); err != nil || m != ModeFree {
		t.Errorf("UnmarshalText: %v %v", m, err)
	}
	var c Class
	var a API
	var ac Actuation
	var o OnExit
	if c.UnmarshalText([]byte("periodic")) != nil || a.UnmarshalText([]byte("plain")) != nil ||
		ac.UnmarshalText([]byte("hold")) != nil || o.UnmarshalText([]byte("continue")) != nil ||
		c != ClassPeriodic || a != APIPlain || ac != ActuationHold || o != OnExitContinue {
		t.Error("UnmarshalText round trip")
	}
	if m.UnmarshalText([]byte("x")) == nil || m != ModeFree {
		t.Error("UnmarshalText of a bad name must fail and leave the value")
	}
}
