package main

import (
	"fmt"
	"io"
)

// benchDispatch is replaced when the bench package lands.
func benchDispatch(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "tcs bench dispatch: not built yet")
	return 1
}
