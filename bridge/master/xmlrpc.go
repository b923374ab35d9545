package master

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The XML-RPC codec. Values are plain Go values:
//
//	<boolean>           bool
//	<int> <i4> <i8>     int
//	<double>            float64
//	<string>, untyped   string
//	<base64>            []byte
//	<dateTime.iso8601>  dateTime (the text, kept verbatim)
//	<array>             []any
//	<struct>            map[string]any
//	<nil/>              nil
//
// The encoder also takes int32, int64 and []string for convenience. Strings
// are escaped with the five XML entities only (never numeric references), as
// XmlRpc++ (roscpp) decodes nothing else.

// dateTime is an XML-RPC dateTime.iso8601 value, kept as its text.
type dateTime string

// fault is an XML-RPC fault response.
type fault struct {
	Code    int
	Message string
}

func (f *fault) Error() string {
	return fmt.Sprintf("xml-rpc fault %d: %s", f.Code, f.Message)
}

// Fault codes (the xmlrpc-epi conventions).
const (
	faultParse          = -32700
	faultMethodNotFound = -32601
	faultInvalidParams  = -32602
)

// maxDepth bounds the nesting of arrays and structs in requests; replies,
// which wrap request values in a few more levels, may nest twice as deep.
const maxDepth = 100

// errSyntax is wrapped by every decoding error caused by the document.
var errSyntax = errors.New("xml-rpc syntax")

func syntaxErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errSyntax, fmt.Sprintf(format, args...))
}

// decoder walks an XML-RPC document token by token.
type decoder struct {
	x     *xml.Decoder
	limit int // the deepest nesting accepted
}

func newDecoder(r io.Reader, limit int) *decoder {
	x := xml.NewDecoder(r)
	x.CharsetReader = charsetReader
	return &decoder{x: x, limit: limit}
}

// charsetReader accepts the single-byte encodings some clients declare.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "latin-1", "latin1":
		b, err := io.ReadAll(input)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		for _, c := range b {
			out.WriteRune(rune(c))
		}
		return &out, nil
	}
	return nil, fmt.Errorf("unsupported charset %q", label)
}

// token returns the next token that is not a comment, processing
// instruction or directive.
func (d *decoder) token() (xml.Token, error) {
	for {
		t, err := d.x.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, syntaxErr("unexpected end of document")
			}
			return nil, fmt.Errorf("%w: %w", errSyntax, err)
		}
		switch t.(type) {
		case xml.Comment, xml.ProcInst, xml.Directive:
			continue
		}
		return t, nil
	}
}

// start returns the next start element, skipping white space.
func (d *decoder) start() (xml.StartElement, error) {
	for {
		t, err := d.token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch tt := t.(type) {
		case xml.StartElement:
			return tt, nil
		case xml.CharData:
			if len(bytes.TrimSpace(tt)) != 0 {
				return xml.StartElement{}, syntaxErr("unexpected text %q", clip(tt))
			}
		case xml.EndElement:
			return xml.StartElement{}, syntaxErr("unexpected </%s>", tt.Name.Local)
		}
	}
}

// expect reads the next start element and checks its name.
func (d *decoder) expect(name string) error {
	se, err := d.start()
	if err != nil {
		return err
	}
	if se.Name.Local != name {
		return syntaxErr("expected <%s>, got <%s>", name, se.Name.Local)
	}
	return nil
}

// startOrEnd returns the next start element (ok true) or the end element
// (ok false), skipping white space.
func (d *decoder) startOrEnd() (se xml.StartElement, ok bool, err error) {
	for {
		t, err := d.token()
		if err != nil {
			return xml.StartElement{}, false, err
		}
		switch tt := t.(type) {
		case xml.StartElement:
			return tt, true, nil
		case xml.CharData:
			if len(bytes.TrimSpace(tt)) != 0 {
				return xml.StartElement{}, false, syntaxErr("unexpected text %q", clip(tt))
			}
		case xml.EndElement:
			return xml.StartElement{}, false, nil
		}
	}
}

// end consumes white space up to the next end element.
func (d *decoder) end() error {
	_, ok, err := d.startOrEnd()
	if err != nil {
		return err
	}
	if ok {
		return syntaxErr("unexpected element")
	}
	return nil
}

// text reads character data up to the end of the current element.
func (d *decoder) text() (string, error) {
	var sb strings.Builder
	for {
		t, err := d.token()
		if err != nil {
			return "", err
		}
		switch tt := t.(type) {
		case xml.CharData:
			sb.Write(tt)
		case xml.StartElement:
			return "", syntaxErr("unexpected <%s> in text", tt.Name.Local)
		case xml.EndElement:
			return sb.String(), nil
		}
	}
}

