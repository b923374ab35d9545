// Package cdr encodes and decodes OMG CDR as ROS 2 puts it on the wire and
// in recordings: plain CDR (XCDR1), little-endian, behind the 4-byte
// encapsulation header 00 01 00 00 (CDR_LE), every primitive aligned to its
// own size counted from the end of that header — what Fast DDS's fastcdr
// and Cyclone DDS write for ROS 2 types.
//
// Writer appends to a caller-owned buffer without allocating once the
// buffer is large enough; Reader decodes in place and keeps the first error
// (check Err once at the end), so decoders of hostile input never panic.
package cdr
