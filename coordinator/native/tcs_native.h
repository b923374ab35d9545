/*
 * tcs_native.h: the tcs native client protocol for C and C++ controllers.
 * Header-only: include it and call tcs_connect, tcs_read, tcs_write,
 * tcs_idle, tcs_recv; no library to link. Linux only.
 *
 * The coordinator passes a shared memory file and two pipes to the client
 * (TCS_NATIVE="shm,req,rep", normally "3,4,5"). Each request is a 16-byte
 * record {op u32, ch u32, arg i64}, each reply {op u32, status u32, now i64},
 * little endian; the client blocks on the reply after every request. A
 * message on a channel >= 1 is posted without a request when the
 * coordinator allows it (shm->post_cap, see tcs_write). See
 * coordinator/native/doc.go for the full contract. struct tcs_shm must match
 * the Go struct native.Shm byte for byte (checked by the Go tests).
 *
 * Every function returns >= 0 on success and -1 on failure with errno set:
 * ENOENT (TCS_NATIVE not set: not running under tcs), EINVAL (bad argument
 * or environment), EPROTO (the coordinator refused the request:
 * c->status holds its status), ESHUTDOWN (the simulation is ending: exit),
 * or the errno of the failed system call.
 */
#ifndef TCS_NATIVE_H
#define TCS_NATIVE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TCS_MAGIC 0x315654414E534354ULL /* "TCSNATV1" little endian */
#define TCS_VERSION 1
#define TCS_MAX_VALUES 64
#define TCS_RECORD_SIZE 16
#define TCS_MAX_POSTS 4

enum tcs_op {
	TCS_OP_HELLO = 1,
	TCS_OP_READ = 2,
	TCS_OP_WRITE = 3,
	TCS_OP_IDLE = 4,
	TCS_OP_RECV = 5,
	TCS_OP_WRITE_IDLE = 6
};

#define TCS_STATUS_OK 0u
#define TCS_STATUS_ERROR_BASE 0x80000000u
#define TCS_STATUS_BAD_REQUEST (TCS_STATUS_ERROR_BASE + 1u)
#define TCS_STATUS_BAD_VERSION (TCS_STATUS_ERROR_BASE + 2u)
#define TCS_STATUS_SHUTDOWN (TCS_STATUS_ERROR_BASE + 3u)
#define TCS_STATUS_NOT_HELLO (TCS_STATUS_ERROR_BASE + 4u)

/* A message posted without a request (528 bytes): its channel (>= 1), its
 * values and the client's process CPU clock when it was written, from which
 * the coordinator stamps it. */
struct tcs_post {
	uint32_t ch;
	uint32_t n;
	int64_t cpu; /* CLOCK_PROCESS_CPUTIME_ID, ns */
	double vals[TCS_MAX_VALUES];
};

/* The shared memory region (3728 bytes). */
struct tcs_shm {
	uint64_t magic;     /*    0 TCS_MAGIC */
	uint32_t version;   /*    8 TCS_VERSION */
	uint32_t obs_len;   /*   12 values valid in obs */
	int64_t period;     /*   16 client's period, ns (0: best-effort) */
	int64_t obs_time;   /*   24 virtual time obs was sampled at */
	uint32_t out_len;   /*   32 values valid in out for TCS_OP_WRITE_IDLE */
	uint32_t in_len;    /*   36 values in `in` delivered with an activation */
	int64_t in_time;    /*   40 stamp of that message (0: none) */
	int64_t obs_next;   /*   48 virtual time of the sample after obs (0: unknown) */
	int64_t reserved;   /*   56 zero */
	double obs[TCS_MAX_VALUES]; /*   64 observation (coordinator -> client) */
	double out[TCS_MAX_VALUES]; /*  576 outgoing message (client -> coordinator) */
	double in[TCS_MAX_VALUES];  /* 1088 received message (coordinator -> client) */
	uint32_t post_cap;  /* 1600 post slots the client may use (0: none) */
	uint32_t post_head; /* 1604 posts written (client) */
	uint32_t post_tail; /* 1608 posts taken (coordinator) */
	uint32_t post_pad;  /* 1612 zero */
	struct tcs_post posts[TCS_MAX_POSTS]; /* 1616 slot = count % TCS_MAX_POSTS */
};

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(struct tcs_post) == 528, "struct tcs_post must be 528 bytes");
_Static_assert(sizeof(struct tcs_shm) == 3728, "struct tcs_shm must be 3728 bytes");
_Static_assert(sizeof(double) == 8, "double must be 64-bit IEEE 754");
#endif

struct tcs_client {
	struct tcs_shm *shm;
	int req_fd;      /* request pipe, write end */
	int rep_fd;      /* reply pipe, read end */
	int64_t period;  /* from hello, ns */
	int64_t now;     /* virtual time of the last reply that carried it */
	uint32_t status; /* status of the last reply */
};

