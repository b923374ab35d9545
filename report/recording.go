package report

// Recording describes a run's recording (summary.json "recording"): the
// MCAP file, what it holds and what it dropped (the recorder's ring was
// full), per topic.
type Recording struct {
	// File is the recording's path.
	File string `json:"file"`
	// Messages is the number of messages written; Dropped those dropped.
	Messages int64 `json:"messages"`
	Dropped  int64 `json:"dropped"`
	// Topics counts per topic, in the order the channels were added.
	Topics []RecordedTopic `json:"topics"`
}

// RecordedTopic is one topic of a recording.
type RecordedTopic struct {
	Topic    string `json:"topic"`
	Type     string `json:"type"`
	Messages int64  `json:"messages"`
	Dropped  int64  `json:"dropped,omitempty"`
}
