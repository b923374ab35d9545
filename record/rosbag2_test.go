package record

import (
	"path/filepath"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// Close writes rosbag2's metadata record as Jazzy's rosbag2_storage_mcap
// does: serialized_metadata, BagMetadata version 9 with its keys in
// rosbag2's order, the counts and times of what was written, the topics
// that have messages with their type and offered QoS; and ROS_DISTRO (read
// up to Iron) when a distribution is set.
func TestRosbag2Metadata(t *testing.T) {
	for _, distro := range []string{"jazzy", ""} {
		path := filepath.Join(t.TempDir(), "run.mcap")
		r, err := Create(Conf{Path: path, ROSDistro: distro})
		if err != nil {
			t.Fatal(err)
		}
		clk, err := r.AddChannel(Clock.Channel(TopicClock))
		if err != nil {
			t.Fatal(err)
		}
		// A channel without messages: not listed.
		if _, err := r.AddChannel(JointState.Channel("/arm/joint_states")); err != nil {
			t.Fatal(err)
		}
		for i := int64(5); i < 10; i++ {
			EncodeClock(r.Begin(clk, i, i), i)
			r.Commit()
		}
		if err := r.Close(nil, nil); err != nil {
			t.Fatal(err)
		}
		f, err := Read(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := f.Metadata[Rosbag2Metadata]
		if got, ok := rec["ROS_DISTRO"]; got != distro || ok != (distro != "") {
			t.Errorf("distro %q: ROS_DISTRO %q (present %v)", distro, got, ok)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(rec["serialized_metadata"]), &doc); err != nil || len(doc.Content) != 1 {
			t.Fatalf("serialized_metadata: %v\n%s", err, rec["serialized_metadata"])
		}
		var keys []string
		for i := 0; i < len(doc.Content[0].Content); i += 2 {
			keys = append(keys, doc.Content[0].Content[i].Value)
		}
		// The order of rosbag2_storage's YAML encoder (yaml.hpp).
		want := []string{"version", "storage_identifier", "duration", "starting_time", "message_count",
			"topics_with_message_count", "compression_format", "compression_mode", "relative_file_paths",
			"files", "custom_data", "ros_distro"}
		if !reflect.DeepEqual(keys, want) {
			t.Errorf("keys %v, want %v", keys, want)
		}
		var md struct {
			Version           int    `yaml:"version"`
			StorageIdentifier string `yaml:"storage_identifier"`
			Duration          struct {
				Nanoseconds int64 `yaml:"nanoseconds"`
			} `yaml:"duration"`
			StartingTime struct {
				NanosecondsSinceEpoch int64 `yaml:"nanoseconds_since_epoch"`
			} `yaml:"starting_time"`
			MessageCount int64 `yaml:"message_count"`
			Topics       []struct {
				TopicMetadata struct {
					Name, Type          string
					SerializationFormat string           `yaml:"serialization_format"`
					QoS                 []map[string]any `yaml:"offered_qos_profiles"`
				} `yaml:"topic_metadata"`
				MessageCount int64 `yaml:"message_count"`
			} `yaml:"topics_with_message_count"`
			RelativeFilePaths []string `yaml:"relative_file_paths"`
			Files             []struct {
				Path         string `yaml:"path"`
				MessageCount int64  `yaml:"message_count"`
			} `yaml:"files"`
			ROSDistro string `yaml:"ros_distro"`
		}
		if err := doc.Decode(&md); err != nil {
			t.Fatal(err)
		}
		if md.Version != 9 || md.StorageIdentifier != "mcap" || md.MessageCount != 5 ||
			md.StartingTime.NanosecondsSinceEpoch != 5 || md.Duration.Nanoseconds != 4 || md.ROSDistro != distro ||
			!reflect.DeepEqual(md.RelativeFilePaths, []string{"run.mcap"}) ||
			len(md.Files) != 1 || md.Files[0].Path != "run.mcap" || md.Files[0].MessageCount != 5 {
			t.Errorf("distro %q: metadata %+v\n%s", distro, md, rec["serialized_metadata"])
		}
		if len(md.Topics) != 1 {
			t.Fatalf("topics %+v, want /clock alone", md.Topics)
		}
		tm := md.Topics[0].TopicMetadata
		if tm.Name != TopicClock || tm.Type != "rosgraph_msgs/msg/Clock" || tm.SerializationFormat != "cdr" ||
			md.Topics[0].MessageCount != 5 || len(tm.QoS) != 1 || tm.QoS[0]["reliability"] != 1 {
			t.Errorf("topic %+v", md.Topics[0])
		}
	}
}
