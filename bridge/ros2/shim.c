//go:build ros2

// shim.c: see shim.h.
#define _GNU_SOURCE
#include "shim.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/q_radmin.h>

// ---- the opaque sertype and serdata ----

struct tcs_serdata {
  struct ddsi_serdata c;
  uint32_t size;  // bytes in data, encapsulation header included
  unsigned char data[];
};

static const struct ddsi_serdata_ops tcs_serdata_ops;

static struct tcs_serdata *sd_new(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, size_t size) {
  struct tcs_serdata *d = malloc(sizeof(*d) + size);
  if (d == NULL) return NULL;
  ddsi_serdata_init(&d->c, type, kind);
  d->c.hash = type ? type->serdata_basehash : 0;  // keyless: one instance
  d->size = (uint32_t)size;
  return d;
}

static bool sd_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b) {
  (void)a;
  (void)b;
  return true;  // keyless
}

static uint32_t sd_size(const struct ddsi_serdata *d) { return ((const struct tcs_serdata *)d)->size; }

static void sd_free(struct ddsi_serdata *d) { free(d); }

static struct ddsi_serdata *sd_from_ser(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                        const struct nn_rdata *fragchain, size_t size) {
  struct tcs_serdata *d = sd_new(type, kind, size);
  if (d == NULL) return NULL;
  uint32_t off = 0;
  while (fragchain != NULL) {
    if (fragchain->maxp1 > off) {
      const unsigned char *payload = NN_RMSG_PAYLOADOFF(fragchain->rmsg, NN_RDATA_PAYLOAD_OFF(fragchain));
      uint32_t n = fragchain->maxp1 - off;
      if (off + n > size) n = (uint32_t)size - off;
      memcpy(d->data + off, payload + off - fragchain->min, n);
      off += n;
    }
    fragchain = fragchain->nextfrag;
  }
  d->size = off;
  return &d->c;
}

static struct ddsi_serdata *sd_from_ser_iov(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                            ddsrt_msg_iovlen_t niov, const ddsrt_iovec_t *iov, size_t size) {
  struct tcs_serdata *d = sd_new(type, kind, size);
  if (d == NULL) return NULL;
  size_t off = 0;
  for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
    size_t n = iov[i].iov_len;
    if (off + n > size) n = size - off;
    memcpy(d->data + off, iov[i].iov_base, n);
    off += n;
  }
  d->size = (uint32_t)off;
  return &d->c;
}

static struct ddsi_serdata *sd_from_keyhash(const struct ddsi_sertype *type, const struct ddsi_keyhash *kh) {
  (void)kh;
  struct tcs_serdata *d = sd_new(type, SDK_KEY, 0);
  return d ? &d->c : NULL;
}

static struct ddsi_serdata *sd_from_sample(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const void *sample) {
  (void)type;
  (void)kind;
  (void)sample;
  return NULL;  // only writecdr is used
}

static void sd_to_ser(const struct ddsi_serdata *dc, size_t off, size_t sz, void *buf) {
  const struct tcs_serdata *d = (const struct tcs_serdata *)dc;
  memcpy(buf, d->data + off, sz);
}

static struct ddsi_serdata *sd_to_ser_ref(const struct ddsi_serdata *dc, size_t off, size_t sz, ddsrt_iovec_t *ref) {
  const struct tcs_serdata *d = (const struct tcs_serdata *)dc;
  ref->iov_base = (void *)(d->data + off);
  ref->iov_len = (ddsrt_iov_len_t)sz;
  return ddsi_serdata_ref(dc);
}

static void sd_to_ser_unref(struct ddsi_serdata *d, const ddsrt_iovec_t *ref) {
  (void)ref;
  ddsi_serdata_unref(d);
}

static bool sd_to_sample(const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim) {
  (void)d;
  (void)sample;
  (void)bufptr;
  (void)buflim;
  return false;  // only takecdr is used
}

static struct ddsi_serdata *sd_to_untyped(const struct ddsi_serdata *dc) {
  struct tcs_serdata *d = sd_new(dc->type, SDK_KEY, 0);
  if (d == NULL) return NULL;
  d->c.type = NULL;
  return &d->c;
}

