// Command gonode runs controllers/rosnode's PD controller as a ROS 1 node
// of its own, on its own command line:
//
//	gonode __ns:=/arm _rate:=100 /clock:=/tcs/pd/clock
//
// It stops on SIGINT or SIGTERM (exit status 0) and when the master goes
// away (exit status 1). The controllers tests build and run it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tcs-robotics/tcs/controllers/rosnode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// goroslib reads the /clock remap from os.Args: RunPD gets the same
	// arguments.
	err := rosnode.RunPD(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gonode:", err)
		os.Exit(1)
	}
}
