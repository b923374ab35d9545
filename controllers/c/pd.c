/*
 * pd.c: the pendulum swing-up and balance controller of paper 004 §4 as a
 * native tcs client in C (the same law as `tcs client pd`, see
 * controllers/pdlaw.go). Build:
 *
 *	gcc -O2 -std=c11 -I coordinator/native -o pd controllers/c/pd.c -lm
 *
 * Flags: --kp --kd --ke --catch --max-torque --mass --length --gravity
 * --target VALUE, and --plan (target from the newest plan on channel 1).
 * Every activation k: take [theta, thetadot] (delivered with the
 * activation, or tcs_read when the world lags), compute the torque, write
 * it on channel 0 and idle until (k+1)*P in one round trip. Exits 0 when
 * the simulation ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcs_native.h"

struct pd_law {
	double kp, kd, ke, catch_angle, max_torque, mass, length, gravity;
};

static double wrap_angle(double a)
{
	a = fmod(a + M_PI, 2 * M_PI);
	if (a <= 0)
		a += 2 * M_PI;
	return a - M_PI;
}

static double pd_torque(const struct pd_law *c, double theta, double thetadot, double target)
{
	double e = wrap_angle(theta - target), u;

	if (fabs(e) < c->catch_angle) {
		u = -c->kp * e - c->kd * thetadot;
	} else {
		double inertia = c->mass * c->length * c->length;
		double mgl = c->mass * c->gravity * c->length;
		double energy = 0.5 * inertia * thetadot * thetadot - mgl * cos(theta);
		double want = -mgl * cos(target);
		u = c->ke * (want - energy) * (thetadot < 0 ? -1.0 : 1.0);
	}
	if (isnan(u))
		return 0;
	return fmax(-c->max_torque, fmin(c->max_torque, u));
}

static int usage(void)
{
	fprintf(stderr, "usage: pd [--kp N] [--kd N] [--ke N] [--catch RAD] [--max-torque N] "
			"[--mass KG] [--length M] [--gravity G] [--target RAD] [--plan]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct pd_law law = {40, 8, 2, 0.5, 5, 1, 1, 9.81};
	struct {
		const char *name;
		double *v;
	} flags[] = {
		{"--kp", &law.kp}, {"--kd", &law.kd}, {"--ke", &law.ke},
		{"--catch", &law.catch_angle}, {"--max-torque", &law.max_torque},
		{"--mass", &law.mass}, {"--length", &law.length}, {"--gravity", &law.gravity},
		{"--target", NULL},
	};
	double target = M_PI, obs[2], cmd[1], plan[4];
	int use_plan = 0;
	struct tcs_client c;
	int64_t period, k;

	for (int i = 1; i < argc; i++) {
		size_t j, nflags = sizeof flags / sizeof flags[0];
		char *end;
		if (strcmp(argv[i], "--plan") == 0) {
			use_plan = 1;
			continue;
		}
		for (j = 0; j < nflags; j++)
			if (strcmp(argv[i], flags[j].name) == 0)
				break;
		if (j == nflags || i + 1 >= argc)
			return usage();
		double v = strtod(argv[++i], &end);
		if (*end != '\0')
			return usage();
		*(flags[j].v ? flags[j].v : &target) = v;
	}

	if (tcs_connect(&c) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "pd: not running under tcs: TCS_NATIVE is not set\n");
		else
			fprintf(stderr, "pd: connect: %s\n", strerror(errno));
		return 1;
	}
	period = c.period > 0 ? c.period : 1000000;
	k = c.now / period;
	int n = tcs_read(&c, obs, 2, NULL);
	for (;;) {
		if (n < 0)
			break;
		if (n < 2) {
			errno = EPROTO; /* want [theta, thetadot] */
			break;
		}
		if (use_plan) {
			/* The newest plan comes with the activation (channel 1 is
			 * the first subscribed); before the first one, ask. */
			int m = tcs_in(&c, plan, 4, NULL);
			if (m == 0)
				m = tcs_recv(&c, 1, plan, 4, NULL);
			if (m < 0)
				break;
			if (m > 0 && !isnan(plan[0]))
				target = plan[0];
		}
		cmd[0] = pd_torque(&law, obs[0], obs[1], target);
		k++;
		/* One round trip an activation: the command goes out, and the
		 * next activation brings its sample; only when the world lags
		 * does the client wait for a newer one. */
		if (tcs_write_idle(&c, 0, cmd, 1, k * period, NULL) < 0)
			break;
		n = tcs_obs_current(&c) ? tcs_obs(&c, obs, 2, NULL) : tcs_read(&c, obs, 2, NULL);
	}
	if (errno == ESHUTDOWN) {
		tcs_close(&c);
		return 0;
	}
	fprintf(stderr, "pd: %s (status %#x)\n", strerror(errno), c.status);
	tcs_close(&c);
	return 1;
}
