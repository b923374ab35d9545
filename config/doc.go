// Package config is the scenario schema of tcs: what a `tcs run
// scenario.yaml` file may say, how it is read, and how it is checked.
//
// Reading a scenario has three steps that never mix (notes/style.md,
// lesson 4):
//
//  1. parse: the YAML text becomes a yaml.Node tree, walked field by field
//     into a Scenario; defaults are filled in as each field is read (some
//     defaults depend on other fields: a client's priority on its class,
//     its cpu_scale on its robot's); unknown fields, wrong types and
//     malformed durations become FieldErrors with the line they are on;
//  2. validate: Scenario.Validate is a pure function of the Scenario that
//     returns every problem at once, each naming the file, line, field and
//     a fix;
//  3. apply: the runner turns the Scenario into processes and a dynamics
//     world. Facts only the machine knows (how many CPUs are online, how
//     many bodies a dynamics model has, whether a working directory exists)
//     are checked there, not here.
//
// Load does steps 1 and 2 for a file; Parse does them for bytes.
//
// YAML anchors, aliases and << merge keys work anywhere in the schema; a
// top-level key starting with "x-" is ignored, as a place to define them:
//
//	x-controller: &controller {cmd: [tcs, client, pd], class: periodic, period: 1ms}
//	robots:
//	  - name: arm
//	    clients:
//	      - {<<: *controller, name: pd}
//
// A field given with an empty value (period: or period: ~) counts as not
// given: it takes its default.
package config
