package config

import (
	"sort"
	"strconv"
	"strings"
)

// FieldError is one problem in a scenario: where it is and how to fix it.
//
// It formats as
//
//	config/x.yaml:12: robots[0].clients[1].period: "abc" is not a duration; write it like 1ms or 0.01s
//
// File is the path as given to Load or Parse ("scenario" when none was
// given); Line is 1-based, 0 when unknown (a Scenario built in code); Field
// is the path of the field in the file (dots for mappings, [i] for list
// items), empty for problems with the whole file (YAML syntax).
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error implements error.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File == "" {
		b.WriteString("scenario")
	} else {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a scenario, in file order. Load, Parse
// and Validate return it (as error) when it is not empty.
type Errors []*FieldError

// Error implements error: one problem per line.
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.As find each FieldError.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortByLine orders problems by line, keeping the order they were found in
// for equal lines (problems without a line last).
func (es Errors) sortByLine() {
	sort.SliceStable(es, func(i, j int) bool {
		li, lj := es[i].Line, es[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
}

// orNil returns es as an error, or nil when it is empty.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}
