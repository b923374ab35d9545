package master

import (
	"reflect"
	"strings"
	"testing"
)

// step is one call on the state and what it must answer.
type step struct {
	method string
	params []any
	code   int
	status string // a substring of the status; "" to not check
	value  any    // nil to not check
	acts   []action
}

func runSteps(t *testing.T, s *state, steps []step) {
	t.Helper()
	for i, st := range steps {
		r, acts, f := s.call(st.method, st.params)
		if f != nil {
			t.Fatalf("step %d %s%v: fault %v", i, st.method, st.params, f)
		}
		if r.Code != st.code || !strings.Contains(r.Status, st.status) {
			t.Errorf("step %d %s%v: reply %d %q, want %d containing %q", i, st.method, st.params, r.Code, r.Status, st.code, st.status)
		}
		if st.value != nil && !reflect.DeepEqual(r.Value, st.value) {
			t.Errorf("step %d %s%v: value %#v, want %#v", i, st.method, st.params, r.Value, st.value)
		}
		if !reflect.DeepEqual(acts, st.acts) {
			t.Errorf("step %d %s%v: actions\n got %v\nwant %v", i, st.method, st.params, acts, st.acts)
		}
	}
}

const (
	apiA = "http://a:1/"
	apiB = "http://b:2/"
	apiC = "http://c:3/"
)

func TestStateTopics(t *testing.T) {
	s := newState("http://m:11311/", 42)
	runSteps(t, s, []step{
		{method: "getUri", params: []any{"/x"}, code: 1, value: "http://m:11311/"},
		{method: "getPid", params: []any{"/x"}, code: 1, value: 42},
		// A subscriber first: no publishers yet.
		{method: "registerSubscriber", params: []any{"/b", "chatter", "std_msgs/String", apiB}, code: 1,
			status: "Subscribed to [/chatter]", value: []string{}},
		// A publisher: the subscriber hears of it.
		{method: "registerPublisher", params: []any{"/a", "/chatter", "std_msgs/String", apiA}, code: 1,
			value: []string{apiB}, acts: []action{publisherUpdate{apiB, "/chatter", []string{apiA}}}},
		// Registering again changes nothing but still tells subscribers.
		{method: "registerPublisher", params: []any{"/a", "/chatter", "*", apiA}, code: 1,
			value: []string{apiB}, acts: []action{publisherUpdate{apiB, "/chatter", []string{apiA}}}},
		{method: "registerSubscriber", params: []any{"/ns/c", "~priv", "*", apiC}, code: 1, value: []string{}},
		{method: "getSystemState", params: []any{"/x"}, code: 1, value: []any{
			[]any{[]any{"/chatter", []string{"/a"}}},
			[]any{[]any{"/chatter", []string{"/b"}}, []any{"/ns/c/priv", []string{"/ns/c"}}},
			[]any{},
		}},
		{method: "getPublishedTopics", params: []any{"/x", ""}, code: 1, value: []any{[]any{"/chatter", "std_msgs/String"}}},
		{method: "getPublishedTopics", params: []any{"/x", "/other"}, code: 1, value: []any{}},
		{method: "getTopicTypes", params: []any{"/x"}, code: 1, value: []any{[]any{"/chatter", "std_msgs/String"}}},
		{method: "lookupNode", params: []any{"/x", "/a"}, code: 1, value: apiA},
		{method: "lookupNode", params: []any{"/x", "nobody"}, code: -1, status: "unknown node [/nobody]", value: ""},
		// Unregistering with another API is a no-op.
		{method: "unregisterPublisher", params: []any{"/a", "/chatter", apiB}, code: 1, value: 0},
		{method: "unregisterPublisher", params: []any{"/a", "/chatter", apiA}, code: 1, value: 1,
			acts: []action{publisherUpdate{apiB, "/chatter", []string{}}}},
		{method: "lookupNode", params: []any{"/x", "/a"}, code: -1, value: ""},
		{method: "unregisterPublisher", params: []any{"/a", "/chatter", apiA}, code: 1, status: "not a registered node", value: 0},
		{method: "unregisterSubscriber", params: []any{"/b", "/chatter", apiB}, code: 1, value: 1},
		// Types stay known after their topics went.
		{method: "getTopicTypes", params: []any{"/x"}, code: 1, value: []any{[]any{"/chatter", "std_msgs/String"}}},
	})
}

