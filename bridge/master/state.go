package master

import (
	"fmt"
	"sort"
	"strings"
)

// The master's state: registrations and parameters, with no I/O, no clock
// and no locking. Each call returns the reply triple and the actions (slave
// API calls) the caller must then carry out; the rules are rosmaster's
// (master_api.py, registrations.py, paramserver.py, ros_comm 1.15).

// Reply codes of the ROS master and parameter APIs.
const (
	codeError   = -1 // the caller erred (bad argument, no such thing)
	codeFailure = 0  // the master failed
	codeSuccess = 1
)

// reply is the [code, statusMessage, value] triple every ROS API returns.
type reply struct {
	Code   int
	Status string
	Value  any
}

func (r reply) triple() []any { return []any{r.Code, r.Status, r.Value} }

// action is a call the master must make on a node's slave API.
type action interface {
	// target is the slave API URI called.
	target() string
}

// publisherUpdate tells a subscriber the topic's current publishers.
type publisherUpdate struct {
	API        string
	Topic      string
	Publishers []string
}

// paramUpdate tells a parameter subscriber a new value (an empty map when
// the parameter was deleted).
type paramUpdate struct {
	API      string
	CallerID string
	Key      string
	Value    any
}

// shutdownNode asks a node to exit: another node registered its name.
type shutdownNode struct {
	API      string
	CallerID string
	Reason   string
}

func (a publisherUpdate) target() string { return a.API }
func (a paramUpdate) target() string     { return a.API }
func (a shutdownNode) target() string    { return a.API }

// registration is one node's registration for a key.
type registration struct {
	callerID string
	api      string
}

// regKind is what a registration is for.
type regKind int

const (
	kindPublisher regKind = iota
	kindSubscriber
	kindService
	kindParamSub
	numKinds
)

// nodeRef is a registered node: its slave API and what it registered. A
// node with no registration left is forgotten.
type nodeRef struct {
	api  string
	keys [numKinds]map[string]bool
}

func newNodeRef(api string) *nodeRef {
	n := &nodeRef{api: api}
	for i := range n.keys {
		n.keys[i] = map[string]bool{}
	}
	return n
}

func (n *nodeRef) empty() bool {
	for _, k := range n.keys {
		if len(k) != 0 {
			return false
		}
	}
	return true
}

// registry maps keys (topic, service or parameter names) to registrations
// in registration order.
type registry map[string][]registration

func (r registry) add(key string, reg registration) {
	for _, x := range r[key] {
		if x == reg {
			return
		}
	}
	r[key] = append(r[key], reg)
}

// remove removes reg and reports whether it was there.
func (r registry) remove(key string, reg registration) bool {
	regs := r[key]
	for i, x := range regs {
		if x == reg {
			regs = append(regs[:i:i], regs[i+1:]...)
			if len(regs) == 0 {
				delete(r, key)
			} else {
				r[key] = regs
			}
			return true
		}
	}
	return false
}

// removeCaller removes every registration of callerID and returns the keys
// it had.
func (r registry) removeCaller(callerID string) []string {
	var keys []string
	for key, regs := range r {
		kept := regs[:0:0]
		for _, x := range regs {
			if x.callerID != callerID {
				kept = append(kept, x)
			}
		}
		if len(kept) == len(regs) {
			continue
		}
		keys = append(keys, key)
		if len(kept) == 0 {
			delete(r, key)
		} else {
			r[key] = kept
		}
	}
	sort.Strings(keys)
	return keys
}

func (r registry) apis(key string) []string {
	out := []string{}
	for _, x := range r[key] {
		out = append(out, x.api)
	}
	return out
}

// systemState is the registry as getSystemState lists it:
// [[key, [callerID...]]...], sorted by key.
func (r registry) systemState() []any {
	out := []any{}
	for _, key := range r.sortedKeys() {
		ids := []string{}
		for _, x := range r[key] {
			ids = append(ids, x.callerID)
		}
		out = append(out, []any{key, ids})
	}
	return out
}

func (r registry) sortedKeys() []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// serviceProvider is the current provider of a service.
type serviceProvider struct {
	callerID string
	api      string // the service's rosrpc:// URI
}

