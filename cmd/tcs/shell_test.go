package main

import "testing"

func TestShellWords(t *testing.T) {
	got := shellWords([]string{"A=LOCALHOST", `B=<x a="1"/>`, "C=it's"})
	want := `A=LOCALHOST B='<x a="1"/>' C='it'\''s'`
	if got != want {
		t.Errorf("shellWords = %s, want %s", got, want)
	}
}