static bool sd_untyped_to_sample(const struct ddsi_sertype *type, const struct ddsi_serdata *d, void *sample,
                                 void **bufptr, void *buflim) {
  (void)type;
  (void)d;
  (void)sample;
  (void)bufptr;
  (void)buflim;
  return true;  // keyless: no key fields to fill
}

static size_t sd_print(const struct ddsi_sertype *type, const struct ddsi_serdata *d, char *buf, size_t size) {
  (void)type;
  return (size_t)snprintf(buf, size, "(%u bytes of CDR)", ((const struct tcs_serdata *)d)->size);
}

static void sd_get_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5) {
  (void)d;
  (void)force_md5;
  memset(buf, 0, sizeof(*buf));
}

static const struct ddsi_serdata_ops tcs_serdata_ops = {
    .eqkey = sd_eqkey,
    .get_size = sd_size,
    .from_ser = sd_from_ser,
    .from_ser_iov = sd_from_ser_iov,
    .from_keyhash = sd_from_keyhash,
    .from_sample = sd_from_sample,
    .to_ser = sd_to_ser,
    .to_ser_ref = sd_to_ser_ref,
    .to_ser_unref = sd_to_ser_unref,
    .to_sample = sd_to_sample,
    .to_untyped = sd_to_untyped,
    .untyped_to_sample = sd_untyped_to_sample,
    .free = sd_free,
    .print = sd_print,
    .get_keyhash = sd_get_keyhash,
};

static void st_free(struct ddsi_sertype *tp) {
  ddsi_sertype_fini(tp);
  free(tp);
}

static void st_zero_samples(const struct ddsi_sertype *d, void *samples, size_t count) {
  (void)d;
  (void)samples;
  (void)count;
}

static void st_realloc_samples(void **ptrs, const struct ddsi_sertype *d, void *old, size_t oldcount, size_t count) {
  (void)d;
  (void)oldcount;
  void *p = realloc(old, count * sizeof(void *) + 1);
  for (size_t i = 0; i < count; i++) ptrs[i] = p;
}

static void st_free_samples(const struct ddsi_sertype *d, void **ptrs, size_t count, dds_free_op_t op) {
  (void)d;
  (void)count;
  if ((op & DDS_FREE_ALL_BIT) && ptrs != NULL) free(ptrs[0]);
}

static bool st_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b) {
  (void)a;
  (void)b;
  return true;  // same ops, same type name (checked by Cyclone)
}

static uint32_t st_hash(const struct ddsi_sertype *tp) {
  (void)tp;
  return 0;
}

static const struct ddsi_sertype_ops tcs_sertype_ops = {
    .version = ddsi_sertype_v0,
    .arg = NULL,
    .free = st_free,
    .zero_samples = st_zero_samples,
    .realloc_samples = st_realloc_samples,
    .free_samples = st_free_samples,
    .equal = st_equal,
    .hash = st_hash,
};

// ---- entities ----

dds_entity_t tcs_participant(uint32_t domain, const char *config, const char *userdata) {
  if (config != NULL) {
    dds_entity_t d = dds_create_domain(domain, config);
    if (d < 0 && d != DDS_RETCODE_PRECONDITION_NOT_MET) return d;  // (already created)
  }
  dds_qos_t *qos = dds_create_qos();
  dds_qset_userdata(qos, userdata, strlen(userdata));
  dds_entity_t pp = dds_create_participant(domain, qos, NULL);
  dds_delete_qos(qos);
  return pp;
}

dds_entity_t tcs_topic(dds_entity_t pp, const char *name, const char *type, const struct ddsi_sertype **out) {
  struct ddsi_sertype *st = calloc(1, sizeof(*st));
  if (st == NULL) return DDS_RETCODE_OUT_OF_RESOURCES;
  ddsi_sertype_init(st, type, &tcs_sertype_ops, &tcs_serdata_ops, true);
  st->allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
  struct ddsi_sertype *used = st;
  dds_entity_t tp = dds_create_topic_sertype(pp, name, &used, NULL, NULL, NULL);
  if (tp < 0) {
    st_free(st);
    return tp;
  }
  *out = used;
  return tp;
}