// state is the master's state machine.
type state struct {
	uri string // the master's own XML-RPC URI (getUri)
	pid int    // the process ID reported by getPid

	guard func(topic, callerID string) string // see Master.GuardPublishers
	// unsub, when set, hears every subscription a node ended
	// (Master.WatchUnsubscribes).
	unsub func(topic, callerID string)

	nodes      map[string]*nodeRef
	regs       [numKinds]registry
	services   map[string]serviceProvider
	topicTypes map[string]string
	params     paramTree
}

func newState(uri string, pid int) *state {
	s := &state{
		uri:        uri,
		pid:        pid,
		nodes:      map[string]*nodeRef{},
		services:   map[string]serviceProvider{},
		topicTypes: map[string]string{},
		params:     newParamTree(),
	}
	for i := range s.regs {
		s.regs[i] = registry{}
	}
	return s
}

// register records callerID's registration of key. A caller ID registering
// from a new API replaces the old node: its registrations are dropped, it
// is asked to shut down and the subscribers of its topics are told.
func (s *state) register(kind regKind, key, callerID, api string) []action {
	var acts []action
	n := s.nodes[callerID]
	if n == nil || n.api != api {
		if n != nil {
			acts = append(acts, shutdownNode{API: n.api, CallerID: callerID,
				Reason: "new node registered with same name"})
		}
		n = newNodeRef(api)
		s.nodes[callerID] = n
		if len(acts) != 0 {
			topics := s.regs[kindPublisher].removeCaller(callerID)
			for k := kindSubscriber; k < numKinds; k++ {
				s.regs[k].removeCaller(callerID)
			}
			for name, p := range s.services {
				if p.callerID == callerID {
					delete(s.services, name)
				}
			}
			for _, t := range topics {
				acts = append(acts, s.publisherUpdates(t)...)
			}
		}
	}
	n.keys[kind][key] = true
	s.regs[kind].add(key, registration{callerID: callerID, api: api})
	return acts
}

// unregister removes callerID's registration of key (the API must match)
// and reports whether it was there.
func (s *state) unregister(kind regKind, key, callerID, api string) (reply, bool) {
	n := s.nodes[callerID]
	if n == nil {
		return reply{codeSuccess, fmt.Sprintf("[%s] is not a registered node", callerID), 0}, false
	}
	removed := s.regs[kind].remove(key, registration{callerID: callerID, api: api})
	if removed {
		delete(n.keys[kind], key)
	}
	if n.empty() {
		delete(s.nodes, callerID)
	}
	if !removed {
		return reply{codeSuccess, fmt.Sprintf("[%s] is not a known provider of [%s]", callerID, key), 0}, false
	}
	return reply{codeSuccess, fmt.Sprintf("Unregistered [%s] as provider of [%s]", callerID, key), 1}, true
}

// publisherUpdates tells every subscriber of topic its publishers.
func (s *state) publisherUpdates(topic string) []action {
	pubs := s.regs[kindPublisher].apis(topic)
	var acts []action
	for _, api := range s.regs[kindSubscriber].apis(topic) {
		acts = append(acts, publisherUpdate{API: api, Topic: topic, Publishers: pubs})
	}
	return acts
}

// argument validators: each checks (and may resolve) one argument, or
// returns the error status.
type validator func(v any, callerID string) (any, string)

func nonEmptyString(name string) validator {
	return func(v any, _ string) (any, string) {
		s, ok := v.(string)
		switch {
		case v == nil || ok && s == "":
			return nil, fmt.Sprintf("ERROR: parameter [%s] must be specified and non-empty", name)
		case !ok:
			return nil, fmt.Sprintf("ERROR: parameter [%s] must be a string", name)
		}
		return s, ""
	}
}

func notNil(name string) validator {
	return func(v any, _ string) (any, string) {
		if v == nil {
			return nil, fmt.Sprintf("ERROR: parameter [%s] must be specified", name)
		}
		return v, ""
	}
}

