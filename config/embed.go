package config

import _ "embed"

// Demo is the scenario `tcs demo` runs: config/demo.yaml, built in.
//
//go:embed demo.yaml
var Demo []byte
