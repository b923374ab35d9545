package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/apimaster"
	"github.com/bluenviron/goroslib/v2/pkg/apislave"
	"github.com/bluenviron/goroslib/v2/pkg/msgproc"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/protocommon"
	"github.com/bluenviron/goroslib/v2/pkg/prototcp"

	"github.com/tcs-robotics/tcs/controllers/rosnode"
)

// runROS is `chaos ros --what W [--topic T] ROS-ARGS...`: a ROS 1 node (the
// bundled goroslib PD controller, controllers/rosnode.RunPD, on the ROS
// arguments tcs gives it) with, beside it, a hostile subscriber of tcs's
// topic T (default the node's own joint_states) that speaks TCPROS to tcs
// itself. garbage: connections that send a header length of 4 GiB, a
// header of malformed fields, a header with a wrong md5sum, and a valid
// header followed by 1 MiB of random bytes; deaf: a valid subscription (a
// 4 KiB receive buffer, 536-byte segments) that is never read.
func runROS(args []string) int {
	fs := flags("ros")
	what := fs.String("what", "garbage", "garbage or deaf")
	topic := fs.String("topic", "", "topic to subscribe to (default: the node's joint_states)")
	seed := fs.Uint64("seed", 1, "seed of the random garbage")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *what != "garbage" && *what != "deaf" {
		fmt.Fprintln(os.Stderr, "chaos ros: --what must be garbage or deaf")
		return 2
	}
	rosArgs := fs.Args() // __name:=..., __ns:=..., remaps
	master, ns := rosMaster(rosArgs), rosArg(rosArgs, "__ns")
	if *topic == "" {
		*topic = strings.TrimSuffix(ns, "/") + "/joint_states"
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		if err := attack(ctx, *what, master, *topic, *seed); err != nil {
			logf("tcpros-error", "err", strings.ReplaceAll(err.Error(), " ", "_"))
		}
	}()
	if err := rosnode.RunPD(ctx, rosArgs, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 1
	}
	return 0
}

// rosArg is the value of a ROS special argument (key:=value), or "".
func rosArg(args []string, key string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, key+":="); ok {
			return v
		}
	}
	return ""
}

// rosMaster is the master's host:port: __master:=, else ROS_MASTER_URI.
func rosMaster(args []string) string {
	uri := rosArg(args, "__master")
	if uri == "" {
		uri = os.Getenv("ROS_MASTER_URI")
	}
	if u, err := url.Parse(uri); err == nil && u.Host != "" {
		return u.Host
	}
	return "127.0.0.1:11311"
}

// attack finds tcs's publisher of topic through the master and opens the
// hostile connections of what to it.
func attack(ctx context.Context, what, master, topic string, seed uint64) error {
	const caller = "/chaos_attacker"
	hc := &http.Client{Timeout: 5 * time.Second}
	mc := apimaster.NewClient(master, caller, hc)
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no publisher of %s found through the master at %s", topic, master)
		}
		st, err := mc.GetSystemState()
		if err != nil {
			continue
		}
		for _, e := range st.PublishedTopics {
			if e.Name != topic || len(e.Nodes) == 0 {
				continue
			}
			uri, err := mc.LookupNode(e.Nodes[0])
			if err != nil {
				continue
			}
			u, err := url.Parse(uri)
			if err != nil {
				return err
			}
			proto, err := apislave.NewClient(u.Host, caller, hc).RequestTopic(topic, [][]any{{"TCPROS"}})
			if err != nil || len(proto) < 3 {
				return fmt.Errorf("requestTopic %s from %s: %v %v", topic, uri, proto, err)
			}
			host, _ := proto[1].(string)
			port, _ := proto[2].(int)
			addr = net.JoinHostPort(host, fmt.Sprint(port))
			logf("tcpros", "topic", topic, "publisher", e.Nodes[0], "addr", addr, "what", what)
		}
	}
	js := sensor_msgs.JointState{}
	md5, err := msgproc.MD5(js)
	if err != nil {
		return err
	}
	typ, err := msgproc.Type(js)
	if err != nil {
		return err
	}
	valid := prototcp.HeaderSubscriber{Callerid: caller, Topic: topic, Type: typ, Md5sum: md5, TcpNodelay: 1}
	if what == "deaf" {
		return deaf(addr, valid)
	}
	rng := rand.New(rand.NewPCG(seed, 19))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var malformed bytes.Buffer
	field := func(s string) {
		_ = binary.Write(&malformed, binary.LittleEndian, uint32(len(s)))
		malformed.WriteString(s)
	}
	field("no equals sign")
	field("=")
	field("topic=" + string(random(40)))
	_ = binary.Write(&malformed, binary.LittleEndian, uint32(1<<30)) // a field longer than the header
	wrong := valid
	wrong.Md5sum = "0123456789abcdef0123456789abcdef"
	var wrongHeader, validHeader bytes.Buffer
	if err := protocommon.HeaderEncode(&wrongHeader, &wrong); err != nil {
		return err
	}
	if err := protocommon.HeaderEncode(&validHeader, &valid); err != nil {
		return err
	}
	conns := []struct {
		name string
		data []byte
	}{
		{"huge-length", append([]byte{0xf0, 0xff, 0xff, 0xff}, random(100)...)},
		{"malformed-fields", append(binary.LittleEndian.AppendUint32(nil, uint32(malformed.Len())), malformed.Bytes()...)},
		{"wrong-md5", wrongHeader.Bytes()},
		{"header-then-random", append(validHeader.Bytes(), random(1<<20)...)},
	}
	for _, c := range conns {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		n, werr := conn.Write(c.data)
		// What tcs answers (an error header, or nothing before it
		// closes): read whatever comes, up to the deadline.
		reply, _ := io.ReadAll(io.LimitReader(conn, 1<<16))
		logf("tcpros-garbage", "conn", c.name, "wrote", n, "write_err", errnoName(werr), "reply_bytes", len(reply))
		conn.Close()
	}
	logf("tcpros-done")
	return nil
}

// deaf subscribes to addr with header h, reads tcs's header reply, and
// never reads again. Its socket's receive buffer is 4 KiB and it
// advertises a maximum segment of 536 bytes, which tcs's end then uses:
// the kernel sizes tcs's send buffer by it (on loopback's own 64 KiB
// segments it holds megabytes), so the socket is full within a few
// hundred messages.
func deaf(addr string, h prototcp.HeaderSubscriber) error {
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			if serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	pc := prototcp.NewConn(conn)
	if err := pc.WriteHeader(&h); err != nil {
		return err
	}
	raw, err := pc.ReadHeaderRaw()
	if err != nil {
		return fmt.Errorf("read the publisher's header: %w", err)
	}
	logf("tcpros-deaf", "publisher_type", strings.ReplaceAll(raw["type"], " ", "_"), "error", strings.ReplaceAll(raw["error"], " ", "_"))
	select {} // never read; the connection stays open to the end
}