func isAPI(name string) validator {
	return func(v any, _ string) (any, string) {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, fmt.Sprintf("ERROR: parameter [%s] is not an XMLRPC URI", name)
		}
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "rosrpc://") {
			return nil, fmt.Sprintf("ERROR: parameter [%s] is not an RPC URI", name)
		}
		return s, ""
	}
}

func validName(name string) validator {
	return func(v any, callerID string) (any, string) {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, fmt.Sprintf("ERROR: parameter [%s] must be a non-empty string", name)
		}
		if strings.ContainsAny(s, ": ") {
			return nil, fmt.Sprintf("ERROR: parameter [%s] contains illegal chars", name)
		}
		return resolveName(s, callerID), ""
	}
}

// isTopic validates topic and service names: valid, and not "/".
func isTopic(name string) validator {
	valid := validName(name)
	return func(v any, callerID string) (any, string) {
		r, msg := valid(v, callerID)
		if msg != "" {
			return nil, msg
		}
		if v == "/" {
			return nil, fmt.Sprintf("ERROR: parameter [%s] cannot be the global namespace", name)
		}
		return r, ""
	}
}

func emptyOrValidName(name string) validator {
	return func(v any, callerID string) (any, string) {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Sprintf("ERROR: parameter [%s] must be a string", name)
		}
		if s == "" {
			return "", ""
		}
		return resolveName(s, callerID), ""
	}
}

func validTypeName(name string) validator {
	return func(v any, _ string) (any, string) {
		if v == "*" {
			return "*", ""
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, fmt.Sprintf("ERROR: parameter [%s] must be a non-empty string", name)
		}
		if len(strings.Split(s, "/")) != 2 {
			return nil, fmt.Sprintf("ERROR: parameter [%s] is not a valid package resource name", name)
		}
		return s, ""
	}
}

// method is one master API method: its argument validators (after the
// caller ID), the value returned with an error, and the implementation,
// which gets the validated arguments.
type method struct {
	validators []validator
	errValue   func() any
	do         func(s *state, callerID string, args []any) (reply, []action)
}

func constant(v any) func() any { return func() any { return v } }

func emptyList() any { return []any{} }

var methods = map[string]method{
	"getUri": {nil, constant(""), func(s *state, _ string, _ []any) (reply, []action) {
		return reply{codeSuccess, "", s.uri}, nil
	}},
	"getPid": {nil, constant(-1), func(s *state, _ string, _ []any) (reply, []action) {
		return reply{codeSuccess, "", s.pid}, nil
	}},

	"registerService": {
		[]validator{isTopic("service"), isAPI("service_api"), isAPI("caller_api")}, constant(0),
		(*state).registerService},
	"lookupService":     {[]validator{isTopic("service")}, constant(""), (*state).lookupService},
	"unregisterService": {[]validator{isTopic("service"), isAPI("service_api")}, constant(0), (*state).unregisterService},

	"registerSubscriber": {
		[]validator{isTopic("topic"), validTypeName("topic_type"), isAPI("caller_api")}, emptyList,
		(*state).registerSubscriber},
	"unregisterSubscriber": {[]validator{isTopic("topic"), isAPI("caller_api")}, constant(0), (*state).unregisterSubscriber},
	"registerPublisher": {
		[]validator{isTopic("topic"), validTypeName("topic_type"), isAPI("caller_api")}, emptyList,
		(*state).registerPublisher},
	"unregisterPublisher": {[]validator{isTopic("topic"), isAPI("caller_api")}, constant(0), (*state).unregisterPublisher},

	"lookupNode":         {[]validator{validName("node")}, constant(""), (*state).lookupNode},
	"getPublishedTopics": {[]validator{emptyOrValidName("subgraph")}, constant(0), (*state).getPublishedTopics},
	"getTopicTypes":      {nil, emptyList, (*state).getTopicTypes},
	"getSystemState": {nil, func() any { return []any{[]any{}, []any{}, []any{}} },
		(*state).getSystemState},

	"deleteParam":      {[]validator{nonEmptyString("key")}, constant(0), (*state).deleteParam},
	"setParam":         {[]validator{nonEmptyString("key"), notNil("value")}, constant(0), (*state).setParam},
	"getParam":         {[]validator{nonEmptyString("key")}, constant(0), (*state).getParam},
	"searchParam":      {[]validator{nonEmptyString("key")}, constant(0), (*state).searchParam},
	"subscribeParam":   {[]validator{isAPI("caller_api"), nonEmptyString("key")}, constant(0), (*state).subscribeParam},
	"unsubscribeParam": {[]validator{isAPI("caller_api"), nonEmptyString("key")}, constant(0), (*state).unsubscribeParam},
	"hasParam":         {[]validator{nonEmptyString("key")}, constant(false), (*state).hasParam},
	"getParamNames":    {nil, emptyList, (*state).getParamNames},
}