// copy_userdata writes the USER_DATA of qos into out (cap bytes, NUL
// terminated; empty when there is none).
static void copy_userdata(const dds_qos_t *qos, char *out, size_t cap) {
  out[0] = 0;
  void *v = NULL;
  size_t sz = 0;
  if (qos == NULL || !dds_qget_userdata(qos, &v, &sz)) return;
  if (v != NULL) {
    if (sz >= cap) sz = cap - 1;
    memcpy(out, v, sz);
    out[sz] = 0;
    dds_free(v);
  }
}

static dds_qos_t *make_qos(tcs_qos q, const char *userdata) {
  dds_qos_t *qos = dds_create_qos();
  if (userdata != NULL && userdata[0] != 0) dds_qset_userdata(qos, userdata, strlen(userdata));
  dds_qset_reliability(qos, q.reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT, DDS_MSECS(100));
  dds_qset_durability(qos, q.transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, q.depth > 0 ? q.depth : 1);
  dds_data_representation_id_t rep = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(qos, 1, &rep);
  dds_qset_ignorelocal(qos, DDS_IGNORELOCAL_PARTICIPANT);
  dds_qset_writer_data_lifecycle(qos, false);
  return qos;
}

dds_entity_t tcs_writer(dds_entity_t pp, dds_entity_t topic, tcs_qos q, const char *userdata) {
  dds_qos_t *qos = make_qos(q, userdata);
  dds_entity_t w = dds_create_writer(pp, topic, qos, NULL);
  dds_delete_qos(qos);
  return w;
}

static void on_data(dds_entity_t rd, void *arg) {
  (void)rd;
  int fd = (int)(intptr_t)arg;
  uint64_t one = 1;
  ssize_t r = write(fd, &one, sizeof one);
  (void)r;
}

dds_entity_t tcs_reader(dds_entity_t pp, dds_entity_t topic, tcs_qos q, const char *userdata, int efd) {
  dds_qos_t *qos = make_qos(q, userdata);
  dds_listener_t *l = NULL;
  if (efd >= 0) {
    l = dds_create_listener((void *)(intptr_t)efd);
    dds_lset_data_available(l, on_data);
  }
  dds_entity_t r = dds_create_reader(pp, topic, qos, l);
  dds_delete_qos(qos);
  if (l != NULL) dds_delete_listener(l);
  return r;
}

dds_return_t tcs_write(dds_entity_t wr, const struct ddsi_sertype *st, const void *buf, uint32_t len) {
  ddsrt_iovec_t iov = {.iov_base = (void *)buf, .iov_len = len};
  struct ddsi_serdata *sd = ddsi_serdata_from_ser_iov(st, SDK_DATA, 1, &iov, len);
  if (sd == NULL) return DDS_RETCODE_OUT_OF_RESOURCES;
  return dds_writecdr(wr, sd);
}

dds_return_t tcs_take(dds_entity_t rd, void *buf, uint32_t cap, uint32_t *len, uint8_t pub[16], char *ud, int udcap) {
  struct ddsi_serdata *sd = NULL;
  dds_sample_info_t si;
  for (;;) {
    dds_return_t n = dds_takecdr(rd, &sd, 1, &si, DDS_ANY_STATE);
    if (n <= 0) return n;
    if (!si.valid_data) {
      ddsi_serdata_unref(sd);
      continue;
    }
    struct tcs_serdata *d = (struct tcs_serdata *)sd;
    *len = d->size;
    memcpy(buf, d->data, d->size < cap ? d->size : cap);
    memset(pub, 0, 16);
    if (ud != NULL && udcap > 0) ud[0] = 0;
    dds_builtintopic_endpoint_t *ep = dds_get_matched_publication_data(rd, si.publication_handle);
    if (ep != NULL) {
      memcpy(pub, ep->key.v, 16);
      if (ud != NULL && udcap > 0) copy_userdata(ep->qos, ud, (size_t)udcap);
      dds_builtintopic_free_endpoint(ep);
    }
    ddsi_serdata_unref(sd);
    return 1;
  }
}

dds_return_t tcs_guid(dds_entity_t e, uint8_t out[16]) {
  dds_guid_t g;
  dds_return_t rc = dds_get_guid(e, &g);
  if (rc == 0) memcpy(out, g.v, 16);
  return rc;
}

