package main

import (
	"io"

	"github.com/tcs-robotics/tcs/experiment"
)

// cmdExperiment is tcs experiment pendulum|pursuit [flags].
func cmdExperiment(args []string, stdout, stderr io.Writer) int {
	return experiment.Main(args, stdout, stderr)
}