// call runs a master or parameter API method. Unknown methods are a fault;
// bad arguments are an error reply, as rosmaster answers them.
func (s *state) call(name string, params []any) (reply, []action, *fault) {
	m, ok := methods[name]
	if !ok {
		if name == "shutdown" {
			return reply{codeFailure, "the embedded master stops with the program that runs it", 0}, nil, nil
		}
		return reply{}, nil, &fault{faultMethodNotFound, fmt.Sprintf("method %q is not supported", name)}
	}
	if len(params) == 0 {
		return reply{codeError, "missing required caller_id parameter", m.errValue()}, nil, nil
	}
	if len(params) != len(m.validators)+1 {
		return reply{codeError, "Error: bad call arity", m.errValue()}, nil, nil
	}
	callerID, ok := params[0].(string)
	if !ok {
		return reply{codeError, "caller_id must be a string", m.errValue()}, nil, nil
	}
	args := make([]any, len(m.validators))
	for i, v := range m.validators {
		a, msg := v(params[i+1], callerID)
		if msg != "" {
			return reply{codeError, msg, m.errValue()}, nil, nil
		}
		args[i] = a
	}
	r, acts := m.do(s, callerID, args)
	return r, acts, nil
}

// dispatch runs an XML-RPC method and returns the response value: the
// reply triple, or for system.multicall the list of each call's result.
func (s *state) dispatch(name string, params []any) (any, []action, *fault) {
	if name != "system.multicall" {
		r, acts, f := s.call(name, params)
		if f != nil {
			return nil, nil, f
		}
		return r.triple(), acts, nil
	}
	if len(params) != 1 {
		return nil, nil, &fault{faultInvalidParams, "system.multicall takes one array of calls"}
	}
	calls, ok := params[0].([]any)
	if !ok {
		return nil, nil, &fault{faultInvalidParams, "system.multicall takes one array of calls"}
	}
	out := make([]any, 0, len(calls))
	var acts []action
	for _, c := range calls {
		f := func() *fault {
			m, ok := c.(map[string]any)
			if !ok {
				return &fault{faultInvalidParams, "a call is not a struct"}
			}
			name, ok := m["methodName"].(string)
			if !ok {
				return &fault{faultInvalidParams, "a call has no methodName"}
			}
			if name == "system.multicall" {
				return &fault{faultInvalidParams, "recursive system.multicall"}
			}
			ps, ok := m["params"].([]any)
			if !ok {
				return &fault{faultInvalidParams, "a call has no params array"}
			}
			r, a, f := s.call(name, ps)
			if f != nil {
				return f
			}
			out = append(out, []any{r.triple()})
			acts = append(acts, a...)
			return nil
		}()
		if f != nil {
			out = append(out, map[string]any{"faultCode": f.Code, "faultString": f.Message})
		}
	}
	return out, acts, nil
}

func (s *state) registerService(callerID string, args []any) (reply, []action) {
	service, serviceAPI, callerAPI := args[0].(string), args[1].(string), args[2].(string)
	acts := s.register(kindService, service, callerID, callerAPI)
	// A service has one provider: the newest replaces the others.
	for _, old := range s.regs[kindService][service] {
		if n := s.nodes[old.callerID]; old.callerID != callerID && n != nil {
			delete(n.keys[kindService], service)
			if n.empty() {
				delete(s.nodes, old.callerID)
			}
		}
	}
	s.regs[kindService][service] = []registration{{callerID: callerID, api: callerAPI}}
	s.services[service] = serviceProvider{callerID: callerID, api: serviceAPI}
	return reply{codeSuccess, fmt.Sprintf("Registered [%s] as provider of [%s]", callerID, service), 1}, acts
}

