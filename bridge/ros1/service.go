package ros1

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/serviceproc"
)

// ServiceType is a ROS 1 service type: its name (std_srvs/Trigger) and
// MD5 sum. Its request and response types are Name + "Request" and
// Name + "Response".
type ServiceType struct {
	Name string
	MD5  string
}

// ServiceTypeOf returns the type of a goroslib service definition
// (std_srvs.Trigger{}).
func ServiceTypeOf(srv any) (ServiceType, error) {
	name, err := serviceproc.Type(srv)
	if err != nil {
		return ServiceType{}, fmt.Errorf("service type: %w", err)
	}
	md5, err := serviceproc.MD5(srv)
	if err != nil {
		return ServiceType{}, fmt.Errorf("service type %s: %w", name, err)
	}
	return ServiceType{Name: name, MD5: md5}, nil
}

// ServiceHandler answers one call of a service. req is the request's
// serialized body (without its length prefix); the handler returns the
// response's body, or an error whose text the caller receives as the
// service's failure (rospy raises ServiceException "service [/x]
// responded with an error: TEXT"; roscpp's call returns false). ctx ends
// when the node closes. Calls on different connections run concurrently.
type ServiceHandler func(ctx context.Context, callerid string, req []byte) ([]byte, error)

type service struct {
	name   string
	typ    ServiceType
	handle ServiceHandler
}

// MaxServiceRequest bounds one service request's body (the bridge's
// services take requests of a few bytes at most).
const MaxServiceRequest = 64 << 10

// AdvertiseService registers service name with the master, served on the
// node's TCPROS port (its rosrpc:// URI). Each connection is served by its
// own goroutine, one call after another as TCPROS requires; a persistent
// connection carries any number of calls.
func (n *Node) AdvertiseService(name string, t ServiceType, h ServiceHandler) error {
	s := &service{name: name, typ: t, handle: h}
	return register(n, n.services, name, s, "advertise service", func() error {
		return n.master.RegisterService(name, n.ServiceURI(), n.URI())
	})
}

// ServiceURI is the rosrpc:// URI the node's services are reached at.
func (n *Node) ServiceURI() string {
	return "rosrpc://" + net.JoinHostPort(n.conf.Host, strconv.Itoa(n.port))
}

// serveService serves one service client that sent header h: it answers
// the handshake (a probe, as rosservice makes to learn the type, gets the
// header only), then reads requests and writes responses until the client
// closes the connection or the node closes.
func (n *Node) serveService(c *net.TCPConn, h map[string]string) {
	name, caller := h["service"], h["callerid"]
	log := n.conf.Log.With().Str("service", name).Str("caller", caller).Logger()
	n.mu.Lock()
	s := n.services[name]
	n.mu.Unlock()
	if s == nil {
		log.Warn().Msg("ros1: rejected a service client: no such service on this node")
		_ = writeHeader(c, map[string]string{"error": "node " + n.conf.Name + " does not provide service " + strconv.Quote(name)})
		c.Close()
		return
	}
	if md5 := h["md5sum"]; md5 != "*" && md5 != s.typ.MD5 {
		reason := fmt.Sprintf("md5sum %s does not match %s (service type %s)", md5, s.typ.MD5, s.typ.Name)
		log.Warn().Str("reason", reason).Msg("ros1: rejected a service client")
		_ = writeHeader(c, map[string]string{"error": reason})
		c.Close()
		return
	}
	if err := writeHeader(c, map[string]string{
		"callerid": n.conf.Name, "md5sum": s.typ.MD5, "type": s.typ.Name,
		"request_type": s.typ.Name + "Request", "response_type": s.typ.Name + "Response",
	}); err != nil {
		log.Warn().Err(err).Msg("ros1: service client left during the handshake")
		c.Close()
		return
	}
	if h["probe"] == "1" {
		c.Close()
		return
	}
	if !n.trackConn(c) {
		c.Close()
		return
	}
	defer n.untrackConn(c)
	_ = c.SetDeadline(time.Time{})
	_ = c.SetNoDelay(true)
	var out []byte
	for {
		req, err := readServiceRequest(c, MaxServiceRequest)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Warn().Err(err).Msg("ros1: service connection dropped")
			}
			return
		}
		body, herr := s.handle(n.ctx, caller, req)
		if herr != nil {
			out = appendServiceResponse(out[:0], false, []byte(herr.Error()))
		} else {
			out = appendServiceResponse(out[:0], true, body)
		}
		_ = c.SetWriteDeadline(time.Now().Add(n.conf.CallTimeout))
		if _, err := c.Write(out); err != nil {
			log.Warn().Err(err).Msg("ros1: service response not delivered; connection dropped")
			return
		}
		_ = c.SetWriteDeadline(time.Time{})
	}
}

// trackConn lists a service connection for Close; false once the node is
// closed.
func (n *Node) trackConn(c *net.TCPConn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.svcConns[c] = struct{}{}
	return true
}

func (n *Node) untrackConn(c *net.TCPConn) {
	n.mu.Lock()
	delete(n.svcConns, c)
	n.mu.Unlock()
	c.Close()
}

// readServiceRequest reads one service request from a TCPROS service
// connection: a 4-byte little-endian length, then the body. A connection
// that ends before a request's first byte gives io.EOF; one that ends
// inside it ErrTruncated; a length above limit ErrOversize (the stream
// cannot be trusted after either).
func readServiceRequest(r io.Reader, limit uint32) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("service request length: %w", ErrTruncated)
		}
		return nil, err
	}
	l := binary.LittleEndian.Uint32(lb[:])
	if l > limit {
		return nil, fmt.Errorf("service request of %d bytes (limit %d): %w", l, limit, ErrOversize)
	}
	b := make([]byte, l)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("service request (%d bytes): %w", l, ErrTruncated)
		}
		return nil, fmt.Errorf("service request (%d bytes): %w", l, err)
	}
	return b, nil
}

// appendServiceResponse appends a TCPROS service response: the ok byte
// (1 success, 0 failure), then a 4-byte little-endian length and body —
// the serialized response on success, the error text on failure (rospy
// and roscpp both read a failure's text so; goroslib's prototcp writes the
// ok byte alone, which leaves them waiting).
func appendServiceResponse(dst []byte, ok bool, body []byte) []byte {
	b := byte(0)
	if ok {
		b = 1
	}
	dst = append(dst, b)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...)
}
