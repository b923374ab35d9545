// Package report is what a tcs run tells its user (DESIGN §6): the
// summary.json record, the closing table and the live status line, and the
// allocation-free statistics the runner collects them with.
//
// The collectors (Quantiles, PeriodStats) have fixed memory and do not
// allocate when a sample is added, so the dispatch loop may feed them. The
// rest (Summary, Table, StatusLine) runs outside the loop.
//
// Times inside the collectors are int64 nanoseconds like everywhere in tcs;
// the Summary holds float64 seconds (fields ending in _s) because that is
// what scripts and the benchmarks read.
package report
