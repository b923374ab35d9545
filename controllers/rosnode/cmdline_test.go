package rosnode

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestParseCommandLine(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    func(string) string
		want   commandLine
		topics map[string]string // name → topic
	}{{
		name: "defaults",
		env:  env(),
		want: commandLine{name: "pd", namespace: "/", master: "127.0.0.1:11311", host: "127.0.0.1", remaps: map[string]string{}},
		topics: map[string]string{
			"joint_states": "/joint_states", "/clock": "/clock", "~x": "/pd/x",
		},
	}, {
		name: "the brief's command line",
		args: []string{"pd.go", "__ns:=/arm", "_rate:=100", "/clock:=/tcs/pd/clock"},
		env:  env("ROS_MASTER_URI", "http://127.0.0.1:40000/", "ROS_HOSTNAME", "127.0.0.1"),
		want: commandLine{
			name: "pd", namespace: "/arm", master: "127.0.0.1:40000", host: "127.0.0.1",
			params: []param{{"/arm/pd/rate", 100}},
			remaps: map[string]string{"/clock": "/tcs/pd/clock"},
		},
		topics: map[string]string{
			"joint_states": "/arm/joint_states", "command": "/arm/command", "/clock": "/tcs/pd/clock",
		},
	}, {
		name: "special keys beat the environment",
		args: []string{"__name:=ctl", "__ns:=robots/arm/", "__master:=http://localhost:1234", "__ip:=10.0.0.2", "__log:=/tmp/x.log"},
		env:  env("ROS_MASTER_URI", "http://other:1", "ROS_NAMESPACE", "/ns", "ROS_IP", "10.0.0.1"),
		want: commandLine{name: "ctl", namespace: "/robots/arm", master: "localhost:1234", host: "10.0.0.2", remaps: map[string]string{}},
		topics: map[string]string{
			"command": "/robots/arm/command", "~rate": "/robots/arm/ctl/rate",
		},
	}, {
		name: "ROS_NAMESPACE and ROS_HOSTNAME over ROS_IP",
		env:  env("ROS_NAMESPACE", "arm", "ROS_HOSTNAME", "robot.local", "ROS_IP", "10.0.0.1"),
		want: commandLine{name: "pd", namespace: "/arm", master: "127.0.0.1:11311", host: "robot.local", remaps: map[string]string{}},
	}, {
		name: "remaps resolve both sides in the namespace; the last one wins",
		args: []string{"__ns:=/arm", "joint_states:=state", "command:=/x", "command:=/effort", "~in:=raw", "plain-arg"},
		env:  env(),
		want: commandLine{name: "pd", namespace: "/arm", master: "127.0.0.1:11311", host: "127.0.0.1", remaps: map[string]string{
			"/arm/joint_states": "/arm/state", "/arm/command": "/effort", "/arm/pd/in": "/arm/raw",
		}},
		topics: map[string]string{
			"joint_states": "/arm/state", "/arm/joint_states": "/arm/state", "command": "/effort", "~in": "/arm/raw",
		},
	}, {
		name: "parameter types",
		args: []string{"_i:=7", "_f:=0.5", "_e:=1e3", "_b:=True", "_s:=abc", "_big:=3000000000"},
		env:  env(),
		want: commandLine{name: "pd", namespace: "/", master: "127.0.0.1:11311", host: "127.0.0.1", remaps: map[string]string{},
			params: []param{{"/pd/i", 7}, {"/pd/f", 0.5}, {"/pd/e", 1000.0}, {"/pd/b", true}, {"/pd/s", "abc"}, {"/pd/big", 3e9}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCommandLine(tt.args, tt.env, "pd")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
			for name, want := range tt.topics {
				if topic, err := got.topic(name); err != nil || topic != want {
					t.Errorf("topic(%q) = %q, %v; want %q", name, topic, err, want)
				}
			}
		})
	}
}

func TestParseCommandLineErrors(t *testing.T) {
	tests := []struct {
		args []string
		env  func(string) string
		want string
	}{
		{[]string{"__name:=a/b"}, env(), `node name "a/b"`},
		{[]string{"__name:="}, env(), `node name ""`},
		{[]string{"__name:=1pd"}, env(), `node name "1pd"`},
		{[]string{"__ns:=/a b"}, env(), `namespace "/a b"`},
		{[]string{"__master:=127.0.0.1:11311"}, env(), `master URI "127.0.0.1:11311"`},
		{nil, env("ROS_MASTER_URI", "http://127.0.0.1"), `want http://host:port`},
		{nil, env("ROS_MASTER_URI", "http://[::1"), `master URI "http://[::1"`},
		{[]string{"/clock:="}, env(), `remap /clock:=: invalid name ""`},
		{[]string{"a-b:=c"}, env(), `remap a-b:=c: invalid name "a-b"`},
		{[]string{"_x/~y:=1"}, env(), `parameter _x/~y:=1`},
	}
	for _, tt := range tests {
		_, err := parseCommandLine(tt.args, tt.env, "pd")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseCommandLine(%q): error %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}

func TestCheckGoroslib(t *testing.T) {
	tests := []struct {
		args, osArgs []string
		rosNamespace string
		want         string // "" for no error
	}{
		{[]string{"__ns:=/arm", "/clock:=/tcs/pd/clock"}, []string{"gonode", "__ns:=/arm", "/clock:=/tcs/pd/clock"}, "", ""},
		{[]string{"__ns:=/arm"}, []string{"tcs.test", "-test.v"}, "", ""},
		{[]string{"__ns:=/arm"}, []string{"tcs.test"}, "/arm", ""},
		{[]string{"__ns:=/arm", "/clock:=sim"}, []string{"x", "/clock:=sim"}, "", ""},
		// RunPD in-process with a remap os.Args lacks: goroslib would follow /clock.
		{[]string{"/clock:=/tcs/pd/clock"}, []string{"tcs.test"}, "", "goroslib takes the /clock remap only from"},
		// goroslib uses the first /clock remap in os.Args, roscpp the last.
		{[]string{"/clock:=/a", "/clock:=/b"}, []string{"x", "/clock:=/a", "/clock:=/b"}, "", "where it is /a"},
		// ROS resolves "clock" in the root namespace to /clock; goroslib matches strings.
		{[]string{"clock:=/a"}, []string{"x", "clock:=/a"}, "", "the clock topic is /a"},
		{[]string{"__ns:=/arm"}, []string{"x"}, "/other", "ROS_NAMESPACE=/other"},
		{[]string{"__ns:=/arm"}, []string{"x"}, "arm", "ROS_NAMESPACE=arm"},
	}
	for _, tt := range tests {
		cl, err := parseCommandLine(tt.args, env(), "pd")
		if err != nil {
			t.Fatal(err)
		}
		err = cl.checkGoroslib(tt.osArgs, tt.rosNamespace)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("args %q, os.Args %q, ROS_NAMESPACE %q: error %v, want %q", tt.args, tt.osArgs, tt.rosNamespace, err, tt.want)
		}
	}
}

// RunPD refuses bad input before it talks to any master.
func TestRunPDBadCommandLine(t *testing.T) {
	if os.Getenv("ROS_NAMESPACE") != "" {
		t.Skip("ROS_NAMESPACE is set")
	}
	for _, args := range [][]string{
		{"__name:=a/b"},
		{"__master:=nonsense"},
		{"/clock:=/tcs/pd/clock"}, // not in the test binary's os.Args
	} {
		if err := RunPD(context.Background(), args, nil); err == nil {
			t.Errorf("RunPD(%q): no error", args)
		}
	}
}
