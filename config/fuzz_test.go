package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics, returns exactly one of a scenario and an
// error, and what it returns validates.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		minimal, base, "", "---\n---\n", "a: &a\n  b: *a\n", "<<: *x\n", "robots: [&r {clients: [*r]}]\n",
		"x-a: &a {<<: *a}\n", "robots: [{clients: [{<<: [{name: a}, {name: b}], cmd: [x]}]}]\n",
		"duration: 1e300\n", "dynamics: {params: {a: &a [*a]}}\n", "? [a]\n: 1\n", "\t",
		"robots:\n- clients:\n  - env: {A: {B: 1}}\n", "free: !!binary aGk=\n", "cpu: 0x10\nbase_priority: 0o17\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if (s == nil) == (err == nil) {
			t.Fatalf("Parse returned scenario %v and error %v", s != nil, err)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse succeeded but Validate fails: %v", err)
		}
		_ = s.Clients()
		_ = s.EffectiveWallLimit()
	})
}