func TestStateNodeReplaced(t *testing.T) {
	s := newState("http://m:11311/", 1)
	runSteps(t, s, []step{
		{method: "registerSubscriber", params: []any{"/sub", "/t", "std_msgs/Int32", apiC}, code: 1},
		{method: "registerPublisher", params: []any{"/n", "/t", "std_msgs/Int32", apiA}, code: 1,
			acts: []action{publisherUpdate{apiC, "/t", []string{apiA}}}},
		{method: "registerService", params: []any{"/n", "/n/srv", "rosrpc://a:9", apiA}, code: 1},
		// The same name from another API: the old node is shut down, its
		// registrations go, and the topic's subscribers hear of it.
		{method: "registerSubscriber", params: []any{"/n", "/u", "std_msgs/Int32", apiB}, code: 1, acts: []action{
			shutdownNode{apiA, "/n", "new node registered with same name"},
			publisherUpdate{apiC, "/t", []string{}},
		}},
		{method: "lookupService", params: []any{"/x", "/n/srv"}, code: -1, value: ""},
		{method: "lookupNode", params: []any{"/x", "/n"}, code: 1, value: apiB},
	})
}

func TestStateServices(t *testing.T) {
	s := newState("http://m:11311/", 1)
	runSteps(t, s, []step{
		{method: "registerService", params: []any{"/a", "add", "rosrpc://a:9", apiA}, code: 1, value: 1},
		{method: "lookupService", params: []any{"/x", "/add"}, code: 1, value: "rosrpc://a:9"},
		// A newer provider replaces the first.
		{method: "registerService", params: []any{"/b", "/add", "rosrpc://b:9", apiB}, code: 1},
		{method: "lookupService", params: []any{"/x", "add"}, code: 1, value: "rosrpc://b:9"},
		{method: "lookupNode", params: []any{"/x", "/a"}, code: -1},
		{method: "unregisterService", params: []any{"/b", "/add", "rosrpc://a:9"}, code: 1, status: "no longer the current", value: 0},
		{method: "getSystemState", params: []any{"/x"}, code: 1, value: []any{
			[]any{}, []any{}, []any{[]any{"/add", []string{"/b"}}},
		}},
		{method: "unregisterService", params: []any{"/b", "/add", "rosrpc://b:9"}, code: 1, value: 1},
		{method: "lookupService", params: []any{"/x", "/add"}, code: -1, status: "no provider"},
		{method: "lookupNode", params: []any{"/x", "/b"}, code: -1},
	})
}

func TestStateParams(t *testing.T) {
	s := newState("http://m:11311/", 1)
	runSteps(t, s, []step{
		{method: "setParam", params: []any{"/ns/node", "~p", 1}, code: 1, status: "parameter /ns/node/p set"},
		{method: "setParam", params: []any{"/ns/node", "rel", "x"}, code: 1, status: "/ns/rel"},
		{method: "setParam", params: []any{"/n", "/cfg", map[string]any{"gains": map[string]any{"p": 1.5}, "on": true}}, code: 1},
		{method: "getParam", params: []any{"/n", "/cfg/gains/p"}, code: 1, value: 1.5},
		{method: "getParam", params: []any{"/n", "cfg"}, code: 1, value: map[string]any{"gains": map[string]any{"p": 1.5}, "on": true}},
		{method: "getParam", params: []any{"/n", "/missing"}, code: -1, status: "Parameter [/missing] is not set", value: 0},
		{method: "hasParam", params: []any{"/ns/node", "rel"}, code: 1, status: "/ns/rel", value: true},
		{method: "hasParam", params: []any{"/n", "/nope"}, code: 1, value: false},
		{method: "getParamNames", params: []any{"/n"}, code: 1, value: []string{"/cfg/gains/p", "/cfg/on", "/ns/node/p", "/ns/rel"}},
		{method: "searchParam", params: []any{"/ns/node", "rel"}, code: 1, value: "/ns/rel"},
		{method: "searchParam", params: []any{"/ns/node", "cfg/gains"}, code: 1, value: "/cfg/gains"},
		{method: "searchParam", params: []any{"/ns/node", "zzz"}, code: -1, value: ""},
		{method: "searchParam", params: []any{"/ns/node", "~p"}, code: 0, status: "invalid key"},
		{method: "deleteParam", params: []any{"/n", "/cfg/on"}, code: 1, status: "deleted"},
		{method: "deleteParam", params: []any{"/n", "/cfg/on"}, code: -1, status: "is not set"},
		{method: "deleteParam", params: []any{"/n", "/"}, code: -1},
		{method: "setParam", params: []any{"/n", "/", 3}, code: -1, status: "non-dictionary"},
		// Subscriptions: the current value, or {} when unset.
		{method: "subscribeParam", params: []any{"/s", apiB, "/cfg/gains"}, code: 1, value: map[string]any{"p": 1.5}},
		{method: "subscribeParam", params: []any{"/s", apiB, "/later"}, code: 1, value: map[string]any{}},
		{method: "setParam", params: []any{"/n", "/cfg/gains/p", 2.0}, code: 1,
			acts: []action{paramUpdate{apiB, "/s", "/cfg/gains/p/", 2.0}}},
		// The setter is not told of its own change.
		{method: "setParam", params: []any{"/s", "/cfg/gains/p", 3.0}, code: 1},
		{method: "deleteParam", params: []any{"/n", "/cfg"}, code: 1,
			acts: []action{paramUpdate{apiB, "/s", "/cfg/gains/", map[string]any{}}}},
		{method: "lookupNode", params: []any{"/x", "/s"}, code: 1, value: apiB},
		{method: "unsubscribeParam", params: []any{"/s", apiB, "/cfg/gains"}, code: 1, value: 1},
		{method: "unsubscribeParam", params: []any{"/s", apiB, "/cfg/gains"}, code: 1, value: 0},
		{method: "unsubscribeParam", params: []any{"/s", apiB, "later/"}, code: 1, value: 1},
		{method: "lookupNode", params: []any{"/x", "/s"}, code: -1},
		{method: "setParam", params: []any{"/n", "/cfg/gains/p", 4.0}, code: 1},
	})
}

