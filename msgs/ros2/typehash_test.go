package ros2

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeHashes checks every hash of the table against the type
// description files of an installed ROS 2 (TCS_ROS2_PREFIX, e.g.
// /opt/ros2-jazzy-min): share/<pkg>/<msg|srv|action>/<Name>.json lists
// the hashes of the type and of the types it is made of.
func TestTypeHashes(t *testing.T) {
	prefix := os.Getenv("TCS_ROS2_PREFIX")
	if prefix == "" {
		t.Skip("TCS_ROS2_PREFIX is not set: no installed ROS 2 (Iron or later) to read the type descriptions from")
	}
	for _, typ := range TypeHashes() {
		parts := strings.Split(typ, "/")
		if len(parts) != 3 {
			t.Errorf("%s: not pkg/kind/Name", typ)
			continue
		}
		base, _, _ := strings.Cut(parts[2], "_") // S_Request is described in S.json
		file := filepath.Join(prefix, "share", parts[0], parts[1], base+".json")
		b, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		var desc struct {
			TypeHashes []struct {
				TypeName   string `json:"type_name"`
				HashString string `json:"hash_string"`
			} `json:"type_hashes"`
		}
		if err := json.Unmarshal(b, &desc); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		found := false
		for _, h := range desc.TypeHashes {
			if h.TypeName == typ {
				found = true
				if h.HashString != TypeHash(typ) {
					t.Errorf("%s: table %s, %s says %s", typ, TypeHash(typ), file, h.HashString)
				}
			}
		}
		if !found {
			t.Errorf("%s: not in %s", typ, file)
		}
	}
}

func TestUserData(t *testing.T) {
	const h = "RIHS01_000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	for _, c := range []struct {
		ud, key, want string
	}{
		{"foo=bar;typehash=" + h + ";key=value;", "typehash", h},
		{"foo=bar;typehash=" + h + ";key=value;", "key", "value"},
		{"serviceid=a.b.c;typehash=" + h + ";", "serviceid", "a.b.c"},
		{"enclave=/;", "typehash", ""},
		{"typehash=x", "typehash", "x"}, // no final ;
		{"", "typehash", ""},
		{";;=;a", "a", ""},
	} {
		if got := UserDataValue([]byte(c.ud), c.key); got != c.want {
			t.Errorf("UserDataValue(%q, %q) = %q, want %q", c.ud, c.key, got, c.want)
		}
	}
	if got := TypeHashOf([]byte("typehash=RIHS01_00;")); got != "" {
		t.Errorf("a short hash was accepted: %q", got)
	}
	if got := TypeHashOf([]byte("typehash=" + strings.ToUpper(h) + ";")); got != "" {
		t.Errorf("an upper-case hash was accepted: %q", got)
	}
	if got := UserDataTypeHash(TypeHash(Clock)); got != "typehash="+TypeHash(Clock)+";" {
		t.Errorf("UserDataTypeHash: %q", got)
	}
	if got := UserDataTypeHash(""); got != "" {
		t.Errorf("UserDataTypeHash of no hash: %q", got)
	}
	for _, typ := range TypeHashes() {
		if !ValidTypeHash(TypeHash(typ)) {
			t.Errorf("%s: %q is not a RIHS01 hash", typ, TypeHash(typ))
		}
		if _, err := DDSType(typ); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
}
