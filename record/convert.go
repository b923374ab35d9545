package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// ErrDefinition reports a ROS 1 message definition that cannot be parsed.
var ErrDefinition = errors.New("bad ROS 1 message definition")

// ErrROS1 reports a ROS 1 message body that does not match its type.
var ErrROS1 = errors.New("ROS 1 message body does not match its type")

// kind is a field's base type.
type kind uint8

const (
	kBool kind = iota
	kInt8
	kUint8
	kInt16
	kUint16
	kInt32
	kUint32
	kInt64
	kUint64
	kFloat32
	kFloat64
	kString
	kTime     // ROS 1 time: uint32 sec, uint32 nsec → builtin_interfaces/Time
	kDuration // ROS 1 duration: int32 sec, int32 nsec → builtin_interfaces/Duration
	kStruct
)

// size is the encoded size of a fixed-size primitive (0 for the others).
func (k kind) size() int {
	switch k {
	case kBool, kInt8, kUint8:
		return 1
	case kInt16, kUint16:
		return 2
	case kInt32, kUint32, kFloat32:
		return 4
	case kInt64, kUint64, kFloat64:
		return 8
	}
	return 0
}

var primitives = map[string]kind{
	"bool": kBool, "int8": kInt8, "byte": kInt8, "uint8": kUint8, "char": kUint8,
	"int16": kInt16, "uint16": kUint16, "int32": kInt32, "uint32": kUint32,
	"int64": kInt64, "uint64": kUint64, "float32": kFloat32, "float64": kFloat64,
	"string": kString, "time": kTime, "duration": kDuration,
}

// ros2Prim is the ROS 2 spelling of a primitive (char and byte are the
// ROS 1 aliases of uint8 and int8).
var ros2Prim = [...]string{kBool: "bool", kInt8: "int8", kUint8: "uint8", kInt16: "int16", kUint16: "uint16",
	kInt32: "int32", kUint32: "uint32", kInt64: "int64", kUint64: "uint64", kFloat32: "float32",
	kFloat64: "float64", kString: "string", kTime: "builtin_interfaces/Time", kDuration: "builtin_interfaces/Duration"}

// field is one data field of a message type, compiled.
type field struct {
	name  string
	kind  kind
	array int // -1: scalar, 0: variable-length, N: fixed length N
	sub   *msgType
	// omit: a field ROS 2 does not have (std_msgs/Header's seq): read
	// from ROS 1 and dropped; written as 0 going back.
	omit bool
}

// constant is a constant line of a definition, kept for the ROS 2 text.
type constant struct{ typ, name, value string }

// msgType is a ROS 1 message type compiled for conversion.
type msgType struct {
	name   string // "pkg/Name"
	fields []field
	consts []constant
}

// Converter converts the messages of one ROS 1 type to plain CDR (the
// ROS 2 encoding) and back, following the type's definition. Build it once
// per type with NewConverter; its conversions do not allocate once the
// destination buffers have grown. Times and durations are copied as they
// are (seconds and nanoseconds), std_msgs/Header loses its seq.
type Converter struct {
	root *msgType
	deps []*msgType // every type the root uses, depth first, each once
	// ROS1Name is the ROS 1 type name, "pkg/Name".
	ROS1Name string
	// ROS2Name is the ROS 2 type name, "pkg/msg/Name".
	ROS2Name string
	// ROS2Definition is the type's ros2msg definition, dependencies
	// appended as rosbag2 writes them (MCAP schema encoding "ros2msg").
	ROS2Definition string
	depth          int
}

// maxDepth bounds nesting of types (a recursive definition is refused).
const maxDepth = 32

// ROS2Name returns the ROS 2 name of ROS 1 type "pkg/Name": "pkg/msg/Name".
func ROS2Name(ros1 string) string {
	pkg, name, ok := strings.Cut(ros1, "/")
	if !ok {
		return ros1
	}
	return pkg + "/msg/" + name
}

