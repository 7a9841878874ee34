/*
 * loopguard-launch: loopguard's small launcher (Linux).
 *
 *   loopguard-launch PLANFILE LAUNCHER exec OPTIONS -- PROGRAM ARGV0 [ARGS...]
 *
 * After PLANFILE comes loopguard-exec's own command line (LAUNCHER is
 * loopguard-exec, or loopguard-hook). The small launcher confines itself
 * to the plan the hook computed for that command line (package confine,
 * Prepare: every decision is made there, in Go) and execs PROGRAM. It
 * exists because a Go program's start alone costs more than the launch
 * budget (bench/results/2026-12-01-launcher-floor.md); it decides nothing.
 *
 * It applies the plan only if
 *   - the file's bytes hash (SHA-256) to its name, which the rewritten
 *     command pins: nothing written after the hook can change the plan;
 *   - the plan is for this command line (its options, word for word, and
 *     PROGRAM) and for this user;
 *   - every variable the plan was computed from has the same value here.
 * When the plan file cannot be opened (a sandbox that hides the guard's
 * state), the environment or the user differ, the kernel's Landlock is
 * older, or a private directory is missing, it runs LAUNCHER with its own
 * command line, which computes the plan itself: the environment changes
 * how fast a call starts, never how it is confined. Any other failure (a
 * plan changed after the hook wrote it, a plan for another command) runs
 * nothing: exit 126, with a line on stderr. Once the restriction has
 * started, every failure is exit 126.
 *
 * The records are applied in the order confine's run does: the Landlock
 * ruleset (private directories opened without following a link and
 * checked to be this user's), no_new_privs, the seccomp filter, descriptors
 * above 2 closed on exec, the redirections, the working directory, the
 * environment, execve.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXIT_FAILED 126
#define MAX_PLAN (1 << 20)
#define PLAN_FORMAT "1"

extern char **environ;

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "loopguard: the program was not run: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(EXIT_FAILED);
}

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	int i;
	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

static void sha256_hex(const unsigned char *data, size_t n, char out[65])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	unsigned char tail[128];
	size_t i, full = n - n % 64, rest = n % 64, tn;
	uint64_t bits = (uint64_t)n * 8;
	for (i = 0; i < full; i += 64)
		sha256_block(h, data + i);
	memset(tail, 0, sizeof tail);
	memcpy(tail, data + full, rest);
	tail[rest] = 0x80;
	tn = rest < 56 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[tn - 1 - i] = (unsigned char)(bits >> (8 * i));
	for (i = 0; i < tn; i += 64)
		sha256_block(h, tail + i);
	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", (unsigned)(h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
	out[64] = 0;
}

/* ---- the plan ---- */

struct rec {
	const char *key, *val;
};

static struct rec *recs;
static size_t nrecs;

/* load reads PLANFILE, checks its bytes against its name and splits it
 * into records; it returns 0 when the file cannot be opened. */
static int load(const char *path)
{
	const char *name = strrchr(path, '/');
	char sum[65];
	struct stat st;
	unsigned char *data;
	size_t n = 0, i, start;
	int fd;

	name = name ? name + 1 : path;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == EPERM))
		return 0;
	if (fd < 0)
		fail("the plan file cannot be read", strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > MAX_PLAN)
		fail("the plan file is not a plan", path);
	data = malloc((size_t)st.st_size + 1);
	if (!data)
		fail("out of memory", NULL);
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, data + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fail("the plan file cannot be read", path);
		n += (size_t)r;
	}
	close(fd);
	sha256_hex(data, n, sum);
	if (strcmp(sum, name) != 0)
		fail("the plan file was changed after the hook wrote it", path);
	if (data[n - 1] != 0)
		fail("the plan file is not a plan", path);
	recs = calloc(n, sizeof *recs);
	if (!recs)
		fail("out of memory", NULL);
	for (start = 0, i = 0; i < n; i++) {
		char *eq;
		if (data[i] != 0)
			continue;
		eq = strchr((char *)data + start, '=');
		if (!eq)
			fail("the plan file is not a plan", path);
		*eq = 0;
		recs[nrecs].key = (char *)data + start;
		recs[nrecs].val = eq + 1;
		nrecs++;
		start = i + 1;
	}
	if (nrecs == 0 || strcmp(recs[0].key, "loopguard-plan") != 0 || strcmp(recs[0].val, PLAN_FORMAT) != 0)
		fail("the plan file is of another loopguard version (install loopguard's binaries together)", path);
	return 1;
}

/* one returns the value of the one record key, failing if there is not
 * exactly one. */
static const char *one(const char *key)
{
	const char *v = NULL;
	size_t i;
	for (i = 0; i < nrecs; i++) {
		if (strcmp(recs[i].key, key) != 0)
			continue;
		if (v)
			fail("the plan file names a record twice", key);
		v = recs[i].val;
	}
	if (!v)
		fail("the plan file lacks a record", key);
	return v;
}

