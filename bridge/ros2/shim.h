//go:build ros2

// shim.h: the C side of bridge/ros2, a thin layer over Cyclone DDS 0.10
// (Debian cyclonedds-dev). It gives Cyclone a sertype whose samples are
// opaque CDR bytes under any type name (keyless, XCDR1, no type information:
// the choices rmw_cyclonedds makes), so Go writes and reads serialized
// samples of any ROS 2 type. It uses Cyclone's 0.10 ddsi headers
// (ddsi_sertype, ddsi_serdata, q_radmin), renamed in 0.11: pin the 0.10 line.
#ifndef TCS_ROS2_SHIM_H
#define TCS_ROS2_SHIM_H

#include <stdint.h>

#include <dds/dds.h>

// tcs_qos is the QoS of a writer or reader.
typedef struct {
  int reliable;         // 1: RELIABLE, 0: BEST_EFFORT
  int transient_local;  // 1: TRANSIENT_LOCAL, 0: VOLATILE
  int depth;            // KEEP_LAST depth
} tcs_qos;

// tcs_endpoint is one endpoint of the graph (a builtin-topic sample).
typedef struct {
  uint8_t key[16];
  uint8_t participant[16];
  char topic[256];
  char typ[256];
  int reliable;
  int transient_local;
  char userdata[512];  // USER_DATA as text (key=value;...), cut at 511 bytes
} tcs_endpoint;

// tcs_participant creates domain `domain` with the XML `config` (NULL:
// Cyclone's defaults or CYCLONEDDS_URI) and a participant on it whose
// USER_DATA is `userdata`.
dds_entity_t tcs_participant(uint32_t domain, const char *config, const char *userdata);
// tcs_topic finds or creates topic `name` of DDS type `type` with the opaque
// sertype; *out is the sertype the topic uses (for tcs_write).
struct ddsi_sertype;
dds_entity_t tcs_topic(dds_entity_t pp, const char *name, const char *type, const struct ddsi_sertype **out);
// tcs_writer creates a writer whose USER_DATA is `userdata` (NULL or "":
// none).
dds_entity_t tcs_writer(dds_entity_t pp, dds_entity_t topic, tcs_qos q, const char *userdata);
// tcs_reader creates a reader (USER_DATA as tcs_writer's); each arriving
// sample adds 1 to the eventfd `efd` (from Cyclone's receive thread), when
// efd >= 0.
dds_entity_t tcs_reader(dds_entity_t pp, dds_entity_t topic, tcs_qos q, const char *userdata, int efd);
// tcs_write publishes the CDR sample buf[0:len] (encapsulation header
// included) on writer wr of a topic whose sertype is st; with a KEEP_LAST writer it never blocks, and the
// sample is sent to every matched reader before it returns.
dds_return_t tcs_write(dds_entity_t wr, const struct ddsi_sertype *st, const void *buf, uint32_t len);
// tcs_take takes one sample from rd into buf (cap bytes). It returns 1 with
// *len its size (when *len > cap the sample was cut: it did not fit) and
// *pub its writer's GUID, 0 when there is none, < 0 on error. When ud is
// not NULL it gets the writer's USER_DATA as a NUL-terminated string (cut
// to udcap-1 bytes; empty when the writer is gone).
dds_return_t tcs_take(dds_entity_t rd, void *buf, uint32_t cap, uint32_t *len, uint8_t pub[16], char *ud, int udcap);
// tcs_guid writes an entity's GUID.
dds_return_t tcs_guid(dds_entity_t e, uint8_t out[16]);
// tcs_matched lists the GUIDs of the endpoints matched with writer or
// reader e (up to cap, at most 256), and, when uds is not NULL, their
// USER_DATA (as tcs_endpoint.userdata); it returns their number or < 0,
// and sets *total to how many are matched (more than cap: call again with
// a larger cap).
dds_return_t tcs_matched(dds_entity_t e, int is_writer, uint8_t (*keys)[16], uint8_t (*participants)[16], char (*uds)[512],
                         int cap, int *total);
// tcs_match_changed reports whether the readers matched with writer w
// changed since the last call for w (1) or not (0), < 0 on error. It takes
// w's publication-matched status, which resets its change counts.
int tcs_match_changed(dds_entity_t w);
// tcs_graph lists the alive endpoints of the builtin-topic reader rd (a
// reader of DDS_BUILTIN_TOPIC_DCPSPUBLICATION or ...SUBSCRIPTION), reading
// at most cap samples; *more is set when it read cap of them (there may be
// more: call again with a larger cap).
dds_return_t tcs_graph(dds_entity_t rd, tcs_endpoint *out, int cap, int *more);
// tcs_wait_acks waits up to timeout_ns for every matched reliable reader
// to acknowledge what writer wr wrote.
dds_return_t tcs_wait_acks(dds_entity_t wr, int64_t timeout_ns);
// tcs_watch_threads remembers this process's threads whose names are
// Cyclone's receive and delivery threads (recv*, dq.*), for tcs_settle.
// A thread is named by itself once it runs, so a scan made right after the
// participant was created may see none of them: it scans again, a
// millisecond apart, until it has found the four that tcs's configuration
// starts (recvUC, recv, dq.user, dq.builtins) or max_ns have passed. It
// returns how many it watches, or -1 when the unicast receive thread
// (recvUC, which takes the commands) was not found.
int tcs_watch_threads(int64_t max_ns);
// tcs_settle waits, up to max_ns, until every watched thread sleeps and no
// datagram waits unread in this process's UDP sockets (FIONREAD; they are
// found by tcs_watch_threads): then every datagram that was in a Cyclone
// socket when it was called has been processed (its sample is in its
// reader, the eventfd told). It returns 1 when settled, 0 on timeout.
int tcs_settle(int64_t max_ns);

#endif
