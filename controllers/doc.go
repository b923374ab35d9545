// Package controllers holds the example clients bundled with tcs, run as
// `tcs client NAME args...` (cmd/tcs calls Main):
//
//	pd       pendulum swing-up and balance (paper 004 §4), native, periodic
//	planner  best-effort native client that computes forever and publishes plans
//	crash    native client that exits with a given code after some activations
//	spin     a plain busy loop, no protocol at all
//
// The native clients use coordinator/native; their activation loops do not
// allocate. The same PD law in C is in c/pd.c (using tcs_native.h).
package controllers