/* number reads a decimal number, failing on anything else. */
static unsigned long long number(const char *s, const char **end)
{
	unsigned long long v = 0;
	if (*s < '0' || *s > '9')
		fail("the plan file is not a plan", s);
	while (*s >= '0' && *s <= '9') {
		if (v > (~0ULL - 9) / 10)
			fail("the plan file is not a plan", s);
		v = v * 10 + (unsigned long long)(*s++ - '0');
	}
	if (end)
		*end = s;
	else if (*s)
		fail("the plan file is not a plan", s);
	return v;
}

/* numberSpace reads "N " and returns what follows. */
static unsigned long long number_space(const char *s, const char **rest)
{
	const char *e;
	unsigned long long v = number(s, &e);
	if (*e != ' ')
		fail("the plan file is not a plan", s);
	*rest = e + 1;
	return v;
}

/* fallback runs the launcher with its own command line. */
static char **inner;

static void fallback(void)
{
	execve(inner[0], inner, environ);
	fail("the launcher cannot be run", strerror(errno));
}

/* ---- Landlock ---- */

struct ruleset_attr {
	uint64_t fs, net, scoped;
};

struct path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define RULE_PATH_BENEATH 1
#define CREATE_RULESET_VERSION (1U << 0)

/* ---- main ---- */