// value decodes the content of a <value> element whose start tag has been
// read, through its end tag.
func (d *decoder) value(depth int) (any, error) {
	if depth > d.limit {
		return nil, syntaxErr("values nested deeper than %d", d.limit)
	}
	var sb strings.Builder
	for {
		t, err := d.token()
		if err != nil {
			return nil, err
		}
		switch tt := t.(type) {
		case xml.CharData:
			sb.Write(tt)
		case xml.EndElement:
			// An untyped value is a string, white space included.
			return sb.String(), nil
		case xml.StartElement:
			if strings.TrimSpace(sb.String()) != "" {
				return nil, syntaxErr("text before <%s>", tt.Name.Local)
			}
			v, err := d.typed(tt.Name.Local, depth)
			if err != nil {
				return nil, err
			}
			if err := d.end(); err != nil {
				return nil, fmt.Errorf("after <%s>: %w", tt.Name.Local, err)
			}
			return v, nil
		}
	}
}

// typed decodes a typed value whose start tag has been read, through its
// end tag.
func (d *decoder) typed(name string, depth int) (any, error) {
	switch name {
	case "array":
		return d.array(depth)
	case "struct":
		return d.structure(depth)
	case "nil":
		return nil, d.end()
	}
	s, err := d.text()
	if err != nil {
		return nil, err
	}
	switch name {
	case "string":
		return s, nil
	case "int", "i4", "i8":
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, syntaxErr("bad <%s> %q", name, clip([]byte(s)))
		}
		return int(n), nil
	case "boolean":
		switch strings.TrimSpace(s) {
		case "1", "true":
			return true, nil
		case "0", "false":
			return false, nil
		}
		return nil, syntaxErr("bad <boolean> %q", clip([]byte(s)))
	case "double":
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, syntaxErr("bad <double> %q", clip([]byte(s)))
		}
		return f, nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, syntaxErr("bad <base64>: %v", err)
		}
		return b, nil
	case "dateTime.iso8601":
		return dateTime(strings.TrimSpace(s)), nil
	}
	return nil, syntaxErr("unknown value type <%s>", name)
}

func (d *decoder) array(depth int) (any, error) {
	out := []any{}
	se, ok, err := d.startOrEnd()
	if err != nil {
		return nil, err
	}
	if !ok { // <array/>
		return out, nil
	}
	if se.Name.Local != "data" {
		return nil, syntaxErr("expected <data>, got <%s>", se.Name.Local)
	}
	for {
		se, ok, err := d.startOrEnd()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if se.Name.Local != "value" {
			return nil, syntaxErr("expected <value> in <data>, got <%s>", se.Name.Local)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, d.end()
}

func (d *decoder) structure(depth int) (any, error) {
	out := map[string]any{}
	for {
		se, ok, err := d.startOrEnd()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		if se.Name.Local != "member" {
			return nil, syntaxErr("expected <member> in <struct>, got <%s>", se.Name.Local)
		}
		var (
			name           string
			val            any
			hasName, hasVa bool
		)
		for {
			se, ok, err := d.startOrEnd()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			switch se.Name.Local {
			case "name":
				if name, err = d.text(); err != nil {
					return nil, err
				}
				hasName = true
			case "value":
				if val, err = d.value(depth + 1); err != nil {
					return nil, err
				}
				hasVa = true
			default:
				return nil, syntaxErr("unexpected <%s> in <member>", se.Name.Local)
			}
		}
		if !hasName || !hasVa {
			return nil, syntaxErr("<member> without <name> or <value>")
		}
		out[name] = val
	}
}

// decodeCall decodes a methodCall document.
func decodeCall(r io.Reader) (method string, params []any, err error) {
	d := newDecoder(r, maxDepth)
	if err := d.expect("methodCall"); err != nil {
		return "", nil, err
	}
	if err := d.expect("methodName"); err != nil {
		return "", nil, err
	}
	if method, err = d.text(); err != nil {
		return "", nil, err
	}
	method = strings.TrimSpace(method)
	if method == "" {
		return "", nil, syntaxErr("empty <methodName>")
	}
	params = []any{}
	se, ok, err := d.startOrEnd()
	if err != nil {
		return "", nil, err
	}
	if !ok { // </methodCall> without <params>
		return method, params, nil
	}
	if se.Name.Local != "params" {
		return "", nil, syntaxErr("expected <params>, got <%s>", se.Name.Local)
	}
	for {
		se, ok, err := d.startOrEnd()
		if err != nil {
			return "", nil, err
		}
		if !ok {
			break
		}
		if se.Name.Local != "param" {
			return "", nil, syntaxErr("expected <param>, got <%s>", se.Name.Local)
		}
		if err := d.expect("value"); err != nil {
			return "", nil, err
		}
		v, err := d.value(1)
		if err != nil {
			return "", nil, err
		}
		if err := d.end(); err != nil {
			return "", nil, err
		}
		params = append(params, v)
	}
	if err := d.end(); err != nil { // </methodCall>
		return "", nil, err
	}
	return method, params, nil
}

// decodeResponse decodes a methodResponse document. A fault is returned as
// a *fault error.
func decodeResponse(r io.Reader) (any, error) {
	d := newDecoder(r, 2*maxDepth)
	if err := d.expect("methodResponse"); err != nil {
		return nil, err
	}
	se, err := d.start()
	if err != nil {
		return nil, err
	}
	switch se.Name.Local {
	case "params":
		if err := d.expect("param"); err != nil {
			return nil, err
		}
		if err := d.expect("value"); err != nil {
			return nil, err
		}
		return d.value(1)
	case "fault":
		if err := d.expect("value"); err != nil {
			return nil, err
		}
		v, err := d.value(1)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, syntaxErr("fault value is a %T, not a struct", v)
		}
		f := &fault{}
		f.Code, _ = m["faultCode"].(int)
		f.Message, _ = m["faultString"].(string)
		return nil, f
	}
	return nil, syntaxErr("expected <params> or <fault>, got <%s>", se.Name.Local)
}

// encoder writes XML-RPC documents; the first write error sticks.
type encoder struct {
	w   io.Writer
	err error
}

func (e *encoder) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

// escape writes s as XML character data: the markup characters as
// entities, characters XML cannot carry as U+FFFD.
func (e *encoder) escape(s string) {
	last := 0
	for i, r := range s {
		var rep string
		switch {
		case r == '&':
			rep = "&amp;"
		case r == '<':
			rep = "&lt;"
		case r == '>':
			rep = "&gt;"
		case r == utf8.RuneError && isInvalidAt(s, i):
			rep = "\uFFFD"
		case !xmlChar(r):
			rep = "\uFFFD"
		default:
			continue
		}
		e.raw(s[last:i])
		e.raw(rep)
		_, size := utf8.DecodeRuneInString(s[i:])
		last = i + size
	}
	e.raw(s[last:])
}

func isInvalidAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r == utf8.RuneError && size == 1
}

