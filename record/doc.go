// Package record writes and reads a run's recording: MCAP with the ros2
// profile (ros2msg schemas, CDR messages, chunked and indexed), which
// Foxglove and ros2 bag read. The dispatch thread hands records to a
// writer goroutine through a ring of preallocated slots (Begin, Commit)
// and never waits for it: a record that finds the ring full is dropped
// and counted. Convert turns ROS 1 message bytes into their ROS 2 CDR
// form for relayed topics; the reader and report read a recording back
// (tcs report), including the prefix a killed run left. The writer's
// memory does not grow with the recording: the chunk index waits in an
// unnamed file beside it until Close writes the summary.
//
// It must not block its caller on disk: only the writer goroutine and
// Close touch the file.
package record
