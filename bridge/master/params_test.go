package master

import (
	"errors"
	"reflect"
	"testing"
)

func TestParamTree(t *testing.T) {
	p := newParamTree()
	mustSet := func(key string, v any) {
		t.Helper()
		if err := p.set(key, v); err != nil {
			t.Fatalf("set %s: %v", key, err)
		}
	}
	mustSet("/a/b/c", 1)
	mustSet("/a/d", "x")
	if v, err := p.get("/a"); err != nil || !reflect.DeepEqual(v, map[string]any{"b": map[string]any{"c": 1}, "d": "x"}) {
		t.Fatalf("get /a = %v, %v", v, err)
	}
	if v, err := p.get("/a/b/c/"); err != nil || v != 1 {
		t.Fatalf("get /a/b/c/ = %v, %v", v, err)
	}
	// A leaf in the way becomes a namespace.
	mustSet("/a/d/e", true)
	if v, _ := p.get("/a/d"); !reflect.DeepEqual(v, map[string]any{"e": true}) {
		t.Fatalf("/a/d = %v", v)
	}
	// A map replaces the namespace.
	mustSet("/a", map[string]any{"z": 2.5})
	if p.has("/a/b") || !p.has("/a/z") {
		t.Fatalf("after dict set: %v", p.root)
	}
	if got, want := p.names(), []string{"/a/z"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}
	if _, err := p.get("/a/z/deeper"); !errors.Is(err, errParamNotSet) {
		t.Fatalf("get under a leaf: %v", err)
	}
	if err := p.delete("/a/z"); err != nil {
		t.Fatal(err)
	}
	if err := p.delete("/a/z"); !errors.Is(err, errParamNotSet) {
		t.Fatalf("second delete: %v", err)
	}
	if err := p.delete("/"); err == nil {
		t.Fatal("deleted the root")
	}
	if err := p.set("/", 3); !errors.Is(err, errRootNotDict) {
		t.Fatalf("set / to a leaf: %v", err)
	}
	mustSet("/", map[string]any{"r": 1})
	if v, _ := p.get("/"); !reflect.DeepEqual(v, map[string]any{"r": 1}) {
		t.Fatalf("root = %v", v)
	}
}

func TestParamSearch(t *testing.T) {
	p := newParamTree()
	for _, k := range []string{"/robot_description/arm", "/robot_description/base", "/pr2/robot_description/base", "/pr2/foo/own", "/x"} {
		if err := p.set(k, 1); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ ns, key, want string }{
		{"/pr2/foo", "robot_description", "/pr2/robot_description"},
		{"/pr2/foo", "robot_description/arm", "/pr2/robot_description/arm"},
		{"/other/node", "robot_description", "/robot_description"},
		{"/pr2/foo", "own", "/pr2/foo/own"}, // the caller's private namespace first
		{"/a/b/c", "x", "/x"},
		{"/a/b/c", "missing", ""},
		{"/a", "/x", "/x"},
		{"/a", "/missing", ""},
	}
	for _, tt := range tests {
		got, err := p.search(tt.ns, tt.key)
		if err != nil || got != tt.want {
			t.Errorf("search(%q, %q) = %q, %v; want %q", tt.ns, tt.key, got, err, tt.want)
		}
	}
	for _, bad := range [][2]string{{"/a", "~x"}, {"/a", ""}, {"a", "x"}} {
		if _, err := p.search(bad[0], bad[1]); err == nil {
			t.Errorf("search(%q, %q): no error", bad[0], bad[1])
		}
	}
}

func TestParamUpdates(t *testing.T) {
	a := func(id string) registration { return registration{callerID: id, api: "http://" + id + "/"} }
	up := func(id, key string, v any) action {
		return paramUpdate{API: "http://" + id + "/", CallerID: id, Key: key, Value: v}
	}
	subs := map[string][]registration{
		"/":        {a("root")},
		"/a/":      {a("na"), a("setter")},
		"/a/b/":    {a("nb")},
		"/a/b/c/":  {a("nc")},
		"/other/":  {a("no")},
		"/a/gone/": {a("ng")},
	}
	tests := []struct {
		name   string
		key    string
		value  any
		ignore string
		want   []action
	}{
		{"leaf under a", "/a/b/c", 5, "setter", []action{
			up("root", "/a/b/c/", 5), up("na", "/a/b/c/", 5), up("nb", "/a/b/c/", 5), up("nc", "/a/b/c/", 5),
		}},
		{"dict at a", "/a", map[string]any{"b": map[string]any{"c": 7}}, "", []action{
			up("root", "/a/", map[string]any{"b": map[string]any{"c": 7}}),
			up("na", "/a/", map[string]any{"b": map[string]any{"c": 7}}),
			up("setter", "/a/", map[string]any{"b": map[string]any{"c": 7}}),
			up("ng", "/a/gone/", map[string]any{}), // no longer there: deleted
			up("nb", "/a/b/", map[string]any{"c": 7}),
			up("nc", "/a/b/c/", 7),
		}},
		{"deletion", "/other", map[string]any{}, "", []action{
			up("root", "/other/", map[string]any{}), up("no", "/other/", map[string]any{}),
		}},
		{"unrelated", "/zzz", 1, "", []action{up("root", "/zzz/", 1)}},
	}
	for _, tt := range tests {
		got := paramUpdates(subs, tt.key, tt.value, tt.ignore)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", tt.name, got, tt.want)
		}
	}
	if got := paramUpdates(nil, "/a", 1, ""); got != nil {
		t.Errorf("no subscribers: %v", got)
	}
	// Keys that are not names inside a map value do not crash.
	paramUpdates(subs, "/a", map[string]any{"/abs": 1, "": 2, "b/c": map[string]any{}}, "")
}
