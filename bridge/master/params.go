package master

import (
	"errors"
	"sort"
	"strings"
)

// The parameter tree, as rosmaster's ParamDictionary: a namespace is a
// map[string]any, every other value a leaf. Keys are global names.

var (
	errParamNotSet = errors.New("parameter not set")
	errRootNotDict = errors.New("cannot set root of parameter tree to non-dictionary")
)

// paramTree holds parameters. Its zero value is not usable: use
// newParamTree.
type paramTree struct {
	root map[string]any
}

func newParamTree() paramTree {
	return paramTree{root: map[string]any{}}
}

// get returns the value at the global key; a namespace is a map.
func (t *paramTree) get(key string) (any, error) {
	var v any = t.root
	for _, ns := range nameSegments(key) {
		d, ok := v.(map[string]any)
		if !ok {
			return nil, errParamNotSet
		}
		if v, ok = d[ns]; !ok {
			return nil, errParamNotSet
		}
	}
	return v, nil
}

func (t *paramTree) has(key string) bool {
	_, err := t.get(key)
	return err == nil
}

// set stores value at the global key, creating namespaces on the way and
// replacing leaves that were in the way. A map value replaces the whole
// namespace.
func (t *paramTree) set(key string, value any) error {
	segs := nameSegments(key)
	if len(segs) == 0 {
		d, ok := value.(map[string]any)
		if !ok {
			return errRootNotDict
		}
		t.root = d
		return nil
	}
	d := t.root
	for _, ns := range segs[:len(segs)-1] {
		next, ok := d[ns].(map[string]any)
		if !ok {
			next = map[string]any{}
			d[ns] = next
		}
		d = next
	}
	d[segs[len(segs)-1]] = value
	return nil
}

// delete removes the value at the global key.
func (t *paramTree) delete(key string) error {
	segs := nameSegments(key)
	if len(segs) == 0 {
		return errors.New("cannot delete root of parameter tree")
	}
	d := t.root
	for _, ns := range segs[:len(segs)-1] {
		next, ok := d[ns].(map[string]any)
		if !ok {
			return errParamNotSet
		}
		d = next
	}
	last := segs[len(segs)-1]
	if _, ok := d[last]; !ok {
		return errParamNotSet
	}
	delete(d, last)
	return nil
}

// names returns the global names of all leaves, sorted.
func (t *paramTree) names() []string {
	var out []string
	var walk func(prefix string, d map[string]any)
	walk = func(prefix string, d map[string]any) {
		for k, v := range d {
			name := joinName(prefix, k)
			if sub, ok := v.(map[string]any); ok {
				walk(name, sub)
				continue
			}
			out = append(out, name)
		}
	}
	walk("/", t.root)
	sort.Strings(out)
	return out
}

// search looks for key from the namespace ns upwards, matching on the
// key's first segment (rosmaster's searchParam): from /a/b/node, "x/y"
// matches /a/b/node/x/y, then /a/b/x/y, /a/x/y and /x/y, whichever first
// has its "x". It returns "" when nothing matches.
func (t *paramTree) search(ns, key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "~") {
		return "", errors.New("invalid key")
	}
	if !strings.HasPrefix(ns, "/") {
		return "", errors.New("namespace must be global")
	}
	if strings.HasPrefix(key, "/") {
		if t.has(key) {
			return key, nil
		}
		return "", nil
	}
	keyNS := nameSegments(key)[0]
	if t.has(joinName(ns, keyNS)) {
		return joinName(ns, key), nil
	}
	segs := nameSegments(ns)
	for i := 1; i <= len(segs); i++ {
		up := append(append([]string{}, segs[:len(segs)-i]...), keyNS)
		if t.has("/" + strings.Join(up, "/")) {
			full := append(append([]string{}, segs[:len(segs)-i]...), key)
			return "/" + strings.Join(full, "/"), nil
		}
	}
	return "", nil
}

// deepCopy copies maps and slices of a parameter value, so the copy can be
// encoded while the tree changes.
func deepCopy(v any) any {
	switch tv := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(tv))
		for k, e := range tv {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(tv))
		for i, e := range tv {
			out[i] = deepCopy(e)
		}
		return out
	case []byte:
		return append([]byte(nil), tv...)
	}
	return v
}

// paramUpdates computes which parameter subscribers hear of a change of key
// to value (an empty map for a deletion), as rosmaster's
// compute_param_updates: subscribers of key or of a namespace above it get
// key and value; subscribers below key get their own part of a map value,
// or an empty map when the new value no longer has it. subs maps
// subscribed keys (with trailing slash) to registrations; ignore is a
// caller ID not told of its own change ("" for none).
func paramUpdates(subs map[string][]registration, key string, value any, ignore string) []action {
	if len(subs) == 0 {
		return nil
	}
	if key != "/" {
		key = canonicalName(key) + "/"
	}
	var allKeys map[string]bool
	if d, ok := value.(map[string]any); ok {
		allKeys = map[string]bool{}
		collectKeys(key, d, allKeys)
	}
	subKeys := make([]string, 0, len(subs))
	for k := range subs {
		subKeys = append(subKeys, k)
	}
	sort.Strings(subKeys)

	var out []action
	add := func(regs []registration, k string, v any, ignore string) {
		for _, r := range regs {
			if ignore != "" && r.callerID == ignore {
				continue
			}
			out = append(out, paramUpdate{API: r.api, CallerID: r.callerID, Key: k, Value: deepCopy(v)})
		}
	}
	for _, sk := range subKeys {
		nsKey := sk
		if !strings.HasSuffix(nsKey, "/") {
			nsKey += "/"
		}
		switch {
		case strings.HasPrefix(key, nsKey):
			add(subs[sk], key, value, ignore)
		case allKeys != nil && strings.HasPrefix(nsKey, key) && !allKeys[sk]:
			add(subs[sk], sk, map[string]any{}, "")
		}
	}
	if allKeys != nil {
		for _, k := range sortedKeys(allKeys) {
			regs, ok := subs[k]
			if !ok || !strings.HasPrefix(k, key) {
				continue
			}
			if v, ok := subValue(value, k[len(key):]); ok {
				add(regs, k, v, "")
			}
		}
	}
	return out
}

// subValue returns the part of v at the relative name rel.
func subValue(v any, rel string) (any, bool) {
	for _, ns := range nameSegments(rel) {
		d, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = d[ns]; !ok {
			return nil, false
		}
	}
	return v, true
}

// collectKeys adds the keys (with trailing slash) of every value in the
// map d stored at key.
func collectKeys(key string, d map[string]any, out map[string]bool) {
	for k, v := range d {
		nk := joinName(key, k) + "/"
		out[nk] = true
		if sub, ok := v.(map[string]any); ok {
			collectKeys(nk, sub, out)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