dds_return_t tcs_matched(dds_entity_t e, int is_writer, uint8_t (*keys)[16], uint8_t (*participants)[16], char (*uds)[512],
                         int cap, int *total) {
  dds_instance_handle_t hs[256];
  if (cap > 256) cap = 256;
  dds_return_t n = is_writer ? dds_get_matched_subscriptions(e, hs, (size_t)cap) : dds_get_matched_publications(e, hs, (size_t)cap);
  if (n < 0) return n;
  *total = n;
  if (n > cap) n = cap;
  int k = 0;
  for (int i = 0; i < n; i++) {
    dds_builtintopic_endpoint_t *ep = is_writer ? dds_get_matched_subscription_data(e, hs[i]) : dds_get_matched_publication_data(e, hs[i]);
    if (ep == NULL) continue;
    memcpy(keys[k], ep->key.v, 16);
    memcpy(participants[k], ep->participant_key.v, 16);
    if (uds != NULL) copy_userdata(ep->qos, uds[k], sizeof uds[k]);
    k++;
    dds_builtintopic_free_endpoint(ep);
  }
  return k;
}

int tcs_match_changed(dds_entity_t w) {
  dds_publication_matched_status_t st;
  dds_return_t rc = dds_get_publication_matched_status(w, &st);
  if (rc < 0) return rc;
  return st.total_count_change != 0 || st.current_count_change != 0;
}

dds_return_t tcs_graph(dds_entity_t rd, tcs_endpoint *out, int cap, int *more) {
  *more = 0;
  if (cap <= 0) return DDS_RETCODE_BAD_PARAMETER;
  void **ptrs = calloc((size_t)cap, sizeof *ptrs);
  dds_sample_info_t *si = malloc((size_t)cap * sizeof *si);
  if (ptrs == NULL || si == NULL) {
    free(ptrs);
    free(si);
    return DDS_RETCODE_OUT_OF_RESOURCES;
  }
  dds_return_t n = dds_read(rd, ptrs, si, (size_t)cap, (uint32_t)cap);
  if (n < 0) {
    free(ptrs);
    free(si);
    return n;
  }
  *more = n == cap;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (!si[i].valid_data || si[i].instance_state != DDS_IST_ALIVE) continue;
    const dds_builtintopic_endpoint_t *ep = ptrs[i];
    tcs_endpoint *o = &out[k++];
    memcpy(o->key, ep->key.v, 16);
    memcpy(o->participant, ep->participant_key.v, 16);
    snprintf(o->topic, sizeof o->topic, "%s", ep->topic_name ? ep->topic_name : "");
    snprintf(o->typ, sizeof o->typ, "%s", ep->type_name ? ep->type_name : "");
    dds_reliability_kind_t rk = DDS_RELIABILITY_BEST_EFFORT;
    dds_duration_t blk;
    o->reliable = ep->qos && dds_qget_reliability(ep->qos, &rk, &blk) && rk == DDS_RELIABILITY_RELIABLE;
    dds_durability_kind_t dk = DDS_DURABILITY_VOLATILE;
    o->transient_local = ep->qos && dds_qget_durability(ep->qos, &dk) && dk == DDS_DURABILITY_TRANSIENT_LOCAL;
    copy_userdata(ep->qos, o->userdata, sizeof o->userdata);
  }
  dds_return_loan(rd, ptrs, n);
  free(ptrs);
  free(si);
  return k;
}

dds_return_t tcs_wait_acks(dds_entity_t wr, int64_t timeout_ns) { return dds_wait_for_acks(wr, timeout_ns); }

// ---- settling the receive path ----

enum { kMaxWatch = 16, kMaxSock = 64 };
// watch_fd: each watched thread's wchan file, or its stat file when
// use_stat is set (see scan_threads).
static int watch_fd[kMaxWatch];
static int nwatch;
static int use_stat;
static int sock_fd[kMaxSock];
static int nsock;

// watch_sockets remembers this process's UDP sockets (Cyclone's: the bridge
// has no others).
static void watch_sockets(void) {
  nsock = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (dir == NULL) return;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL && nsock < kMaxSock) {
    if (de->d_name[0] == '.') continue;
    int fd = atoi(de->d_name);
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM) sock_fd[nsock++] = fd;
  }
  closedir(dir);
}

// unread: a datagram waits in one of the watched sockets.
static int unread(void) {
  for (int i = 0; i < nsock; i++) {
    int n = 0;
    if (ioctl(sock_fd[i], FIONREAD, &n) == 0 && n > 0) return 1;
  }
  return 0;
}

