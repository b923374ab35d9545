package main

import (
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/remote"
)

// cmdWorld serves one of tcs's worlds to a run through the native world
// protocol (dynamics/remote): the process a scenario's
// `dynamics: {model: remote, params: {cmd: [tcs, world, MODEL, ...]}}`
// starts. Params are key=value, each value read as YAML (numbers, strings).
func cmdWorld(args []string, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "tcs world: name a model (%s) and its params as key=value\n", strings.Join(dynamics.Models(), ", "))
		return 2
	}
	model := args[0]
	if model == "remote" {
		fmt.Fprintln(stderr, "tcs world: a remote world cannot be served again")
		return 2
	}
	params := map[string]any{}
	for _, kv := range args[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(stderr, "tcs world: %q: write params as key=value\n", kv)
			return 2
		}
		var val any
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			fmt.Fprintf(stderr, "tcs world: %s: %v\n", k, err)
			return 2
		}
		params[k] = val
	}
	conn, err := remote.Dial()
	if err != nil {
		fmt.Fprintf(stderr, "tcs world: %v\n", err)
		return 1
	}
	defer conn.Close()
	f, err := remote.Blocking(conn)
	if err != nil {
		fmt.Fprintf(stderr, "tcs world: %v\n", err)
		return 1
	}
	defer f.Close()
	err = remote.Serve(f, func(bodies int, step int64) (remote.Model, error) {
		return dynamics.New(model, bodies, step, params)
	})
	if err != nil {
		fmt.Fprintf(stderr, "tcs world %s: %v\n", model, err)
		return 1
	}
	return 0
}