func TestStateBadArguments(t *testing.T) {
	s := newState("http://m:11311/", 1)
	runSteps(t, s, []step{
		{method: "getSystemState", params: []any{}, code: -1, status: "missing required caller_id", value: []any{[]any{}, []any{}, []any{}}},
		{method: "getSystemState", params: []any{"/x", "extra"}, code: -1, status: "bad call arity"},
		{method: "getUri", params: []any{7}, code: -1, status: "caller_id must be a string", value: ""},
		{method: "registerPublisher", params: []any{"/a", "", "std_msgs/String", apiA}, code: -1, status: "[topic] must be a non-empty string", value: []any{}},
		{method: "registerPublisher", params: []any{"/a", "/", "std_msgs/String", apiA}, code: -1, status: "global namespace"},
		{method: "registerPublisher", params: []any{"/a", "http://x", "std_msgs/String", apiA}, code: -1, status: "illegal chars"},
		{method: "registerPublisher", params: []any{"/a", "/t", "String", apiA}, code: -1, status: "package resource name"},
		{method: "registerPublisher", params: []any{"/a", "/t", 5, apiA}, code: -1, status: "non-empty string"},
		{method: "registerPublisher", params: []any{"/a", "/t", "std_msgs/String", "ftp://x"}, code: -1, status: "not an RPC URI"},
		{method: "registerService", params: []any{"/a", "/s", "", apiA}, code: -1, status: "not an XMLRPC URI", value: 0},
		{method: "setParam", params: []any{"/a", "", 1}, code: -1, status: "must be specified and non-empty", value: 0},
		{method: "setParam", params: []any{"/a", 3, 1}, code: -1, status: "must be a string"},
		{method: "setParam", params: []any{"/a", "/k", nil}, code: -1, status: "[value] must be specified"},
		{method: "hasParam", params: []any{"/a", ""}, code: -1, value: false},
		{method: "getPublishedTopics", params: []any{"/a", 3}, code: -1, status: "must be a string", value: 0},
		{method: "shutdown", params: []any{"/a", "bye"}, code: 0},
	})
	if _, _, f := s.call("noSuchMethod", []any{"/a"}); f == nil || f.Code != faultMethodNotFound {
		t.Errorf("unknown method: fault %v", f)
	}
}

func TestStateMulticall(t *testing.T) {
	s := newState("http://m:11311/", 1)
	val, _, f := s.dispatch("system.multicall", []any{[]any{
		map[string]any{"methodName": "setParam", "params": []any{"/l", "/a", 1}},
		map[string]any{"methodName": "getParam", "params": []any{"/l", "/a"}},
		map[string]any{"methodName": "nope", "params": []any{}},
		"not a struct",
		map[string]any{"methodName": "system.multicall", "params": []any{}},
	}})
	if f != nil {
		t.Fatal(f)
	}
	got := val.([]any)
	if len(got) != 5 {
		t.Fatalf("%d results: %v", len(got), got)
	}
	if !reflect.DeepEqual(got[1], []any{[]any{1, "Parameter [/a]", 1}}) {
		t.Errorf("getParam result %v", got[1])
	}
	for i := 2; i < 5; i++ {
		if m, ok := got[i].(map[string]any); !ok || m["faultCode"] == nil {
			t.Errorf("result %d is not a fault: %v", i, got[i])
		}
	}
	for _, bad := range [][]any{{}, {"x"}, {[]any{}, 1}} {
		if _, _, f := s.dispatch("system.multicall", bad); f == nil {
			t.Errorf("multicall %v: no fault", bad)
		}
	}
}