int main(int argc, char **argv)
{
	struct ruleset_attr attr;
	char **prog;
	const char *v;
	size_t i, j;
	long abi;
	int rs, uid;
	char **env;
	size_t nenv = 0;

	/* argv: PLANFILE, then the launcher's command line, whose first --
	 * ends its options (their values are words and absolute paths). */
	if (argc < 3 || argv[2][0] != '/')
		fail("usage: loopguard-launch PLANFILE LAUNCHER exec OPTIONS -- PROGRAM ARGV0 [ARGS...]", NULL);
	inner = argv + 2;
	for (i = 1; inner[i] && strcmp(inner[i], "--") != 0; i++)
		;
	if (!inner[i] || !inner[i + 1] || !inner[i + 2] || inner[i + 1][0] != '/')
		fail("usage: loopguard-launch PLANFILE LAUNCHER exec OPTIONS -- PROGRAM ARGV0 [ARGS...]", NULL);
	prog = inner + i + 1;
	if (!load(argv[1]))
		fallback();
	/* The plan is for this command line, word for word. */
	for (i = 1, j = 0; j < nrecs; j++) {
		if (strcmp(recs[j].key, "farg") != 0)
			continue;
		if (inner + i >= prog - 1 || strcmp(inner[i], recs[j].val) != 0)
			fail("the plan is for another command", inner[i]);
		i++;
	}
	if (inner + i != prog - 1)
		fail("the plan is for another command", inner[i]);
	if (strcmp(one("exe"), prog[0]) != 0)
		fail("the plan is for another program", prog[0]);

	/* The plan holds only in the environment it was computed in. */
	uid = (int)number(one("uid"), NULL);
	if (uid != (int)getuid())
		fallback();
	for (i = 0; i < nrecs; i++) {
		const char *eq, *have;
		if (strcmp(recs[i].key, "env") != 0)
			continue;
		eq = strchr(recs[i].val, '=');
		if (!eq)
			fail("the plan file is not a plan", recs[i].val);
		{
			char name[256];
			size_t len = (size_t)(eq - recs[i].val);
			if (len == 0 || len >= sizeof name)
				fail("the plan file is not a plan", recs[i].val);
			memcpy(name, recs[i].val, len);
			name[len] = 0;
			have = getenv(name);
		}
		if (strcmp(have ? have : "", eq + 1) != 0)
			fallback();
	}
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, CREATE_RULESET_VERSION);
	if (abi < (long)number(one("abi"), NULL))
		fallback();

	/* The ruleset. Until landlock_restrict_self nothing is restricted
	 * (the ruleset's descriptor closes on exec), so a private directory
	 * that is not there yet is still loopguard-exec's to make: fallback.
	 * From restrict_self on, any failure runs nothing. */
	memset(&attr, 0, sizeof attr);
	attr.fs = number(one("fs"), NULL);
	attr.net = number(one("net"), NULL);
	attr.scoped = number(one("scoped"), NULL);
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (rs < 0)
		fail("landlock_create_ruleset", strerror(errno));
	{
		int owner = (int)number(one("owner"), NULL);
		for (i = 0; i < nrecs; i++) {
			struct path_beneath_attr pb;
			const char *path;
			int private_ = strcmp(recs[i].key, "private") == 0, fd;
			int nofollow = strcmp(recs[i].key, "rulenofollow") == 0;
			if (!private_ && !nofollow && strcmp(recs[i].key, "rule") != 0)
				continue;
			pb.allowed_access = number_space(recs[i].val, &path);
			if (nofollow) {
				/* A git directory a concurrent call could have replaced
				 * by a link since the hook checked it. */
				fd = open(path, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					fail("a git directory of the plan is no longer one (a link?)", path);
			} else if (private_) {
				/* A directory of the owner's, not a link. */
				struct stat st;
				fd = open(path, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0 && errno == ENOENT)
					fallback();
				if (fd < 0 || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || (int)st.st_uid != owner)
					fail("a private directory is not a directory of this user's (a link, or another's): remove it", path);
			} else {
				fd = open(path, O_PATH | O_CLOEXEC);
				if (fd < 0)
					fail("landlock: a path of the plan cannot be opened (run the call again)", path);
			}
			pb.parent_fd = fd;
			if (syscall(SYS_landlock_add_rule, rs, RULE_PATH_BENEATH, &pb, 0) != 0)
				fail("landlock_add_rule", path);
			close(fd);
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		fail("prctl(PR_SET_NO_NEW_PRIVS)", strerror(errno));
	if (syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		fail("landlock_restrict_self", strerror(errno));
	close(rs);

	/* The socket filter. */
	{
		const char *hex = one("seccomp");
		size_t n = strlen(hex);
		struct sock_filter *f;
		struct sock_fprog fp;
		unsigned char b[8];
		if (n == 0 || n % 16 != 0 || n / 16 > 4096)
			fail("the plan's filter is not a filter", NULL);
		f = calloc(n / 16, sizeof *f);
		if (!f)
			fail("out of memory", NULL);
		for (i = 0; i < n / 16; i++) {
			for (j = 0; j < 8; j++) {
				unsigned int x;
				if (sscanf(hex + 16 * i + 2 * j, "%2x", &x) != 1)
					fail("the plan's filter is not a filter", NULL);
				b[j] = (unsigned char)x;
			}
			f[i].code = (uint16_t)(b[0] | b[1] << 8);
			f[i].jt = b[2];
			f[i].jf = b[3];
			f[i].k = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
		}
		fp.len = (unsigned short)(n / 16);
		fp.filter = f;
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) != 0)
			fail("seccomp", strerror(errno));
	}

	/* Descriptors the agent's process left open do not reach the program. */
	if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) != 0)
		fail("close_range", strerror(errno));

	/* The redirections, under the restriction. */
	for (i = 0; i < nrecs; i++) {
		const char *rest;
		int fd, to;
		if (strcmp(recs[i].key, "close") == 0) {
			close((int)number(recs[i].val, NULL));
		} else if (strcmp(recs[i].key, "dup") == 0) {
			to = (int)number_space(recs[i].val, &rest);
			fd = (int)number(rest, NULL);
			if (fd != to && dup2(fd, to) < 0)
				fail("a redirection", strerror(errno));
		} else if (strcmp(recs[i].key, "open") == 0) {
			const char *path;
			int flags;
			to = (int)number_space(recs[i].val, &rest);
			flags = (int)number_space(rest, &path);
			fd = open(path, flags | O_CLOEXEC, 0666);
			if (fd < 0)
				fail(path, strerror(errno));
			if (fd != to) {
				if (dup2(fd, to) < 0)
					fail(path, strerror(errno));
				close(fd);
			} else if (fcntl(fd, F_SETFD, 0) != 0) {
				fail(path, strerror(errno));
			}
		}
	}

	v = one("cwd");
	if (chdir(v) != 0)
		fail("failed to enter the working directory", v);

	/* The environment: what the plan keeps, and what it sets. */
	for (i = 0; environ[i]; i++)
		nenv++;
	for (i = 0; i < nrecs; i++)
		nenv += strcmp(recs[i].key, "set") == 0;
	env = calloc(nenv + 1, sizeof *env);
	if (!env)
		fail("out of memory", NULL);
	{
		int keepall = 0;
		size_t n = 0;
		for (i = 0; i < nrecs; i++)
			keepall |= strcmp(recs[i].key, "keepall") == 0;
		for (i = 0; environ[i]; i++) {
			const char *kv = environ[i], *eq = strchr(kv, '=');
			size_t len = eq ? (size_t)(eq - kv) : strlen(kv);
			int keep = keepall, set = 0;
			for (j = 0; j < nrecs; j++) {
				const char *k = recs[j].key, *val = recs[j].val;
				if (strcmp(k, "set") == 0)
					set |= strncmp(kv, val, len) == 0 && val[len] == '=';
				else if (strcmp(k, "keep") == 0)
					keep |= strlen(val) == len && strncmp(kv, val, len) == 0;
				else if (strcmp(k, "keepprefix") == 0)
					keep |= strncmp(kv, val, strlen(val)) == 0;
			}
			if (keep && !set)
				env[n++] = (char *)kv;
		}
		for (i = 0; i < nrecs; i++)
			if (strcmp(recs[i].key, "set") == 0)
				env[n++] = (char *)recs[i].val;
		env[n] = NULL;
	}
	execve(prog[0], prog + 1, env);
	fail(prog[0], strerror(errno));
	return EXIT_FAILED;
}