func (s *state) lookupService(_ string, args []any) (reply, []action) {
	service := args[0].(string)
	p, ok := s.services[service]
	if !ok {
		return reply{codeError, "no provider", ""}, nil
	}
	return reply{codeSuccess, fmt.Sprintf("rosrpc URI: [%s]", p.api), p.api}, nil
}

func (s *state) unregisterService(callerID string, args []any) (reply, []action) {
	service, serviceAPI := args[0].(string), args[1].(string)
	n := s.nodes[callerID]
	if n == nil {
		return reply{codeSuccess, fmt.Sprintf("[%s] is not a registered node", callerID), 0}, nil
	}
	p, ok := s.services[service]
	var r reply
	switch {
	case !ok:
		r = reply{codeSuccess, fmt.Sprintf("[%s] is not a provider of [%s]", callerID, service), 0}
	case p != serviceProvider{callerID: callerID, api: serviceAPI}:
		r = reply{codeSuccess, fmt.Sprintf("[%s] is no longer the current service api handle for [%s]", serviceAPI, service), 0}
	default:
		delete(s.services, service)
		delete(s.regs[kindService], service)
		delete(n.keys[kindService], service)
		r = reply{codeSuccess, fmt.Sprintf("Unregistered [%s] as provider of [%s]", callerID, service), 1}
	}
	if n.empty() {
		delete(s.nodes, callerID)
	}
	return r, nil
}

func (s *state) registerSubscriber(callerID string, args []any) (reply, []action) {
	topic, typ, api := args[0].(string), args[1].(string), args[2].(string)
	acts := s.register(kindSubscriber, topic, callerID, api)
	if _, ok := s.topicTypes[topic]; !ok && typ != "*" {
		s.topicTypes[topic] = typ
	}
	return reply{codeSuccess, fmt.Sprintf("Subscribed to [%s]", topic), s.regs[kindPublisher].apis(topic)}, acts
}

func (s *state) unregisterSubscriber(callerID string, args []any) (reply, []action) {
	r, _ := s.unregister(kindSubscriber, args[0].(string), callerID, args[1].(string))
	if s.unsub != nil {
		s.unsub(args[0].(string), callerID)
	}
	return r, nil
}

func (s *state) registerPublisher(callerID string, args []any) (reply, []action) {
	topic, typ, api := args[0].(string), args[1].(string), args[2].(string)
	if s.guard != nil {
		if why := s.guard(topic, callerID); why != "" {
			return reply{codeError, fmt.Sprintf("ERROR: [%s] may not publish [%s]: %s", callerID, topic, why), []any{}}, nil
		}
	}
	acts := s.register(kindPublisher, topic, callerID, api)
	if _, ok := s.topicTypes[topic]; !ok || typ != "*" {
		s.topicTypes[topic] = typ
	}
	acts = append(acts, s.publisherUpdates(topic)...)
	return reply{codeSuccess, fmt.Sprintf("Registered [%s] as publisher of [%s]", callerID, topic),
		s.regs[kindSubscriber].apis(topic)}, acts
}

func (s *state) unregisterPublisher(callerID string, args []any) (reply, []action) {
	topic := args[0].(string)
	r, removed := s.unregister(kindPublisher, topic, callerID, args[1].(string))
	if !removed {
		return r, nil
	}
	return r, s.publisherUpdates(topic)
}

func (s *state) lookupNode(_ string, args []any) (reply, []action) {
	name := args[0].(string)
	n, ok := s.nodes[name]
	if !ok {
		return reply{codeError, fmt.Sprintf("unknown node [%s]", name), ""}, nil
	}
	return reply{codeSuccess, "node api", n.api}, nil
}

func (s *state) getPublishedTopics(_ string, args []any) (reply, []action) {
	subgraph := args[0].(string)
	if subgraph != "" && !strings.HasSuffix(subgraph, "/") {
		subgraph += "/"
	}
	out := []any{}
	for _, t := range s.regs[kindPublisher].sortedKeys() {
		if strings.HasPrefix(t, subgraph) {
			out = append(out, []any{t, s.topicTypes[t]})
		}
	}
	return reply{codeSuccess, "current topics", out}, nil
}

