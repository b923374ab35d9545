package master

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeCallFixtures(t *testing.T) {
	tests := []struct {
		file   string
		method string
		params []any
	}{
		// Python's xmlrpc.client (rospy, rostopic, roslaunch...).
		{"rospy_setparam.xml", "setParam", []any{"/talker", map[string]any{
			"a": 1, "b": []any{1.5, true, "x<y"}, "c": []byte{0, 1, 2}, "d": map[string]any{},
		}}},
		// XmlRpc++ (roscpp): untyped strings, CRLF.
		{"xmlrpcpp_hasparam.xml", "hasParam", []any{"/rosout", "/tcp_keepalive"}},
	}
	for _, tt := range tests {
		m, p, err := decodeCall(bytes.NewReader(readFixture(t, tt.file)))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if m != tt.method || !reflect.DeepEqual(p, tt.params) {
			t.Errorf("%s: %s %#v, want %s %#v", tt.file, m, p, tt.method, tt.params)
		}
	}
}

func TestDecodeResponseFixtures(t *testing.T) {
	v, err := decodeResponse(bytes.NewReader(readFixture(t, "rospy_response.xml")))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{1, "ok", []any{[]any{"/t", []any{"/a"}}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %#v, want %#v", v, want)
	}
	_, err = decodeResponse(bytes.NewReader(readFixture(t, "rospy_fault.xml")))
	var f *fault
	if !errors.As(err, &f) || f.Code != 1 || f.Message != "boom" {
		t.Errorf("fault: %v", err)
	}
}

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		xml  string
		want any
	}{
		{"<value></value>", ""},
		{"<value/>", ""},
		{"<value>  spaced  </value>", "  spaced  "},
		{"<value><string/></value>", ""},
		{"<value> <i4> -7 </i4> </value>", -7},
		{"<value><i8>9000000000</i8></value>", 9000000000},
		{"<value><boolean>0</boolean></value>", false},
		{"<value><double>-1e300</double></value>", -1e300},
		{"<value><double>nan</double></value>", math.NaN()},
		{"<value><dateTime.iso8601>20240101T10:00:00</dateTime.iso8601></value>", dateTime("20240101T10:00:00")},
		{"<value><nil/></value>", nil},
		{"<value><array><data/></array></value>", []any{}},
		{"<value><array/></value>", []any{}},
		{"<value><struct><member><value>1</value><name>k</name></member></struct></value>", map[string]any{"k": "1"}},
		{"<value><string>a&amp;b&#10;&lt;c&gt;<!-- c --></string></value>", "a&b\n<c>"},
	}
	for _, tt := range tests {
		doc := `<?xml version="1.0"?><methodCall><methodName>m</methodName><params><param>` + tt.xml + `</param></params></methodCall>`
		_, p, err := decodeCall(strings.NewReader(doc))
		if err != nil {
			t.Errorf("%s: %v", tt.xml, err)
			continue
		}
		if f, ok := tt.want.(float64); ok && math.IsNaN(f) {
			if g, ok := p[0].(float64); !ok || !math.IsNaN(g) {
				t.Errorf("%s: %#v, want NaN", tt.xml, p[0])
			}
			continue
		}
		if !reflect.DeepEqual(p[0], tt.want) {
			t.Errorf("%s: %#v, want %#v", tt.xml, p[0], tt.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	deep := strings.Repeat("<value><array><data>", maxDepth+2)
	bad := []string{
		"",
		"not xml",
		"<methodResponse/>",
		"<methodCall><methodName></methodName></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value><int>x</int></value></param></params></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value><boolean>2</boolean></value></param></params></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value><base64>!!</base64></value></param></params></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value><blob>1</blob></value></param></params></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value>x<int>1</int></value></param></params></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value><struct><member><name>a</name></member></struct></value></param></params></methodCall>",
		"<methodCall><methodName>m</methodName><params><param><value><int>1</int>",
		"<methodCall><methodName>m</methodName><params><param>" + deep,
	}
	for _, b := range bad {
		if _, _, err := decodeCall(strings.NewReader(b)); !errors.Is(err, errSyntax) {
			t.Errorf("%q: err %v, want a syntax error", clip([]byte(b)), err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	params := []any{
		"/caller",
		"a&b<c>d\n\tline\r2 \"q\" 'a' ✓",
		"bad\x00char\xff",
		1, -1 << 40, 2.5, math.Inf(1), true, []byte("bin"),
		dateTime("20240101T10:00:00"),
		[]string{"x", "y"},
		[]any{},
		map[string]any{"k&": []any{map[string]any{}}, "n": 3},
	}
	var buf bytes.Buffer
	if err := encodeCall(&buf, "setParam", params); err != nil {
		t.Fatal(err)
	}
	// XmlRpc++ decodes only the five entities: the encoder must use no
	// numeric character references.
	if strings.Contains(buf.String(), "&#") {
		t.Errorf("numeric character reference in %s", buf.String())
	}
	m, got, err := decodeCall(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]any(nil), params...)
	want[2] = "bad\uFFFDchar\uFFFD"
	want[1] = "a&b<c>d\n\tline\n2 \"q\" 'a' ✓" // XML turns CR into LF
	want[10] = []any{"x", "y"}
	if m != "setParam" || !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
	}

	buf.Reset()
	if err := encodeResponse(&buf, []any{1, "ok", 0}); err != nil {
		t.Fatal(err)
	}
	v, err := decodeResponse(&buf)
	if err != nil || !reflect.DeepEqual(v, []any{1, "ok", 0}) {
		t.Errorf("response round trip: %#v, %v", v, err)
	}
	buf.Reset()
	if err := encodeFault(&buf, &fault{-1, "x<y"}); err != nil {
		t.Fatal(err)
	}
	var f *fault
	if _, err := decodeResponse(&buf); !errors.As(err, &f) || f.Code != -1 || f.Message != "x<y" {
		t.Errorf("fault round trip: %v", err)
	}
	if err := encodeResponse(&bytes.Buffer{}, struct{}{}); err == nil {
		t.Error("encoded a struct{}")
	}
}

// FuzzDecodeCall checks that the decoder never panics, and that what it
// decodes encodes and decodes again to the same values.
func FuzzDecodeCall(f *testing.F) {
	for _, name := range []string{"rospy_setparam.xml", "xmlrpcpp_hasparam.xml"} {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte(`<methodCall><methodName>m</methodName><params><param><value><array><data><value><struct><member><name>a</name><value><double>1</double></value></member></struct></value></data></array></value></param></params></methodCall>`))
	f.Add([]byte(`<?xml version="1.0" encoding="iso-8859-1"?><methodCall><methodName>m</methodName><params><param><value>` + "\xe9" + `</value></param></params></methodCall>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, p, err := decodeCall(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := encodeCall(&buf, m, p); err != nil {
			t.Fatalf("encode %#v: %v", p, err)
		}
		m2, p2, err := decodeCall(&buf)
		if err != nil {
			t.Fatalf("decode re-encoded %q: %v", buf.String(), err)
		}
		if m2 != strings.TrimSpace(m) || !equalValues(p, p2) {
			t.Fatalf("round trip: %#v -> %#v", p, p2)
		}
	})
}

// FuzzDecodeResponse checks that the response decoder never panics, that
// a value it decodes encodes and decodes again to the same value, and a
// fault to the same fault.
func FuzzDecodeResponse(f *testing.F) {
	for _, name := range []string{"rospy_response.xml", "rospy_fault.xml"} {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte(`<methodResponse><params><param><value><array><data><value><i4>1</i4></value><value>s</value><value><double>-0.5</double></value></data></array></value></param></params></methodResponse>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeResponse(bytes.NewReader(b))
		var buf bytes.Buffer
		var flt *fault
		switch {
		case errors.As(err, &flt):
			if err := encodeFault(&buf, flt); err != nil {
				t.Fatalf("encode fault %+v: %v", flt, err)
			}
		case err != nil:
			if v != nil {
				t.Fatalf("value %#v with error %v", v, err)
			}
			return
		default:
			if err := encodeResponse(&buf, v); err != nil {
				t.Fatalf("encode %#v: %v", v, err)
			}
		}
		v2, err2 := decodeResponse(&buf)
		if flt != nil {
			var flt2 *fault
			if !errors.As(err2, &flt2) || flt2.Code != flt.Code || flt2.Message != normalizeEOL(flt.Message) {
				t.Fatalf("fault round trip: %+v -> %v", flt, err2)
			}
			return
		}
		if err2 != nil || !equalValues(v, v2) {
			t.Fatalf("round trip: %#v -> %#v, %v", v, v2, err2)
		}
	})
}

// equalValues is reflect.DeepEqual with NaN equal to NaN, and strings
// compared after XML's end-of-line normalisation.
func equalValues(a, b any) bool {
	switch ta := a.(type) {
	case float64:
		tb, ok := b.(float64)
		return ok && (ta == tb || math.IsNaN(ta) && math.IsNaN(tb))
	case string:
		tb, ok := b.(string)
		return ok && normalizeEOL(ta) == tb
	case []any:
		tb, ok := b.([]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for i := range ta {
			if !equalValues(ta[i], tb[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for k, v := range ta {
			w, ok := tb[normalizeEOL(k)]
			if !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// normalizeEOL does what an XML parser does to line ends.
func normalizeEOL(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
