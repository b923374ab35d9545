package master

import "strings"

// ROS graph resource names, resolved as rosgraph.names does (the rules
// rosmaster applies to the names its callers send).

// canonicalName removes empty segments and the trailing slash: "//a/b/" is
// "/a/b". "" and "/" are returned as they are.
func canonicalName(name string) string {
	if name == "" || name == "/" {
		return name
	}
	var parts []string
	for _, p := range strings.Split(name, "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if name[0] == '/' {
		return "/" + strings.Join(parts, "/")
	}
	return strings.Join(parts, "/")
}

// namespaceOf returns the namespace of name with a trailing slash:
// "/wg/node1" is in "/wg/", "/node" and "node" are in "/".
func namespaceOf(name string) string {
	if name == "" {
		return "/"
	}
	name = strings.TrimSuffix(name, "/")
	i := strings.LastIndex(name, "/")
	if i <= 0 {
		return "/"
	}
	return name[:i+1]
}

// resolveName resolves name for the node nodeName: global names stay,
// ~private names go under the node, relative names go in the node's
// namespace. The empty name resolves to the node's namespace.
func resolveName(name, nodeName string) string {
	if name == "" {
		return namespaceOf(nodeName)
	}
	name = canonicalName(name)
	switch name[0] {
	case '/':
		return name
	case '~':
		return canonicalName(nodeName + "/" + name[1:])
	}
	return namespaceOf(nodeName) + name
}

// joinName joins a namespace and a name; global and private names are not
// joined.
func joinName(ns, name string) string {
	if strings.HasPrefix(name, "~") || strings.HasPrefix(name, "/") {
		return name
	}
	switch {
	case ns == "~":
		return "~" + name
	case ns == "":
		return name
	case strings.HasSuffix(ns, "/"):
		return ns + name
	}
	return ns + "/" + name
}

// nameSegments returns the non-empty segments of name.
func nameSegments(name string) []string {
	var out []string
	for _, p := range strings.Split(name, "/") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
