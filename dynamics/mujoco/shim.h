// shim.h: guarded calls into MuJoCo 2.2.2 for the Go package.
//
// MuJoCo reports a fatal error through mju_error, whose default handler
// prints, waits for Enter and exits the process. tcs_mj_init installs
// handlers once: an error inside one of the tcs_mj_* calls below longjmps
// back to it, which returns -1 with MuJoCo's message in err; warnings are
// only counted (in mjData.warning), never printed or written to a log file.
#ifndef TCS_MUJOCO_SHIM_H
#define TCS_MUJOCO_SHIM_H

#include <mujoco/mujoco.h>

// tcs_mj_init installs the error and warning handlers (idempotent,
// thread-safe).
void tcs_mj_init(void);

// tcs_mj_make makes the mjData of m. NULL on error, with the message in
// err.
mjData* tcs_mj_make(const mjModel* m, char* err, int errsz);

// tcs_mj_step takes n steps of the model's timestep and then, when
// partial > 0, one step of partial seconds (the timestep is set to partial
// for that step and restored). 0, or -1 with MuJoCo's message in err.
int tcs_mj_step(mjModel* m, mjData* d, long n, double partial, char* err, int errsz);

// tcs_mj_forward computes every derived quantity (sensors included) at the
// current state without integrating, and leaves the state (qpos, qvel,
// act, mocap_quat) and the solver's warm start bit for bit as it found
// them. 0, or -1 with the message in err.
int tcs_mj_forward(const mjModel* m, mjData* d, char* err, int errsz);

// tcs_mj_reset resets d to the model's initial state (mj_resetData). 0, or
// -1 with the message in err.
int tcs_mj_reset(const mjModel* m, mjData* d, char* err, int errsz);

#endif
