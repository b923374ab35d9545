//go:build ros2

package ros2

/*
#cgo pkg-config: CycloneDDS
#cgo CFLAGS: -O2 -Wall
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// Built reports whether this binary has the ROS 2 transport (build tag
// ros2).
const Built = true

// Guid is a DDS GUID: 12-byte participant prefix, 4-byte entity id.
type Guid = rmsgs.Gid

// Prefix is the participant part of a GUID.
func Prefix(g Guid) [12]byte { return [12]byte(g[:12]) }

// QoS is an endpoint's quality of service (KEEP_LAST Depth).
type QoS struct {
	Reliable       bool
	TransientLocal bool
	Depth          int
}

// The QoS profiles tcs uses. Latched is what every ROS 2 reader matches
// (best-effort or reliable, volatile or transient-local) and what a late
// reader gets the last sample of: the bridge's writers use it. ClockQoS is
// rclcpp's /clock subscription; Commands reads any writer.
var (
	Latched  = QoS{Reliable: true, TransientLocal: true, Depth: 1}
	ClockQoS = QoS{Reliable: false, TransientLocal: false, Depth: 1}
	Commands = QoS{Reliable: false, TransientLocal: false, Depth: 64}
)

func (q QoS) c() C.tcs_qos {
	var out C.tcs_qos
	if q.Reliable {
		out.reliable = 1
	}
	if q.TransientLocal {
		out.transient_local = 1
	}
	out.depth = C.int(q.Depth)
	return out
}

// NodeConf configures a Node. Zero values take the defaults.
type NodeConf struct {
	// Domain is the DDS domain. Default: $ROS_DOMAIN_ID, else 0.
	Domain int
	// Interface is the address Cyclone binds to. Default 127.0.0.1
	// (loopback only, unicast discovery); "*" lets Cyclone choose
	// (multicast discovery on its default interface).
	Interface string
	// Config is a whole Cyclone XML configuration that replaces the one
	// built from Interface (optional).
	Config string
	// Distro selects the ros_discovery_info layout. Default Humble (the
	// zero value; StartBridge defaults to Jazzy's).
	Distro rmsgs.Distro
	// Namespace and Name are the node's, as ros2 node list shows it.
	// Default "/" and "tcs".
	Namespace, Name string
}

// Node is the bridge's DDS participant and its ROS 2 node identity.
type Node struct {
	conf     NodeConf
	pp       C.dds_entity_t
	efd      int
	guid     Guid
	pubGraph C.dds_entity_t
	subGraph C.dds_entity_t
	pubNews  C.dds_entity_t // read conditions: a sample of pubGraph, subGraph not read yet
	subNews  C.dds_entity_t
	disc     *Writer

	graphMu    sync.Mutex // the graph's last lists
	graphRead  bool
	pubs, subs []Endpoint

	mu      sync.Mutex
	readers []Guid
	writers []Guid
	topics  map[string]topicEnt
	closed  bool
}

type topicEnt struct {
	ent  C.dds_entity_t
	st   *C.struct_ddsi_sertype
	typ  string
	name string
}

// LoopbackConfig is the Cyclone configuration tcs uses by default: bound
// to 127.0.0.1, no multicast, unicast discovery of the participants on
// this host (participant indices 0-119, the ports ROS 2 nodes take).
const LoopbackConfig = `<CycloneDDS><Domain Id="any"><General><Interfaces>` +
	`<NetworkInterface address="127.0.0.1"/></Interfaces><AllowMulticast>false</AllowMulticast></General>` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>119</MaxAutoParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`

// ClientConfig is the Cyclone configuration (CYCLONEDDS_URI) tcs gives its
// clients, and tells a user to export for the ros2 tools, when the bridge
// is bound to loopback: the same interface, no multicast, unicast
// discovery of the participants on this host. Without it a Jazzy node does
// not meet the bridge: rmw_cyclonedds's LOCALHOST discovery range turns
// multicast off and adds localhost as a peer, but does not choose the
// interface, so the node advertises its default interface's address (eth0),
// which a bridge listening on 127.0.0.1 cannot reach, and never matches its
// clock. rmw_cyclonedds puts its own settings for the range before this
// (Cyclone merges them, the later winning): among them
// MaxAutoParticipantIndex 32, with which the 33rd participant on the host
// fails to start ("Failed to find a free participant index"), so this one
// raises it to LoopbackConfig's 119.
const ClientConfig = `<CycloneDDS><Domain Id="any"><General><Interfaces>` +
	`<NetworkInterface address="127.0.0.1"/></Interfaces><AllowMulticast>false</AllowMulticast></General>` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>119</MaxAutoParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`

func ddsErr(what string, rc C.dds_return_t) error {
	if rc >= 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", what, C.GoString(C.dds_strretcode(rc)), int(rc))
}

// NewNode creates the participant (USER_DATA enclave=/;), its eventfd,
// the graph readers and the ros_discovery_info writer.
func NewNode(conf NodeConf) (n *Node, err error) {
	if conf.Domain == 0 {
		if s := os.Getenv("ROS_DOMAIN_ID"); s != "" {
			d, err := strconv.Atoi(s)
			if err != nil || d < 0 || d > 232 {
				return nil, fmt.Errorf("ros2: ROS_DOMAIN_ID=%q: want a domain 0-232", s)
			}
			conf.Domain = d
		}
	}
	if conf.Interface == "" {
		conf.Interface = "127.0.0.1"
	}
	if conf.Namespace == "" {
		conf.Namespace = "/"
	}
	if conf.Name == "" {
		conf.Name = "tcs"
	}
	cfg := conf.Config
	switch {
	case cfg != "":
	case conf.Interface == "127.0.0.1":
		cfg = LoopbackConfig
	case conf.Interface != "*":
		cfg = `<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface address="` + conf.Interface +
			`"/></Interfaces></General></Domain></CycloneDDS>`
	}
	n = &Node{conf: conf, efd: -1, topics: map[string]topicEnt{}}
	if n.efd, err = linux.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("ros2: %w", err)
	}
	var ccfg *C.char
	if cfg != "" {
		ccfg = C.CString(cfg)
		defer C.free(unsafe.Pointer(ccfg))
	}
	ud := C.CString("enclave=/;")
	defer C.free(unsafe.Pointer(ud))
	n.pp = C.tcs_participant(C.uint32_t(conf.Domain), ccfg, ud)
	if n.pp < 0 {
		unix.Close(n.efd)
		return nil, fmt.Errorf("ros2: create a Cyclone DDS participant on domain %d: %w", conf.Domain, ddsErr("dds_create_participant", C.dds_return_t(n.pp)))
	}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if err := ddsErr("dds_get_guid", C.tcs_guid(n.pp, (*C.uint8_t)(&n.guid[0]))); err != nil {
		return nil, fmt.Errorf("ros2: %w", err)
	}
	n.pubGraph = C.dds_create_reader(n.pp, C.DDS_BUILTIN_TOPIC_DCPSPUBLICATION, nil, nil)
	n.subGraph = C.dds_create_reader(n.pp, C.DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, nil, nil)
	if n.pubGraph < 0 || n.subGraph < 0 {
		return nil, fmt.Errorf("ros2: %w", ddsErr("builtin-topic readers", C.dds_return_t(min(n.pubGraph, n.subGraph))))
	}
	const notRead = C.DDS_NOT_READ_SAMPLE_STATE | C.DDS_ANY_VIEW_STATE | C.DDS_ANY_INSTANCE_STATE
	n.pubNews = C.dds_create_readcondition(n.pubGraph, notRead)
	n.subNews = C.dds_create_readcondition(n.subGraph, notRead)
	if n.pubNews < 0 || n.subNews < 0 {
		return nil, fmt.Errorf("ros2: %w", ddsErr("builtin-topic read conditions", C.dds_return_t(min(n.pubNews, n.subNews))))
	}
	if n.disc, err = n.writer(endpointConf{dds: rmsgs.DiscoveryTopic, label: rmsgs.DiscoveryTopic, rosType: rmsgs.ParticipantEntitiesInfo, q: Latched}); err != nil {
		return nil, err
	}
	if C.tcs_watch_threads(C.int64_t(watchMax)) < 0 {
		return nil, fmt.Errorf("ros2: Cyclone's unicast receive thread (recvUC) did not start within %v: commands could not be stamped when they arrive", watchMax)
	}
	return n, n.announce()
}

// Guid is the participant's GUID.
func (n *Node) Guid() Guid { return n.guid }

// Fd is an eventfd that becomes readable when a sample arrived on any
// reader made with notify; Reset clears it.
func (n *Node) Fd() int { return n.efd }

// Reset clears Fd (call it before taking the samples).
func (n *Node) Reset() {
	var b [8]byte
	_, _, _ = linux.ReadU64(n.efd, &b)
}

// watchMax bounds how long New waits for Cyclone's receive and delivery
// threads to name themselves (tcs_watch_threads).
const watchMax = 2 * time.Second

// Settle waits, up to max, until Cyclone's receive and delivery threads
// sleep: every datagram that was in the bridge's sockets when it was
// called has then reached its reader (and Fd). It reports whether they
// settled in time.
func (n *Node) Settle(max time.Duration) bool { return C.tcs_settle(C.int64_t(max)) == 1 }

func (n *Node) topic(name, rosType string) (topicEnt, error) {
	dtype, err := rmsgs.DDSType(rosType)
	if err != nil {
		return topicEnt{}, err
	}
	if t, ok := n.topics[name]; ok {
		if t.typ != dtype {
			return topicEnt{}, fmt.Errorf("ros2: topic %s has type %s here, not %s", name, rmsgs.ROSType(t.typ), rosType)
		}
		return t, nil
	}
	cn, ct := C.CString(name), C.CString(dtype)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(ct))
	var st *C.struct_ddsi_sertype
	e := C.tcs_topic(n.pp, cn, ct, &st)
	if e < 0 {
		return topicEnt{}, fmt.Errorf("ros2: topic %s (%s): %w", name, dtype, ddsErr("dds_create_topic_sertype", C.dds_return_t(e)))
	}
	t := topicEnt{ent: e, st: st, typ: dtype, name: name}
	n.topics[name] = t
	return t, nil
}

// Writer is a DDS writer of opaque CDR samples.
type Writer struct {
	n     *Node
	ent   C.dds_entity_t
	st    *C.struct_ddsi_sertype
	guid  Guid
	Topic string // the ROS 2 topic (or the DDS one for ros_discovery_info)
	Type  string // ROS 2 type name
}

// Writer creates a writer on ROS 2 topic (an absolute name) of rosType.
// From Iron on it carries rosType's hash (rmsgs.TypeHash) in its USER_DATA,
// as rmw_cyclonedds does; a type tcs does not know goes without.
func (n *Node) Writer(topic, rosType string, q QoS) (*Writer, error) {
	return n.WriterHashed(topic, rosType, "", q)
}

// WriterHashed is Writer with type hash h (RIHS01_...; "" takes
// rmsgs.TypeHash's): for a relayed type tcs does not know, whose hash is
// the publisher's.
func (n *Node) WriterHashed(topic, rosType, h string, q QoS) (*Writer, error) {
	name, err := rmsgs.TopicName(topic)
	if err != nil {
		return nil, err
	}
	return n.writer(endpointConf{dds: name, label: topic, rosType: rosType, hash: h, q: q, listed: true})
}

// endpointConf is a writer or reader to create.
type endpointConf struct {
	dds      string // DDS topic (rt/..., rq/..., rr/..., ros_discovery_info)
	label    string // the ROS 2 topic or service, for Topic and errors
	rosType  string
	hash     string // type hash; "" takes rmsgs.TypeHash(rosType)
	userData string // key=value; pairs put before the type hash (serviceid=...;)
	q        QoS
	listed   bool // listed in the node's ros_discovery_info
	notify   bool // reader: tell eventfd efd of each sample
	efd      int
}

// userData is the endpoint's USER_DATA: its own pairs, then from Iron on
// "typehash=RIHS01_...;" (rmw_cyclonedds's layout; Humble has no hashes).
func (n *Node) userData(ec endpointConf) string {
	ud := ec.userData
	if n.conf.Distro >= rmsgs.Iron {
		h := ec.hash
		if h == "" {
			h = rmsgs.TypeHash(ec.rosType)
		}
		ud += rmsgs.UserDataTypeHash(h)
	}
	return ud
}

func (n *Node) writer(ec endpointConf) (*Writer, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, err := n.topic(ec.dds, ec.rosType)
	if err != nil {
		return nil, err
	}
	ud := C.CString(n.userData(ec))
	defer C.free(unsafe.Pointer(ud))
	e := C.tcs_writer(n.pp, t.ent, ec.q.c(), ud)
	if e < 0 {
		return nil, fmt.Errorf("ros2: writer on %s: %w", ec.label, ddsErr("dds_create_writer", C.dds_return_t(e)))
	}
	w := &Writer{n: n, ent: e, st: t.st, Topic: ec.label, Type: ec.rosType}
	C.tcs_guid(e, (*C.uint8_t)(&w.guid[0]))
	if ec.listed {
		n.writers = append(n.writers, w.guid)
	}
	return w, nil
}

// Write publishes a CDR sample (encapsulation header included). With the
// bridge's KEEP_LAST writers it does not block: when it returns, the sample
// was sent to every matched reader (on loopback: it is in their sockets).
// It does not allocate.
func (w *Writer) Write(sample []byte) error {
	if len(sample) == 0 {
		return errors.New("ros2: empty sample")
	}
	if rc := C.tcs_write(w.ent, w.st, unsafe.Pointer(&sample[0]), C.uint32_t(len(sample))); rc < 0 {
		return ddsErr("dds_writecdr on "+w.Topic, rc)
	}
	return nil
}

// WaitAcks waits up to timeout until every matched reliable reader has
// acknowledged what w wrote.
// It does not allocate unless it fails.
func (w *Writer) WaitAcks(timeout time.Duration) error {
	if rc := C.tcs_wait_acks(w.ent, C.int64_t(timeout)); rc < 0 {
		return ddsErr("dds_wait_for_acks on "+w.Topic, rc)
	}
	return nil
}

// Guid is the writer's GUID.
func (w *Writer) Guid() Guid { return w.guid }

// Match is a matched remote endpoint.
type Match struct {
	Key, Participant Guid
	UserData         string // only from MatchedUserData
}

// Matched lists the readers matched with w.
func (w *Writer) Matched() ([]Match, error) { return matched(w.ent, true, false) }

// MatchChanged reports whether the readers matched with w changed since
// the last call (the first call: since w was created). It costs no
// allocation; one caller only, as each call resets what it reports.
func (w *Writer) MatchChanged() (bool, error) {
	rc := C.tcs_match_changed(w.ent)
	if rc < 0 {
		return false, ddsErr("publication matched status", C.dds_return_t(rc))
	}
	return rc == 1, nil
}

// MatchedUserData lists the readers matched with w with their USER_DATA.
func (w *Writer) MatchedUserData() ([]Match, error) { return matched(w.ent, true, true) }

// userDataMax is the size of the buffers USER_DATA is copied into
// (tcs_endpoint.userdata): a ROS 2 endpoint's is under 200 bytes.
const userDataMax = 512

func matched(e C.dds_entity_t, writer, withUD bool) ([]Match, error) {
	isw := C.int(0)
	if writer {
		isw = 1
	}
	// Most of tcs's endpoints are matched with one or two: buffers for 8
	// first, larger ones only when more are matched (the shim lists at
	// most matchMax). This runs for every writer at each refresh.
	for size := 8; ; size = min(matchMax, 4*size) {
		keys := make([][16]byte, size)
		pps := make([][16]byte, size)
		var uds *[userDataMax]C.char
		if withUD {
			buf := make([][userDataMax]C.char, size)
			uds = &buf[0]
		}
		var total C.int
		k := C.tcs_matched(e, isw, (*[16]C.uint8_t)(unsafe.Pointer(&keys[0])), (*[16]C.uint8_t)(unsafe.Pointer(&pps[0])), uds, C.int(size), &total)
		if k < 0 {
			return nil, ddsErr("matched endpoints", k)
		}
		if int(total) > size && size < matchMax {
			continue
		}
		out := make([]Match, int(k))
		for i := range out {
			out[i] = Match{Key: keys[i], Participant: pps[i]}
			if withUD {
				p := unsafe.Add(unsafe.Pointer(uds), i*userDataMax)
				out[i].UserData = C.GoString((*C.char)(p))
			}
		}
		return out, nil
	}
}

// matchMax is how many matched endpoints matched lists at most.
const matchMax = 256

// Reader is a DDS reader of opaque CDR samples.
type Reader struct {
	ent   C.dds_entity_t
	guid  Guid
	Topic string
	Type  string
	ln    C.uint32_t // take's length out
}

// Reader creates a reader on ROS 2 topic of rosType; with notify, each
// sample makes Fd readable. It carries its type's hash as Writer does.
func (n *Node) Reader(topic, rosType string, q QoS, notify bool) (*Reader, error) {
	return n.ReaderHashed(topic, rosType, "", q, notify)
}

// ReaderHashed is Reader with type hash h, as WriterHashed.
func (n *Node) ReaderHashed(topic, rosType, h string, q QoS, notify bool) (*Reader, error) {
	name, err := rmsgs.TopicName(topic)
	if err != nil {
		return nil, err
	}
	ec := endpointConf{dds: name, label: topic, rosType: rosType, hash: h, q: q, listed: true}
	ec.notify, ec.efd = notify, n.efd
	return n.reader(ec)
}

func (n *Node) reader(ec endpointConf) (*Reader, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, err := n.topic(ec.dds, ec.rosType)
	if err != nil {
		return nil, err
	}
	efd := C.int(-1)
	if ec.notify {
		efd = C.int(ec.efd)
	}
	ud := C.CString(n.userData(ec))
	defer C.free(unsafe.Pointer(ud))
	e := C.tcs_reader(n.pp, t.ent, ec.q.c(), ud, efd)
	if e < 0 {
		return nil, fmt.Errorf("ros2: reader on %s: %w", ec.label, ddsErr("dds_create_reader", C.dds_return_t(e)))
	}
	r := &Reader{ent: e, Topic: ec.label, Type: ec.rosType}
	C.tcs_guid(e, (*C.uint8_t)(&r.guid[0]))
	if ec.listed {
		n.readers = append(n.readers, r.guid)
	}
	return r, nil
}

// Take takes the oldest sample into buf. ok is false when there is none;
// n > len(buf) means the sample did not fit (it is lost). pub is its
// writer's GUID (zero when the writer is gone). It does not allocate; it
// is for one goroutine at a time.
func (r *Reader) Take(buf []byte, pub *Guid) (n int, ok bool, err error) {
	return r.take(buf, pub, nil)
}

// take is Take that also copies the writer's USER_DATA into ud (NUL
// terminated) when ud is not empty.
func (r *Reader) take(buf []byte, pub *Guid, ud []byte) (n int, ok bool, err error) {
	ln := &r.ln // a field: a local whose address goes to C would be allocated each call
	p := unsafe.Pointer(nil)
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	var udp *C.char
	if len(ud) > 0 {
		udp = (*C.char)(unsafe.Pointer(&ud[0]))
	}
	rc := C.tcs_take(r.ent, p, C.uint32_t(len(buf)), ln, (*C.uint8_t)(&pub[0]), udp, C.int(len(ud)))
	switch {
	case rc < 0:
		return 0, false, ddsErr("dds_takecdr on "+r.Topic, rc)
	case rc == 0:
		return 0, false, nil
	}
	return int(*ln), true, nil
}

// Matched lists the writers matched with r.
func (r *Reader) Matched() ([]Match, error) { return matched(r.ent, false, false) }

// Close deletes the reader: no sample reaches it, nor its eventfd, after
// it returns. (It stays listed in ros_discovery_info.)
func (r *Reader) Close() error {
	return ddsErr("dds_delete the reader on "+r.Topic, C.dds_delete(r.ent))
}

// Guid is the reader's GUID.
func (r *Reader) Guid() Guid { return r.guid }

// Endpoint is a reader or writer somewhere on the DDS domain.
type Endpoint struct {
	Key, Participant Guid
	Topic            string // DDS topic (rt/...)
	Type             string // DDS type name
	QoS              QoS
	UserData         string // key=value;... (typehash=RIHS01_...; from Iron on)
}

// Graph lists the alive writers and readers of the domain (the bridge's
// own included). It reads the builtin topics again only when they hold
// news (an endpoint appeared, changed or went away); otherwise it returns
// the lists of the last call, which callers must not modify.
func (n *Node) Graph() (pubs, subs []Endpoint, err error) {
	n.graphMu.Lock()
	defer n.graphMu.Unlock()
	pubs, err = graph(n.pubGraph, n.pubNews, n.pubs, n.graphRead)
	if err == nil {
		subs, err = graph(n.subGraph, n.subNews, n.subs, n.graphRead)
	}
	if err != nil {
		// A read that failed may have marked samples read: the next call
		// reads everything again.
		n.graphRead = false
		return nil, nil, err
	}
	n.pubs, n.subs, n.graphRead = pubs, subs, true
	return pubs, subs, nil
}

// graph lists the alive endpoints of builtin-topic reader rd: prev when
// rd was read before (read) and its condition news (samples not read yet)
// is not triggered, else all of them, in reads of a growing capacity until
// one is not filled.
func graph(rd, news C.dds_entity_t, prev []Endpoint, read bool) ([]Endpoint, error) {
	if read {
		switch c := C.dds_triggered(news); {
		case c < 0:
			return nil, ddsErr("read the builtin topics", c)
		case c == 0:
			return prev, nil
		}
	}
	for size := max(256, 2*len(prev)); ; size *= 2 {
		buf := (*C.tcs_endpoint)(C.malloc(C.size_t(size) * C.size_t(unsafe.Sizeof(C.tcs_endpoint{}))))
		if buf == nil {
			return nil, fmt.Errorf("read the builtin topics: no memory for %d endpoints", size)
		}
		var more C.int
		k := C.tcs_graph(rd, buf, C.int(size), &more)
		if k < 0 {
			C.free(unsafe.Pointer(buf))
			return nil, ddsErr("read the builtin topics", k)
		}
		if more != 0 {
			C.free(unsafe.Pointer(buf))
			continue
		}
		eps := unsafe.Slice(buf, int(k))
		out := make([]Endpoint, int(k))
		for i := range out {
			e := &eps[i]
			out[i] = Endpoint{
				Key:         *(*Guid)(unsafe.Pointer(&e.key[0])),
				Participant: *(*Guid)(unsafe.Pointer(&e.participant[0])),
				Topic:       C.GoString(&e.topic[0]),
				Type:        C.GoString(&e.typ[0]),
				QoS:         QoS{Reliable: e.reliable != 0, TransientLocal: e.transient_local != 0},
				UserData:    C.GoString(&e.userdata[0]),
			}
		}
		C.free(unsafe.Pointer(buf))
		return out, nil
	}
}

// announce publishes the node's ParticipantEntitiesInfo on
// ros_discovery_info (latched), listing every ROS endpoint made so far.
func (n *Node) announce() error {
	n.mu.Lock()
	info := rmsgs.ParticipantInfo{Gid: n.guid, Nodes: []rmsgs.NodeEntitiesInfo{{
		Namespace: n.conf.Namespace, Name: n.conf.Name,
		Readers: append([]Guid(nil), n.readers...), Writers: append([]Guid(nil), n.writers...)}}}
	n.mu.Unlock()
	if err := n.disc.Write(rmsgs.AppendParticipantInfo(nil, n.conf.Distro, &info)); err != nil {
		return fmt.Errorf("ros2: ros_discovery_info: %w", err)
	}
	return nil
}

// Loopback reports whether the node is bound to loopback with tcs's own
// configuration (LoopbackConfig).
func (n *Node) Loopback() bool { return n.conf.Interface == "127.0.0.1" && n.conf.Config == "" }

// Domain is the node's DDS domain (ROS_DOMAIN_ID).
func (n *Node) Domain() int { return n.conf.Domain }

// Announce republishes ros_discovery_info (after endpoints were added).
func (n *Node) Announce() error { return n.announce() }

// Close deletes the participant and everything in it.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	var errs []error
	if n.pp > 0 {
		if rc := C.dds_delete(n.pp); rc < 0 {
			errs = append(errs, ddsErr("ros2: delete the participant", rc))
		}
	}
	if n.efd >= 0 {
		errs = append(errs, unix.Close(n.efd))
	}
	return errors.Join(errs...)
}