// NewConverter compiles the full ROS 1 definition text (the connection
// header's message_definition: the type's own lines, then each dependency
// after a line of '=' and "MSG: pkg/Name") of type name ("pkg/Name").
func NewConverter(name, definition string) (*Converter, error) {
	sections := map[string]string{}
	order := []string{name}
	cur, b := name, strings.Builder{}
	flush := func() { sections[cur] = b.String(); b.Reset() }
	for _, line := range strings.Split(definition, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "===") && strings.Trim(t, "=") == "" {
			continue
		}
		if dep, ok := strings.CutPrefix(t, "MSG:"); ok {
			flush()
			cur = strings.TrimSpace(dep)
			if _, dup := sections[cur]; !dup {
				order = append(order, cur)
			}
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	flush()
	c := &Converter{ROS1Name: name, ROS2Name: ROS2Name(name)}
	types := map[string]*msgType{}
	building := map[string]bool{}
	var build func(n string, depth int) (*msgType, error)
	build = func(n string, depth int) (*msgType, error) {
		if building[n] {
			return nil, fmt.Errorf("%w: %s: recursive type", ErrDefinition, n)
		}
		if t, ok := types[n]; ok {
			return t, nil
		}
		if depth > maxDepth {
			return nil, fmt.Errorf("%w: %s: nested more than %d deep", ErrDefinition, n, maxDepth)
		}
		text, ok := sections[n]
		if !ok {
			return nil, fmt.Errorf("%w: %s: no definition of type %s", ErrDefinition, name, n)
		}
		t := &msgType{name: n}
		types[n] = t
		building[n] = true
		defer delete(building, n)
		pkg, _, _ := strings.Cut(n, "/")
		for ln, line := range strings.Split(text, "\n") {
			f, k, err := parseLine(line)
			if err != nil {
				return nil, fmt.Errorf("%w: %s line %d %q: %v", ErrDefinition, n, ln+1, strings.TrimSpace(line), err)
			}
			if k != nil {
				t.consts = append(t.consts, *k)
				continue
			}
			if f == nil {
				continue
			}
			if f.kind == kStruct {
				sub := f.sub.name
				switch {
				case sub == "Header":
					sub = "std_msgs/Header"
				case !strings.Contains(sub, "/"):
					sub = pkg + "/" + sub
				}
				st, err := build(sub, depth+1)
				if err != nil {
					return nil, err
				}
				f.sub = st
			}
			t.fields = append(t.fields, *f)
		}
		if n == "std_msgs/Header" && len(t.fields) > 0 && t.fields[0].name == "seq" && t.fields[0].kind == kUint32 && t.fields[0].array < 0 {
			t.fields[0].omit = true
		}
		if depth > c.depth {
			c.depth = depth
		}
		return t, nil
	}
	root, err := build(name, 0)
	if err != nil {
		return nil, err
	}
	c.root = root
	seen := map[*msgType]bool{root: true}
	var walk func(t *msgType)
	walk = func(t *msgType) {
		for _, f := range t.fields {
			if f.sub != nil && !seen[f.sub] {
				seen[f.sub] = true
				c.deps = append(c.deps, f.sub)
				walk(f.sub)
			}
		}
	}
	walk(root)
	c.ROS2Definition = c.ros2Text()
	return c, nil
}

// parseLine parses one definition line: a field, a constant, or nothing.
func parseLine(line string) (*field, *constant, error) {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' {
		return nil, nil, nil
	}
	typ, rest, ok := strings.Cut(t, " ")
	if !ok {
		typ, rest, ok = strings.Cut(t, "\t")
	}
	if !ok {
		return nil, nil, errors.New("want TYPE NAME")
	}
	rest = strings.TrimSpace(rest)
	if eq := strings.IndexByte(rest, '='); eq >= 0 && (strings.IndexByte(rest, '#') < 0 || eq < strings.IndexByte(rest, '#')) {
		name := strings.TrimSpace(rest[:eq])
		val := rest[eq+1:]
		if typ != "string" {
			val, _, _ = strings.Cut(val, "#")
		}
		if !validName(name) {
			return nil, nil, fmt.Errorf("bad constant name %q", name)
		}
		return nil, &constant{typ: typ, name: name, value: strings.TrimSpace(val)}, nil
	}
	rest, _, _ = strings.Cut(rest, "#")
	name := strings.TrimSpace(rest)
	if !validName(name) {
		return nil, nil, fmt.Errorf("bad field name %q", name)
	}
	f := &field{name: name, array: -1}
	if i := strings.IndexByte(typ, '['); i >= 0 {
		if !strings.HasSuffix(typ, "]") {
			return nil, nil, fmt.Errorf("bad array type %q", typ)
		}
		n := typ[i+1 : len(typ)-1]
		typ = typ[:i]
		f.array = 0
		if n != "" {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 || v > 1<<20 {
				return nil, nil, fmt.Errorf("bad array length %q", n)
			}
			f.array = v
		}
	}
	if k, ok := primitives[typ]; ok {
		f.kind = k
		return f, nil, nil
	}
	if typ == "" || strings.ContainsAny(typ, " \t[]=") {
		return nil, nil, fmt.Errorf("bad type %q", typ)
	}
	f.kind = kStruct
	f.sub = &msgType{name: typ}
	return f, nil, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

const separator = "================================================================================\n"

// ros2Text is the ros2msg definition: the root's lines, then each
// dependency as "MSG: pkg/Name" (the builtin_interfaces ones included).
func (c *Converter) ros2Text() string {
	var b strings.Builder
	usesTime, usesDur := false, false
	write := func(t *msgType) {
		for _, k := range t.consts {
			typ := k.typ
			if p, ok := primitives[typ]; ok {
				typ = ros2Prim[p]
			}
			fmt.Fprintf(&b, "%s %s=%s\n", typ, k.name, k.value)
		}
		for _, f := range t.fields {
			if f.omit {
				continue
			}
			typ := ""
			switch f.kind {
			case kStruct:
				typ = f.sub.name
			default:
				typ = ros2Prim[f.kind]
				usesTime = usesTime || f.kind == kTime
				usesDur = usesDur || f.kind == kDuration
			}
			switch {
			case f.array == 0:
				typ += "[]"
			case f.array > 0:
				typ += "[" + strconv.Itoa(f.array) + "]"
			}
			fmt.Fprintf(&b, "%s %s\n", typ, f.name)
		}
	}
	write(c.root)
	for _, d := range c.deps {
		b.WriteString(separator + "MSG: " + d.name + "\n")
		write(d)
	}
	if usesTime {
		b.WriteString(separator + "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n")
	}
	if usesDur {
		b.WriteString(separator + "MSG: builtin_interfaces/Duration\nint32 sec\nuint32 nanosec\n")
	}
	return b.String()
}

// ToCDR writes the ROS 1 message body (without its length prefix) as CDR
// to w, which the caller has begun (cdr.Writer.Begin).
func (c *Converter) ToCDR(w *cdr.Writer, body []byte) error {
	rd := ros1Reader{b: body}
	c.toCDR(c.root, &rd, w)
	if rd.err != nil {
		return fmt.Errorf("%s: %w", c.ROS1Name, rd.err)
	}
	if rd.off != len(rd.b) {
		return fmt.Errorf("%s: %d bytes left over: %w", c.ROS1Name, len(rd.b)-rd.off, ErrROS1)
	}
	return nil
}

func (c *Converter) toCDR(t *msgType, r *ros1Reader, w *cdr.Writer) {
	data := false
	for i := range t.fields {
		f := &t.fields[i]
		if r.err != nil {
			return
		}
		n := 1
		if f.array >= 0 {
			n = f.array
			if f.array == 0 {
				n = r.count(max(f.kind.size(), 1))
				if !f.omit {
					w.Len(n)
				}
			}
		}
		if f.omit {
			for j := 0; j < n; j++ {
				r.skip(f)
			}
			continue
		}
		data = true
		if f.array >= 0 && f.kind.size() > 1 {
			// A primitive array: the same little-endian elements, aligned
			// once (element size = alignment, so no padding between).
			sz := f.kind.size()
			src := r.take(n * sz)
			if src == nil {
				return
			}
			if n > 0 {
				w.Align(sz) // no padding for an empty sequence
			}
			w.Buf = append(w.Buf, src...)
			continue
		}
		if f.array >= 0 && f.kind.size() == 1 {
			src := r.take(n)
			if src == nil {
				return
			}
			w.Buf = append(w.Buf, src...)
			continue
		}
		for j := 0; j < n && r.err == nil; j++ {
			c.elemToCDR(f, r, w)
		}
	}
	if !data {
		// ROS 2 gives an empty message one uint8 member.
		w.Uint8(0)
	}
}

func (c *Converter) elemToCDR(f *field, r *ros1Reader, w *cdr.Writer) {
	switch f.kind {
	case kBool, kInt8, kUint8:
		w.Uint8(r.u8())
	case kInt16, kUint16:
		w.Uint16(r.u16())
	case kInt32, kUint32, kFloat32:
		w.Uint32(r.u32())
	case kInt64, kUint64, kFloat64:
		w.Uint64(r.u64())
	case kString:
		s := r.str()
		w.Uint32(uint32(len(s) + 1))
		w.Buf = append(append(w.Buf, s...), 0)
	case kTime, kDuration:
		w.Uint32(r.u32())
		w.Uint32(r.u32())
	case kStruct:
		c.toCDR(f.sub, r, w)
	}
}

// ToROS1 appends the ROS 1 body (without length prefix) of a CDR sample
// (encapsulation header included) to dst. A dropped field (Header's seq)
// is written as 0.
func (c *Converter) ToROS1(dst []byte, sample []byte, r *cdr.Reader) ([]byte, error) {
	r.Reset(sample)
	dst = c.fromCDR(c.root, r, dst)
	if err := r.Err(); err != nil {
		return dst, fmt.Errorf("%s: %w", c.ROS2Name, err)
	}
	return dst, nil
}

func (c *Converter) fromCDR(t *msgType, r *cdr.Reader, dst []byte) []byte {
	data := false
	for i := range t.fields {
		f := &t.fields[i]
		if r.Err() != nil {
			return dst
		}
		if f.omit {
			n := max(f.array, 1)
			if f.array == 0 {
				n = 0
				dst = binary.LittleEndian.AppendUint32(dst, 0)
			}
			for j := 0; j < n*f.kind.size(); j++ {
				dst = append(dst, 0)
			}
			continue
		}
		data = true
		n := 1
		if f.array >= 0 {
			n = f.array
			if f.array == 0 {
				n = r.Len(max(f.kind.size(), 1))
				dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
			}
		}
		for j := 0; j < n && r.Err() == nil; j++ {
			dst = c.elemFromCDR(f, r, dst)
		}
	}
	if !data {
		r.Uint8()
	}
	return dst
}

func (c *Converter) elemFromCDR(f *field, r *cdr.Reader, dst []byte) []byte {
	switch f.kind {
	case kBool, kInt8, kUint8:
		return append(dst, r.Uint8())
	case kInt16, kUint16:
		return binary.LittleEndian.AppendUint16(dst, r.Uint16())
	case kInt32, kUint32, kFloat32:
		return binary.LittleEndian.AppendUint32(dst, r.Uint32())
	case kInt64, kUint64, kFloat64:
		return binary.LittleEndian.AppendUint64(dst, r.Uint64())
	case kString:
		s := r.StringBytes()
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
		return append(dst, s...)
	case kTime, kDuration:
		dst = binary.LittleEndian.AppendUint32(dst, r.Uint32())
		return binary.LittleEndian.AppendUint32(dst, r.Uint32())
	case kStruct:
		return c.fromCDR(f.sub, r, dst)
	}
	return dst
}

// ros1Reader reads a ROS 1 body (little endian, no alignment); the first
// error sticks.
type ros1Reader struct {
	b   []byte
	off int
	err error
}

func (r *ros1Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = fmt.Errorf("%w: ends at byte %d, %d more needed", ErrROS1, len(r.b), n)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *ros1Reader) u8() uint8 {
	if s := r.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (r *ros1Reader) u16() uint16 {
	if s := r.take(2); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (r *ros1Reader) u32() uint32 {
	if s := r.take(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *ros1Reader) u64() uint64 {
	if s := r.take(8); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

func (r *ros1Reader) str() []byte { return r.take(int(r.count(1))) }

// count reads a sequence length and checks that n×minSize bytes remain.
func (r *ros1Reader) count(minSize int) int {
	n := r.u32()
	if r.err != nil {
		return 0
	}
	if uint64(n)*uint64(minSize) > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("%w: a sequence of %d longer than the body", ErrROS1, n)
		return 0
	}
	return int(n)
}

// skip reads one element of f and drops it.
func (r *ros1Reader) skip(f *field) {
	switch {
	case f.kind == kString:
		r.str()
	case f.kind == kStruct:
		// Only primitive fields are omitted.
		r.err = fmt.Errorf("%w: cannot drop a struct field", ErrROS1)
	default:
		sz := f.kind.size()
		if f.kind == kTime || f.kind == kDuration {
			sz = 8
		}
		r.take(sz)
	}
}