static inline void tcs__put32(unsigned char *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static inline void tcs__put64(unsigned char *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t tcs__get32(const unsigned char *b)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static inline uint64_t tcs__get64(const unsigned char *b)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

/* tcs__call sends one request and waits for its reply; 0 or -1/errno. */
static inline int tcs__call(struct tcs_client *c, uint32_t op, uint32_t ch, int64_t arg, int64_t *now)
{
	unsigned char b[TCS_RECORD_SIZE];
	ssize_t n;
	size_t got = 0;

	if (c->shm == NULL) {
		errno = EINVAL;
		return -1;
	}
	tcs__put32(b, op);
	tcs__put32(b + 4, ch);
	tcs__put64(b + 8, (uint64_t)arg);
	do {
		n = write(c->req_fd, b, sizeof b);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n != (ssize_t)sizeof b) {
		errno = EIO;
		return -1;
	}
	while (got < sizeof b) {
		n = read(c->rep_fd, b + got, sizeof b - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EPIPE; /* the coordinator is gone */
			return -1;
		}
		got += (size_t)n;
	}
	c->status = tcs__get32(b + 4);
	if (tcs__get32(b) != op) {
		errno = EPROTO;
		return -1;
	}
	if (c->status >= TCS_STATUS_ERROR_BASE) {
		errno = c->status == TCS_STATUS_SHUTDOWN ? ESHUTDOWN : EPROTO;
		return -1;
	}
	*now = (int64_t)tcs__get64(b + 8);
	return 0;
}

static inline int tcs__parse_fd(const char **s, int *fd)
{
	char *end;
	long v = strtol(*s, &end, 10);
	if (end == *s || v < 0 || v > 1 << 20)
		return -1;
	*fd = (int)v;
	*s = end;
	return 0;
}

/* tcs_close unmaps the shared memory and closes the pipes. */
static inline void tcs_close(struct tcs_client *c)
{
	if (c->shm != NULL)
		munmap(c->shm, sizeof *c->shm);
	if (c->req_fd >= 0)
		close(c->req_fd);
	if (c->rep_fd >= 0)
		close(c->rep_fd);
	c->shm = NULL;
	c->req_fd = c->rep_fd = -1;
}

/* tcs_connect attaches to the coordinator and says hello; c->period is the
 * client's period in ns (0: best-effort). */
static inline int tcs_connect(struct tcs_client *c)
{
	const char *s = getenv("TCS_NATIVE");
	int fds[3];
	struct stat st;
	void *m;
	int64_t now;

	memset(c, 0, sizeof *c);
	c->req_fd = c->rep_fd = -1;
	if (s == NULL || *s == '\0') {
		errno = ENOENT;
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		if (tcs__parse_fd(&s, &fds[i]) < 0 || *s != (i < 2 ? ',' : '\0')) {
			errno = EINVAL;
			return -1;
		}
		if (i < 2)
			s++;
	}
	if (fstat(fds[0], &st) < 0)
		return -1;
	if (st.st_size < (off_t)sizeof(struct tcs_shm)) {
		errno = EINVAL;
		return -1;
	}
	m = mmap(NULL, sizeof(struct tcs_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (m == MAP_FAILED)
		return -1;
	close(fds[0]);
	c->shm = (struct tcs_shm *)m;
	c->req_fd = fds[1];
	c->rep_fd = fds[2];
	if (c->shm->magic != TCS_MAGIC || c->shm->version != TCS_VERSION) {
		tcs_close(c);
		errno = EPROTO;
		return -1;
	}
	if (tcs__call(c, TCS_OP_HELLO, 0, TCS_VERSION, &now) < 0) {
		int e = errno;
		tcs_close(c);
		errno = e;
		return -1;
	}
	c->period = c->shm->period;
	c->now = now;
	return 0;
}

/* tcs__copy copies up to cap of the n values at src (at most
 * TCS_MAX_VALUES) into dst and returns how many it copied. */
static inline int tcs__copy(double *dst, int cap, const double *src, uint32_t n)
{
	if (n > TCS_MAX_VALUES)
		n = TCS_MAX_VALUES;
	if (cap < 0)
		cap = 0;
	if ((int)n > cap)
		n = (uint32_t)cap;
	memcpy(dst, src, n * sizeof(double));
	return (int)n;
}

/* tcs_read waits for the observation at the client's progress, copies up to
 * cap values into dst and returns how many; *now (if not NULL) is the
 * virtual time it was sampled at. */
static inline int tcs_read(struct tcs_client *c, double *dst, int cap, int64_t *now)
{
	int64_t t;
	if (tcs__call(c, TCS_OP_READ, 0, 0, &t) < 0)
		return -1;
	c->now = t;
	if (now != NULL)
		*now = t;
	return tcs__copy(dst, cap, c->shm->obs, c->shm->obs_len);
}

/* tcs__post posts vals[0:n] on channel ch >= 1 when the coordinator allows
 * posts and a slot is free: 1 posted, 0 not (send a request instead). The
 * client runs only while the coordinator waits, on the same CPU: the slot
 * is filled before post_head moves, and the coordinator reads post_head
 * before the slot. */
static inline int tcs__post(struct tcs_client *c, uint32_t ch, const double *vals, int n)
{
	struct tcs_shm *s = c->shm;
	struct tcs_post *p;
	struct timespec ts;
	uint32_t head;

	if (ch == 0 || s->post_cap == 0)
		return 0;
	head = s->post_head;
	if (head - __atomic_load_n(&s->post_tail, __ATOMIC_ACQUIRE) >= TCS_MAX_POSTS)
		return 0;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	p = &s->posts[head % TCS_MAX_POSTS];
	p->ch = ch;
	p->n = (uint32_t)n;
	memcpy(p->vals, vals, (size_t)n * sizeof(double));
	p->cpu = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	__atomic_store_n(&s->post_head, head + 1, __ATOMIC_RELEASE);
	return 1;
}

/* tcs_write sends vals[0:n] as one message on channel ch (0: actuator
 * command), stamped with the client's progress. On a channel >= 1, when
 * the coordinator allows it (c->shm->post_cap > 0, consistent mode), the
 * message is posted in the shared memory without a round trip and c->now
 * is left as it was; otherwise it is a request. */
static inline int tcs_write(struct tcs_client *c, uint32_t ch, const double *vals, int n)
{
	int64_t t;

	if (n < 0 || n > TCS_MAX_VALUES || c->shm == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (tcs__post(c, ch, vals, n))
		return 0;
	memcpy(c->shm->out, vals, (size_t)n * sizeof(double));
	if (tcs__call(c, TCS_OP_WRITE, ch, n, &t) < 0)
		return -1;
	c->now = t;
	return 0;
}

/* tcs_idle gives up the CPU until virtual time until (absolute ns); *now (if
 * not NULL) is the client's virtual time at the activation. */
static inline int tcs_idle(struct tcs_client *c, int64_t until, int64_t *now)
{
	int64_t t;

	if (tcs__call(c, TCS_OP_IDLE, 0, until, &t) < 0)
		return -1;
	c->now = t;
	if (now != NULL)
		*now = t;
	return 0;
}

/* tcs_write_idle writes n values of vals on channel ch (0: the actuator
 * command) and idles until virtual time until, in one round trip. At the
 * activation c->shm->obs holds the newest sample the world has computed,
 * sampled at c->shm->obs_time; call tcs_read when tcs_obs_current says a
 * newer one is due at the client's time. */
static inline int tcs_write_idle(struct tcs_client *c, uint32_t ch, const double *vals, int n,
				 int64_t until, int64_t *now)
{
	int64_t t;
	if (n < 0 || n > TCS_MAX_VALUES || c->shm == NULL) {
		errno = EINVAL;
		return -1;
	}
	memcpy(c->shm->out, vals, (size_t)n * sizeof(double));
	c->shm->out_len = (uint32_t)n;
	if (tcs__call(c, TCS_OP_WRITE_IDLE, ch, until, &t) < 0)
		return -1;
	c->now = t;
	if (now != NULL)
		*now = t;
	return 0;
}

/* tcs_obs copies the observation delivered with the last tcs_read or
 * activation (up to cap values) into dst and returns how many; *at (if not
 * NULL) is the virtual time it was sampled at. */
static inline int tcs_obs(const struct tcs_client *c, double *dst, int cap, int64_t *at)
{
	if (c->shm == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (at != NULL)
		*at = c->shm->obs_time;
	return tcs__copy(dst, cap, c->shm->obs, c->shm->obs_len);
}

/* tcs_in copies the message delivered with the last activation (the newest
 * on the client's first subscribed channel) into dst and returns how many
 * values (0: none); *stamp (if not NULL) is its stamp. */
static inline int tcs_in(const struct tcs_client *c, double *dst, int cap, int64_t *stamp)
{
	if (c->shm == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (stamp != NULL)
		*stamp = c->shm->in_time;
	return tcs__copy(dst, cap, c->shm->in, c->shm->in_len);
}

/* tcs_obs_current returns 1 when c->shm->obs (delivered with the last
 * tcs_read or activation) is the newest sample at the client's time, 0 when
 * a newer one is due then (the world lags the activation: tcs_read waits
 * for it). */
static inline int tcs_obs_current(const struct tcs_client *c)
{
	if (c->shm == NULL)
		return 0;
	if (c->shm->obs_next > 0)
		return c->shm->obs_next > c->now;
	return c->shm->obs_time >= c->now;
}

/* tcs_recv copies the newest message on channel ch (up to cap values) into
 * dst and returns how many (0: none yet); *stamp (if not NULL) is its
 * stamp. */
static inline int tcs_recv(struct tcs_client *c, uint32_t ch, double *dst, int cap, int64_t *stamp)
{
	int64_t t;
	if (tcs__call(c, TCS_OP_RECV, ch, 0, &t) < 0)
		return -1;
	if (stamp != NULL)
		*stamp = t;
	return tcs__copy(dst, cap, c->shm->in, c->status);
}

#ifdef __cplusplus
}
#endif

#endif /* TCS_NATIVE_H */
