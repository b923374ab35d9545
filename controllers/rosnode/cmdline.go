package rosnode

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Defaults where neither the command line nor the environment says.
const (
	defaultMasterURI = "http://127.0.0.1:11311"
	defaultHost      = "127.0.0.1"
)

// commandLine is a ROS 1 command line (and the ROS_* environment) read the
// way roscpp reads it. Every name in it is resolved: absolute, no trailing
// slash.
type commandLine struct {
	name      string            // the node's base name, without slashes
	namespace string            // "/" or "/a/b"
	master    string            // the master's host:port
	host      string            // the host or IP other nodes reach this node at
	params    []param           // private parameters (_key:=value), in order
	remaps    map[string]string // resolved name → resolved name
}

// param is a parameter set from the command line.
type param struct {
	key   string // resolved, e.g. /arm/pd/rate
	value any    // int, float64, bool or string
}

// parseCommandLine reads the ROS arguments in args (those holding ":=";
// others are ignored, as roscpp and rospy ignore them) and the ROS_*
// variables getenv returns. name is the node's name unless __name:= says
// otherwise. Special keys other than __name, __ns, __master, __ip and
// __hostname (such as __log) are ignored. As in roscpp, a later remap of
// the same name replaces an earlier one.
func parseCommandLine(args []string, getenv func(string) string, name string) (*commandLine, error) {
	special := map[string]string{}
	var params, remaps [][2]string
	for _, a := range args {
		key, value, ok := strings.Cut(a, ":=")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(key, "__"):
			special[key] = value
		case strings.HasPrefix(key, "_"):
			params = append(params, [2]string{key[1:], value})
		default:
			remaps = append(remaps, [2]string{key, value})
		}
	}
	cl := &commandLine{name: name, remaps: map[string]string{}}
	if v, ok := special["__name"]; ok {
		cl.name = v
	}
	if !validBaseName(cl.name) {
		return nil, fmt.Errorf("node name %q: want a letter, then letters, digits or _", cl.name)
	}

	ns, ok := special["__ns"]
	if !ok {
		ns = getenv("ROS_NAMESPACE")
	}
	var err error
	if cl.namespace, err = normalizeNamespace(ns); err != nil {
		return nil, err
	}

	uri, ok := special["__master"]
	if !ok {
		if uri = getenv("ROS_MASTER_URI"); uri == "" {
			uri = defaultMasterURI
		}
	}
	if cl.master, err = masterAddress(uri); err != nil {
		return nil, err
	}

	cl.host = firstNonEmpty(special["__hostname"], special["__ip"], getenv("ROS_HOSTNAME"), getenv("ROS_IP"), defaultHost)

	for _, r := range remaps {
		from, err := cl.resolve(r[0])
		if err != nil {
			return nil, fmt.Errorf("remap %s:=%s: %w", r[0], r[1], err)
		}
		to, err := cl.resolve(r[1])
		if err != nil {
			return nil, fmt.Errorf("remap %s:=%s: %w", r[0], r[1], err)
		}
		cl.remaps[from] = to
	}
	for _, p := range params {
		key, err := cl.resolve("~" + p[0])
		if err != nil {
			return nil, fmt.Errorf("parameter _%s:=%s: %w", p[0], p[1], err)
		}
		cl.params = append(cl.params, param{key: key, value: paramValue(p[1])})
	}
	return cl, nil
}

// fullName is the node's resolved name, e.g. /arm/pd.
func (cl *commandLine) fullName() string {
	return join(cl.namespace, cl.name)
}

// resolve makes name absolute: /a stays, ~a is under the node's name, a is
// under the node's namespace. It does not apply remaps.
func (cl *commandLine) resolve(name string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("invalid name %q: want a letter, / or ~, then letters, digits, _ or /", name)
	}
	switch name[0] {
	case '/':
		return clean(name), nil
	case '~':
		return clean(join(cl.fullName(), name[1:])), nil
	}
	return clean(join(cl.namespace, name)), nil
}

// topic resolves name and applies the remaps: the name the node uses.
func (cl *commandLine) topic(name string) (string, error) {
	r, err := cl.resolve(name)
	if err != nil {
		return "", err
	}
	if to, ok := cl.remaps[r]; ok {
		return to, nil
	}
	return r, nil
}

// checkGoroslib reports where goroslib v2.1.5, which reads os.Args and
// ROS_NAMESPACE itself, would disagree with cl: on the topic of the
// simulated clock (remapped only by a literal "/clock:=..." in osArgs, the
// first one winning) or on the namespace (a non-empty ROS_NAMESPACE replaces
// NodeConf.Namespace).
func (cl *commandLine) checkGoroslib(osArgs []string, rosNamespace string) error {
	if rosNamespace != "" && rosNamespace != cl.namespace {
		return fmt.Errorf("namespace %s, but ROS_NAMESPACE=%s, which goroslib puts first: unset ROS_NAMESPACE or make it %s",
			cl.namespace, rosNamespace, cl.namespace)
	}
	want, err := cl.topic("/clock")
	if err != nil {
		return err
	}
	got := "/clock"
	for _, a := range osArgs {
		if kv := strings.Split(a, ":="); len(kv) == 2 && kv[0] == "/clock" {
			got = kv[1]
			break
		}
	}
	if got != "" && got[0] != '/' {
		got = join(cl.namespace, got)
	}
	if got != want {
		return fmt.Errorf("the clock topic is %s, but goroslib takes the /clock remap only from the process's "+
			"arguments (os.Args), where it is %s: run RunPD on the process's own command line (os.Args[1:])",
			want, got)
	}
	return nil
}

// masterAddress is the host:port of a master URI such as
// http://127.0.0.1:11311/.
func masterAddress(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("master URI %q: %w", uri, err)
	}
	if u.Scheme != "http" || u.Hostname() == "" || u.Port() == "" {
		return "", fmt.Errorf("master URI %q: want http://host:port", uri)
	}
	return net.JoinHostPort(u.Hostname(), u.Port()), nil
}

// normalizeNamespace makes ns absolute without a trailing slash, as roscpp
// does: "" and "/" are the root, "arm/" is /arm.
func normalizeNamespace(ns string) (string, error) {
	if ns == "" {
		return "/", nil
	}
	if ns[0] != '/' {
		ns = "/" + ns
	}
	ns = clean(ns)
	if ns != "/" && !validName(ns) {
		return "", fmt.Errorf("namespace %q: want letters, digits, _ and /", ns)
	}
	return ns, nil
}

// paramValue types a command-line parameter value as roscpp does: an int
// (32 bits, XML-RPC's), else a float, else a bool (true or false), else a
// string.
func paramValue(s string) any {
	if i, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int(i)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	}
	return s
}

// validName reports whether s is a ROS graph resource name: a letter, / or
// ~ first, then letters, digits, _ and /.
func validName(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !isLetter(c) && c != '/' && c != '~' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '_' && c != '/' {
			return false
		}
	}
	return true
}

// validBaseName reports whether s is a name without a namespace.
func validBaseName(s string) bool {
	return validName(s) && isLetter(s[0]) && !strings.Contains(s, "/")
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// join puts name under namespace ns.
func join(ns, name string) string {
	if ns == "/" {
		return "/" + name
	}
	return ns + "/" + name
}

// clean collapses repeated slashes and drops a trailing one.
func clean(name string) string {
	for strings.Contains(name, "//") {
		name = strings.ReplaceAll(name, "//", "/")
	}
	if len(name) > 1 {
		name = strings.TrimSuffix(name, "/")
	}
	return name
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