func (s *state) getTopicTypes(string, []any) (reply, []action) {
	topics := make([]string, 0, len(s.topicTypes))
	for t := range s.topicTypes {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	out := []any{}
	for _, t := range topics {
		out = append(out, []any{t, s.topicTypes[t]})
	}
	return reply{codeSuccess, "current system state", out}, nil
}

func (s *state) getSystemState(string, []any) (reply, []action) {
	return reply{codeSuccess, "current system state", []any{
		s.regs[kindPublisher].systemState(),
		s.regs[kindSubscriber].systemState(),
		s.regs[kindService].systemState(),
	}}, nil
}

func (s *state) deleteParam(callerID string, args []any) (reply, []action) {
	key := resolveName(args[0].(string), callerID)
	if err := s.params.delete(key); err != nil {
		return reply{codeError, fmt.Sprintf("parameter [%s] is not set", key), 0}, nil
	}
	return reply{codeSuccess, fmt.Sprintf("parameter %s deleted", key), 0},
		paramUpdates(s.regs[kindParamSub], key, map[string]any{}, "")
}

func (s *state) setParam(callerID string, args []any) (reply, []action) {
	key := resolveName(args[0].(string), callerID)
	if err := s.params.set(key, args[1]); err != nil {
		return reply{codeError, fmt.Sprintf("Error: invalid arguments: %v", err), 0}, nil
	}
	return reply{codeSuccess, fmt.Sprintf("parameter %s set", key), 0},
		paramUpdates(s.regs[kindParamSub], key, args[1], callerID)
}

func (s *state) getParam(callerID string, args []any) (reply, []action) {
	key := resolveName(args[0].(string), callerID)
	v, err := s.params.get(key)
	if err != nil {
		return reply{codeError, fmt.Sprintf("Parameter [%s] is not set", key), 0}, nil
	}
	return reply{codeSuccess, fmt.Sprintf("Parameter [%s]", key), deepCopy(v)}, nil
}

func (s *state) searchParam(callerID string, args []any) (reply, []action) {
	key := args[0].(string)
	found, err := s.params.search(callerID, key)
	if err != nil {
		return reply{codeFailure, fmt.Sprintf("Internal failure: %v", err), 0}, nil
	}
	if found == "" {
		return reply{codeError, fmt.Sprintf("Cannot find parameter [%s] in an upwards search", key), ""}, nil
	}
	return reply{codeSuccess, fmt.Sprintf("Found [%s]", found), found}, nil
}

// paramSubKey is the key a parameter subscription is recorded under.
func paramSubKey(key string) string {
	if key == "/" {
		return key
	}
	return canonicalName(key) + "/"
}

func (s *state) subscribeParam(callerID string, args []any) (reply, []action) {
	api := args[0].(string)
	key := resolveName(args[1].(string), callerID)
	sk := paramSubKey(key)
	v, err := s.params.get(sk)
	if err != nil {
		v = map[string]any{}
	}
	v = deepCopy(v)
	acts := s.register(kindParamSub, sk, callerID, api)
	return reply{codeSuccess, fmt.Sprintf("Subscribed to parameter [%s]", key), v}, acts
}

func (s *state) unsubscribeParam(callerID string, args []any) (reply, []action) {
	api := args[0].(string)
	key := resolveName(args[1].(string), callerID)
	_, removed := s.unregister(kindParamSub, paramSubKey(key), callerID, api)
	n := 0
	if removed {
		n = 1
	}
	return reply{codeSuccess, fmt.Sprintf("Unsubscribe to parameter [%s]", key), n}, nil
}

func (s *state) hasParam(callerID string, args []any) (reply, []action) {
	key := resolveName(args[0].(string), callerID)
	return reply{codeSuccess, key, s.params.has(key)}, nil
}

func (s *state) getParamNames(string, []any) (reply, []action) {
	names := s.params.names()
	if names == nil {
		names = []string{}
	}
	return reply{codeSuccess, "Parameter names", names}, nil
}