static int64_t now_ns(void);

// The threads tcs's Cyclone configuration (one loopback interface, no
// multicast) starts, each a bit of scan_threads's result.
static const char *const kThreadNames[] = {"recvUC\n", "recv\n", "dq.user\n", "dq.builtins\n"};
enum { kNumThreadNames = sizeof kThreadNames / sizeof kThreadNames[0], kAllThreads = (1 << kNumThreadNames) - 1 };

static int asleep_stat(int fd);
static int asleep_wchan(int fd);

// open_task opens /proc/self/task/<tid>/<file>.
static int open_task(int tid, const char *file) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, file);
  return open(path, O_RDONLY | O_CLOEXEC);
}

// scan_threads fills watch_fd; it returns which of kThreadNames it found.
// A thread's wchan file tells whether it sleeps for about half of what its
// stat file costs (the kernel formats one symbol, not fifty fields); where
// it cannot (a kernel that prints 0 for a sleeping thread), the stat files
// are watched instead: a thread that stat shows asleep and wchan as 0
// decides it.
static int scan_threads(void) {
  for (int i = 0; i < nwatch; i++) close(watch_fd[i]);
  nwatch = 0;
  use_stat = 0;
  int found = 0;
  int tids[kMaxWatch];
  DIR *dir = opendir("/proc/self/task");
  if (dir == NULL) return 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL && nwatch < kMaxWatch) {
    if (de->d_name[0] == '.') continue;
    int tid = atoi(de->d_name);
    char comm[32] = {0};
    int fd = open_task(tid, "comm");
    if (fd < 0) continue;
    ssize_t n = read(fd, comm, sizeof comm - 1);
    close(fd);
    if (n <= 0) continue;
    if (strncmp(comm, "recv", 4) != 0 && strncmp(comm, "dq.", 3) != 0) continue;
    fd = open_task(tid, "wchan");
    if (fd < 0) continue;
    tids[nwatch] = tid;
    watch_fd[nwatch++] = fd;
    for (int i = 0; i < kNumThreadNames; i++)
      if (strcmp(comm, kThreadNames[i]) == 0) found |= 1 << i;
  }
  closedir(dir);
  for (int i = 0; i < nwatch && !use_stat; i++) {
    int st = open_task(tids[i], "stat");
    if (st < 0) continue;
    if (asleep_stat(st) && !asleep_wchan(watch_fd[i])) use_stat = 1;
    close(st);
  }
  if (use_stat) {
    for (int i = 0; i < nwatch; i++) {
      close(watch_fd[i]);
      watch_fd[i] = open_task(tids[i], "stat");
    }
  }
  return found;
}

int tcs_watch_threads(int64_t max_ns) {
  int64_t end = now_ns() + max_ns;
  int found;
  while ((found = scan_threads()) != kAllThreads && now_ns() < end) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  watch_sockets();
  return (found & 1) ? nwatch : -1;
}

// asleep_stat: the thread's state in its stat line is S (or D/I: not
// running).
static int asleep_stat(int fd) {
  char b[256];
  ssize_t n = pread(fd, b, sizeof b - 1, 0);
  if (n <= 0) return 1;  // gone
  b[n] = 0;
  char *p = strrchr(b, ')');
  if (p == NULL || p[1] != ' ') return 1;
  return p[2] != 'R';
}

// asleep_wchan: the thread waits somewhere: its wchan names a function;
// a running or runnable thread's is 0.
static int asleep_wchan(int fd) {
  char b[64];
  ssize_t n = pread(fd, b, sizeof b, 0);
  if (n <= 0) return 1;  // gone
  return !(b[0] == '0' && (n == 1 || b[1] == '\n'));
}

static int asleep(int fd) { return use_stat ? asleep_stat(fd) : asleep_wchan(fd); }

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int tcs_settle(int64_t max_ns) {
  int64_t end = now_ns() + max_ns;
  for (;;) {
    int quiet = 1;
    for (int i = 0; i < nwatch && quiet; i++) quiet = asleep(watch_fd[i]);
    // A datagram a client sent just before it blocked may be in a socket
    // before the receive thread (on another CPU) has woken up for it: the
    // threads then still look asleep.
    if (quiet && !unread()) return 1;
    if (now_ns() > end) return 0;
  }
}
