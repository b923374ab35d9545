//go:build mujoco

// shim.c: see shim.h.
#include "shim.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The landing pad of the guarded call running on this thread, NULL outside
// one, and the message of the error that jumped to it.
static _Thread_local jmp_buf* tcs_jmp;
static _Thread_local char tcs_msg[1024];

static void tcs_on_error(const char* msg) {
	if (tcs_jmp != NULL) {
		snprintf(tcs_msg, sizeof tcs_msg, "%s", msg);
		longjmp(*tcs_jmp, 1);
	}
	// Every call into MuJoCo that can fail is guarded; returning would let
	// MuJoCo go on with a broken state.
	fprintf(stderr, "tcs: MuJoCo error outside a guarded call: %s\n", msg);
	abort();
}

// Warnings are counted per kind in mjData.warning; the Go side reads them
// there. The default handler would print and append to MUJOCO_LOG.TXT.
static void tcs_on_warning(const char* msg) { (void)msg; }

static pthread_once_t tcs_once = PTHREAD_ONCE_INIT;

static void tcs_install(void) {
	mju_user_error = tcs_on_error;
	mju_user_warning = tcs_on_warning;
}

void tcs_mj_init(void) { pthread_once(&tcs_once, tcs_install); }

static void tcs_failed(char* err, int errsz) {
	snprintf(err, (size_t)errsz, "%s", tcs_msg);
}

mjData* tcs_mj_make(const mjModel* m, char* err, int errsz) {
	jmp_buf env;
	mjData* volatile d = NULL;
	if (setjmp(env) != 0) {
		tcs_jmp = NULL;
		tcs_failed(err, errsz);
		if (d != NULL) {
			mj_deleteData(d);
		}
		return NULL;
	}
	tcs_jmp = &env;
	d = mj_makeData(m);
	if (d == NULL) {
		snprintf(tcs_msg, sizeof tcs_msg, "mj_makeData returned NULL (out of memory?)");
		tcs_failed(err, errsz);
	}
	tcs_jmp = NULL;
	return d;
}

int tcs_mj_step(mjModel* m, mjData* d, long n, double partial, char* err, int errsz) {
	jmp_buf env;
	const mjtNum timestep = m->opt.timestep;
	const int pstack = d->pstack;
	if (setjmp(env) != 0) {
		tcs_jmp = NULL;
		m->opt.timestep = timestep;
		d->pstack = pstack;
		tcs_failed(err, errsz);
		return -1;
	}
	tcs_jmp = &env;
	for (long i = 0; i < n; i++) {
		mj_step(m, d);
	}
	if (partial > 0) {
		m->opt.timestep = partial;
		mj_step(m, d);
		m->opt.timestep = timestep;
	}
	tcs_jmp = NULL;
	return 0;
}

int tcs_mj_forward(const mjModel* m, mjData* d, char* err, int errsz) {
	jmp_buf env;
	const int pstack = d->pstack;
	if (setjmp(env) != 0) {
		tcs_jmp = NULL;
		d->pstack = pstack;
		tcs_failed(err, errsz);
		return -1;
	}
	tcs_jmp = &env;
	// mj_forward normalizes the quaternions in qpos and leaves its
	// accelerations in the solver's warm start (and may touch act and
	// mocap_quat likewise): each of these changes the next step in its last
	// bits. The next step must start from what the last one left, as it
	// would had nobody looked.
	const int nq = m->nq, nv = m->nv, na = m->na, nm = 4 * m->nmocap;
	mjtNum* saved = mj_stackAlloc(d, nq + 2 * nv + na + nm);
	mju_copy(saved, d->qpos, nq);
	mju_copy(saved + nq, d->qvel, nv);
	mju_copy(saved + nq + nv, d->qacc_warmstart, nv);
	mju_copy(saved + nq + 2 * nv, d->act, na);
	mju_copy(saved + nq + 2 * nv + na, d->mocap_quat, nm);
	mj_forward(m, d);
	mju_copy(d->qpos, saved, nq);
	mju_copy(d->qvel, saved + nq, nv);
	mju_copy(d->qacc_warmstart, saved + nq + nv, nv);
	mju_copy(d->act, saved + nq + 2 * nv, na);
	mju_copy(d->mocap_quat, saved + nq + 2 * nv + na, nm);
	d->pstack = pstack;
	tcs_jmp = NULL;
	return 0;
}

int tcs_mj_reset(const mjModel* m, mjData* d, char* err, int errsz) {
	jmp_buf env;
	if (setjmp(env) != 0) {
		tcs_jmp = NULL;
		tcs_failed(err, errsz);
		return -1;
	}
	tcs_jmp = &env;
	mj_resetData(m, d);
	tcs_jmp = NULL;
	return 0;
}