// xmlChar reports whether XML 1.0 can carry r.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

func (e *encoder) value(v any, depth int) {
	// Replies wrap decoded values in a few more levels.
	if depth > 2*maxDepth {
		e.fail(fmt.Errorf("values nested deeper than %d", 2*maxDepth))
		return
	}
	e.raw("<value>")
	switch tv := v.(type) {
	case bool:
		if tv {
			e.raw("<boolean>1</boolean>")
		} else {
			e.raw("<boolean>0</boolean>")
		}
	case int:
		e.integer(int64(tv))
	case int32:
		e.integer(int64(tv))
	case int64:
		e.integer(tv)
	case float64:
		e.raw("<double>" + strconv.FormatFloat(tv, 'g', -1, 64) + "</double>")
	case string:
		e.raw("<string>")
		e.escape(tv)
		e.raw("</string>")
	case []byte:
		e.raw("<base64>" + base64.StdEncoding.EncodeToString(tv) + "</base64>")
	case dateTime:
		e.raw("<dateTime.iso8601>")
		e.escape(string(tv))
		e.raw("</dateTime.iso8601>")
	case []string:
		e.raw("<array><data>")
		for _, s := range tv {
			e.value(s, depth+1)
		}
		e.raw("</data></array>")
	case []any:
		e.raw("<array><data>")
		for _, el := range tv {
			e.value(el, depth+1)
		}
		e.raw("</data></array>")
	case map[string]any:
		keys := make([]string, 0, len(tv))
		for k := range tv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		e.raw("<struct>")
		for _, k := range keys {
			e.raw("<member><name>")
			e.escape(k)
			e.raw("</name>")
			e.value(tv[k], depth+1)
			e.raw("</member>")
		}
		e.raw("</struct>")
	case nil:
		e.raw("<nil/>")
	default:
		e.fail(fmt.Errorf("cannot encode a %T as XML-RPC", v))
	}
	e.raw("</value>")
}

func (e *encoder) integer(n int64) {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		e.raw("<int>" + strconv.FormatInt(n, 10) + "</int>")
		return
	}
	e.raw("<i8>" + strconv.FormatInt(n, 10) + "</i8>")
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

const xmlHeader = `<?xml version="1.0"?>` + "\n"

// encodeCall writes a methodCall document.
func encodeCall(w io.Writer, method string, params []any) error {
	e := &encoder{w: w}
	e.raw(xmlHeader + "<methodCall><methodName>")
	e.escape(method)
	e.raw("</methodName><params>")
	for _, p := range params {
		e.raw("<param>")
		e.value(p, 1)
		e.raw("</param>")
	}
	e.raw("</params></methodCall>\n")
	return e.err
}

// encodeResponse writes a methodResponse document carrying v.
func encodeResponse(w io.Writer, v any) error {
	e := &encoder{w: w}
	e.raw(xmlHeader + "<methodResponse><params><param>")
	e.value(v, 1)
	e.raw("</param></params></methodResponse>\n")
	return e.err
}

// encodeFault writes a fault methodResponse document.
func encodeFault(w io.Writer, f *fault) error {
	e := &encoder{w: w}
	e.raw(xmlHeader + "<methodResponse><fault>")
	e.value(map[string]any{"faultCode": f.Code, "faultString": f.Message}, 1)
	e.raw("</fault></methodResponse>\n")
	return e.err
}

// clip shortens text quoted in error messages.
func clip(b []byte) string {
	const n = 40
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
