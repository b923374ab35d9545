package record

import (
	"fmt"
	"path/filepath"

	"github.com/foxglove/mcap/go/mcap"
	"gopkg.in/yaml.v3"
)

// rosbag2's MCAP storage plugin (rosbag2_storage_mcap) keeps a bag's
// metadata in an MCAP metadata record named "rosbag2": from Jazzy on, key
// serialized_metadata holds the bag's BagMetadata as rosbag2_storage's
// YAML (what metadata.yaml holds under rosbag2_bagfile_information); up to
// Iron, key ROS_DISTRO holds the distribution. Its reader takes
// ros_distro from there ("ROS Distro" in ros2 bag info) and the message
// counts, times and topics from the MCAP summary.

// Rosbag2Metadata is the name of rosbag2's MCAP metadata record.
const Rosbag2Metadata = "rosbag2"

// rosbag2Version is the BagMetadata version written: Jazzy's.
const rosbag2Version = 9

type bagDuration struct {
	Nanoseconds uint64 `yaml:"nanoseconds"`
}

type bagTime struct {
	NanosecondsSinceEpoch uint64 `yaml:"nanoseconds_since_epoch"`
}

type bagTopicMetadata struct {
	Name                string    `yaml:"name"`
	Type                string    `yaml:"type"`
	SerializationFormat string    `yaml:"serialization_format"`
	OfferedQoSProfiles  yaml.Node `yaml:"offered_qos_profiles"`
	TypeDescriptionHash string    `yaml:"type_description_hash"`
}

type bagTopic struct {
	TopicMetadata bagTopicMetadata `yaml:"topic_metadata"`
	MessageCount  uint64           `yaml:"message_count"`
}

type bagFile struct {
	Path         string      `yaml:"path"`
	StartingTime bagTime     `yaml:"starting_time"`
	Duration     bagDuration `yaml:"duration"`
	MessageCount uint64      `yaml:"message_count"`
}

// bagMetadata is rosbag2_storage's BagMetadata, field for field in the
// order its YAML encoder writes them.
type bagMetadata struct {
	Version                int               `yaml:"version"`
	StorageIdentifier      string            `yaml:"storage_identifier"`
	Duration               bagDuration       `yaml:"duration"`
	StartingTime           bagTime           `yaml:"starting_time"`
	MessageCount           uint64            `yaml:"message_count"`
	TopicsWithMessageCount []bagTopic        `yaml:"topics_with_message_count"`
	CompressionFormat      string            `yaml:"compression_format"`
	CompressionMode        string            `yaml:"compression_mode"`
	RelativeFilePaths      []string          `yaml:"relative_file_paths"`
	Files                  []bagFile         `yaml:"files"`
	CustomData             map[string]string `yaml:"custom_data"`
	ROSDistro              string            `yaml:"ros_distro"`
}

// rosbag2Record returns the "rosbag2" metadata of the recording at path
// whose writer collected stats, with channels chans (by id; MCAP channel
// id = id + 1) and ROS 2 distribution distro ("" for none: ros2 bag info
// shows unknown). Topics without messages are left out, as rosbag2 never
// writes a channel it has no message for.
func rosbag2Record(path, distro string, stats *mcap.Statistics, chans []Channel) (map[string]string, error) {
	var start, dur uint64
	if stats.MessageCount > 0 {
		start, dur = stats.MessageStartTime, stats.MessageEndTime-stats.MessageStartTime
	}
	file := filepath.Base(path)
	md := bagMetadata{
		Version:           rosbag2Version,
		StorageIdentifier: "mcap",
		Duration:          bagDuration{dur},
		StartingTime:      bagTime{start},
		MessageCount:      stats.MessageCount,
		RelativeFilePaths: []string{file},
		Files: []bagFile{{Path: file, StartingTime: bagTime{start}, Duration: bagDuration{dur},
			MessageCount: stats.MessageCount}},
		CustomData:             map[string]string{},
		ROSDistro:              distro,
		TopicsWithMessageCount: []bagTopic{},
	}
	for id, c := range chans {
		n := stats.ChannelMessageCounts[uint16(id+1)]
		if n == 0 {
			continue
		}
		tm := bagTopicMetadata{Name: c.Topic, Type: c.Type, SerializationFormat: "cdr"}
		// The channel's offered_qos_profiles, a YAML sequence in
		// rosbag2's older (integer) form, which its reader recognizes
		// in any version.
		if err := yaml.Unmarshal([]byte(c.Metadata["offered_qos_profiles"]), &tm.OfferedQoSProfiles); err != nil {
			return nil, fmt.Errorf("rosbag2 metadata: %s: offered_qos_profiles: %w", c.Topic, err)
		}
		if tm.OfferedQoSProfiles.Kind == yaml.DocumentNode && len(tm.OfferedQoSProfiles.Content) == 1 {
			tm.OfferedQoSProfiles = *tm.OfferedQoSProfiles.Content[0]
		} else {
			tm.OfferedQoSProfiles = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		}
		md.TopicsWithMessageCount = append(md.TopicsWithMessageCount, bagTopic{TopicMetadata: tm, MessageCount: n})
	}
	b, err := yaml.Marshal(&md)
	if err != nil {
		return nil, fmt.Errorf("rosbag2 metadata: %w", err)
	}
	rec := map[string]string{"serialized_metadata": string(b)}
	if distro != "" {
		rec["ROS_DISTRO"] = distro
	}
	return rec, nil
}
