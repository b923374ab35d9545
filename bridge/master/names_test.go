package master

import "testing"

func TestResolveName(t *testing.T) {
	tests := []struct{ name, node, want string }{
		{"", "/node", "/"},
		{"", "/a/b/node", "/a/b/"},
		{"/x", "/a/node", "/x"},
		{"//x//y/", "/a/node", "/x/y"},
		{"x", "/a/node", "/a/x"},
		{"x/y", "/node", "/x/y"},
		{"x", "node", "/x"},
		{"~x", "/a/node", "/a/node/x"},
		{"~x/y/", "/a/node", "/a/node/x/y"},
		{"~", "/a/node", "/a/node"},
		{"/", "/a/node", "/"},
	}
	for _, tt := range tests {
		if got := resolveName(tt.name, tt.node); got != tt.want {
			t.Errorf("resolveName(%q, %q) = %q, want %q", tt.name, tt.node, got, tt.want)
		}
	}
}

func TestNamespaceOf(t *testing.T) {
	tests := []struct{ name, want string }{
		{"", "/"}, {"/", "/"}, {"/node", "/"}, {"node", "/"},
		{"/wg/node1", "/wg/"}, {"/wg/node1/", "/wg/"}, {"a/b", "a/"},
	}
	for _, tt := range tests {
		if got := namespaceOf(tt.name); got != tt.want {
			t.Errorf("namespaceOf(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCanonicalAndJoin(t *testing.T) {
	canon := []struct{ name, want string }{
		{"", ""}, {"/", "/"}, {"//", "/"}, {"/a//b/", "/a/b"}, {"a//b/", "a/b"}, {"~a/", "~a"},
	}
	for _, tt := range canon {
		if got := canonicalName(tt.name); got != tt.want {
			t.Errorf("canonicalName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	join := []struct{ ns, name, want string }{
		{"/", "a", "/a"}, {"/a", "b", "/a/b"}, {"/a/", "b", "/a/b"}, {"", "b", "b"},
		{"~", "b", "~b"}, {"/a", "/b", "/b"}, {"/a", "~b", "~b"},
	}
	for _, tt := range join {
		if got := joinName(tt.ns, tt.name); got != tt.want {
			t.Errorf("joinName(%q, %q) = %q, want %q", tt.ns, tt.name, got, tt.want)
		}
	}
}
