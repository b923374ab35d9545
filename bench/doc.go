// Package bench holds the benchmarks `tcs bench ...` runs on the real
// mechanism: Dispatch measures the dispatch cycle of coordinator/driver
// against the same cycle written in C, and how late a busy client is taken
// back at the end of its quantum; Decision measures the pure policy's cost
// per scheduling decision as the client count grows.
package bench
