package ros2

import (
	"fmt"

	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// Distro is a ROS 2 distribution as far as the wire differs: the size of
// rmw_dds_common/msg/Gid.
type Distro int

const (
	// Humble and earlier: Gid is char[24] (a 16-byte DDS GUID, zero-padded).
	Humble Distro = iota
	// Iron and later (Jazzy, Kilted, Rolling): Gid is char[16].
	Iron
)

// GidLen is the length of a Gid in d's ParticipantEntitiesInfo.
func (d Distro) GidLen() int {
	if d == Iron {
		return 16
	}
	return 24
}

// String names the distro family.
func (d Distro) String() string {
	if d == Iron {
		return "iron"
	}
	return "humble"
}

// ParseDistro reads a ROS 2 distribution name: humble (and older: foxy,
// galactic) or iron, jazzy, kilted, rolling.
func ParseDistro(s string) (Distro, error) {
	switch s {
	case "foxy", "galactic", "humble":
		return Humble, nil
	case "iron", "jazzy", "kilted", "rolling":
		return Iron, nil
	}
	return 0, fmt.Errorf("ros2: distro %q: use one of humble, iron, jazzy, kilted, rolling", s)
}

// Gid is a DDS GUID (12-byte prefix, 4-byte entity id) as rmw_dds_common
// carries it; the bytes past 16 are zero on the wire for Humble.
type Gid [16]byte

// NodeEntitiesInfo is rmw_dds_common/msg/NodeEntitiesInfo.
type NodeEntitiesInfo struct {
	Namespace, Name  string
	Readers, Writers []Gid
}

// ParticipantInfo is rmw_dds_common/msg/ParticipantEntitiesInfo.
type ParticipantInfo struct {
	Gid   Gid
	Nodes []NodeEntitiesInfo
}

func writeGid(w *cdr.Writer, g Gid, n int) {
	w.Buf = append(w.Buf, g[:]...)
	for i := 16; i < n; i++ {
		w.Buf = append(w.Buf, 0)
	}
}

// AppendParticipantInfo appends a ParticipantEntitiesInfo sample in d's
// layout.
func AppendParticipantInfo(dst []byte, d Distro, p *ParticipantInfo) []byte {
	n := d.GidLen()
	var w cdr.Writer
	w.Begin(dst)
	writeGid(&w, p.Gid, n)
	w.Len(len(p.Nodes))
	for _, node := range p.Nodes {
		w.String(node.Namespace)
		w.String(node.Name)
		for _, gids := range [...][]Gid{node.Readers, node.Writers} {
			w.Len(len(gids))
			for _, g := range gids {
				writeGid(&w, g, n)
			}
		}
	}
	return w.Buf
}

func readGid(r *cdr.Reader, n int) Gid {
	var g Gid
	for i := 0; i < n; i++ {
		b := r.Uint8()
		if i < 16 {
			g[i] = b
		}
	}
	return g
}

// DecodeParticipantInfo reads a ParticipantEntitiesInfo sample in d's
// layout.
func DecodeParticipantInfo(sample []byte, d Distro) (ParticipantInfo, error) {
	n := d.GidLen()
	var r cdr.Reader
	r.Reset(sample)
	var p ParticipantInfo
	p.Gid = readGid(&r, n)
	k := r.Len(5 + 5 + 8)
	for i := 0; i < k && r.Err() == nil; i++ {
		node := NodeEntitiesInfo{Namespace: r.String(), Name: r.String()}
		for _, gids := range [...]*[]Gid{&node.Readers, &node.Writers} {
			m := r.Len(n)
			for j := 0; j < m && r.Err() == nil; j++ {
				*gids = append(*gids, readGid(&r, n))
			}
		}
		p.Nodes = append(p.Nodes, node)
	}
	return p, done(&r, ParticipantEntitiesInfo)
}
