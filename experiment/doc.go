// Package experiment reproduces the papers' experiments with real runs:
// the pendulum at 1 kHz (paper 004 §4) and the predator–prey pursuit
// (paper 000 §4). Each writes a folder with every run's summary.json, the
// CSV behind each plot, the plots (PNG and SVG) and report.md, which puts
// the papers' numbers beside ours.
package experiment
