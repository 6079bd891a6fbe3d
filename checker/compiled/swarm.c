// SPDX-License-Identifier: GPL-2.0-only
/* countercheck swarm search: randomised depth-first bug hunting (SPIN's swarm).
 *
 * checker/compiled/swarm.py puts the generated part (the steps, properties,
 * terminal predicate and canonical form, exactly as for the breadth-first
 * runtime.c) before this text, with cc_step_one(k, s, t) (one step by
 * number). This program is one worker of a swarm: it runs the runs numbered
 * WORKER, WORKER + NWORKERS, ... Run r depends only on (SEED, r): its step
 * order (a random permutation, rotated at random at each state), its depth
 * limit, its state budget (a Luby sequence of restarts, so no run stays
 * stuck in one subtree), the initial state it starts from, and the salts of
 * its bitstate hashes. Each run is a depth-first search with a Bloom
 * filter of visited states (canonical under the declared CPU symmetry; 3
 * hashes), cleared at its start: the runs differ, as SPIN's swarm jobs do,
 * by order, depth and hashing.
 *
 * Nothing here is a verdict that a property holds: a found property is a
 * path (the step numbers from the initial state), which the Python side
 * replays on the interpreter before it reports anything; what was not found
 * is inconclusive, with the coverage printed at the end.
 *
 * Output (read by checker/compiled/swarm.py), one record per line:
 *   found PROP RUN INIT SECONDS LEN STEP...   a property decided (PROP -1: a deadlock)
 *   error KIND STEP DETAIL                    (from cc_fail) and then
 *   path RUN INIT LEN STEP...                 the path to the state whose step failed
 *   result KEY=VALUE ...                      coverage and why the worker stopped
 *   end
 */

static double sw_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* splitmix64: the stream of one run, from (seed, run) alone */
static uint64_t sw_rng;
static inline uint64_t sw_next(void) {
    uint64_t z = (sw_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline uint64_t sw_below(uint64_t n) { return n ? sw_next() % n : 0; }

/* The Luby sequence 1 1 2 1 1 2 4 1 1 2 ...: restart budgets with no tuning (Luby, Sinclair, Zuckerman 1993) */
static uint64_t sw_luby(uint64_t i) {  /* i >= 1 */
    for (;;) {
        uint64_t k = 1;
        while (((uint64_t)1 << k) - 1 < i) k++;
        if (i == ((uint64_t)1 << k) - 1) return (uint64_t)1 << (k - 1);
        i -= ((uint64_t)1 << (k - 1)) - 1;
    }
}

/* ---- the bitstate (Bloom filter): m = 2^bits, 3 probes by double hashing ---- */
static uint64_t *bs;
static int bs_log;
static uint64_t bs_set;  /* bits set: the filter's fill, for the omission estimate */
static uint64_t salt1, salt2;

static inline void sw_hash(const int64_t *v, uint64_t *h1, uint64_t *h2) {
    uint64_t a = salt1 ^ (uint64_t)CC_NSLOTS, b = salt2;
    for (int i = 0; i < CC_NSLOTS; i++) {
        uint64_t k = (uint64_t)v[i] * 0xbf58476d1ce4e5b9ULL;
        k ^= k >> 31;
        a = (a ^ k) * 0x94d049bb133111ebULL;
        a ^= a >> 29;
        b = (b + k) * 0x9e3779b97f4a7c15ULL;
        b ^= b >> 32;
    }
    *h1 = a ^ (a >> 32);
    *h2 = (b ^ (b >> 29)) | 1;
}

/* 1: new (its bits are now set); 0: every bit was set (seen, or a hash collision) */
static inline int bs_test_set(const int64_t *v) {
    uint64_t h1, h2, mask = ((uint64_t)1 << bs_log) - 1;
    sw_hash(v, &h1, &h2);
    int fresh = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t bit = (h1 + (uint64_t)i * h2) & mask;
        uint64_t w = bs[bit >> 6], m = (uint64_t)1 << (bit & 63);
        if (!(w & m)) { bs[bit >> 6] = w | m; bs_set++; fresh = 1; }
    }
    return fresh;
}

/* ---- one step by number, for the runs' own order ---- */
static int64_t *sw_stack;     /* depth x CC_NSLOTS: the states on the path */
static uint32_t *sw_next_k;   /* per depth: how many of the order's steps were tried */
static uint32_t *sw_rot;      /* per depth: the order's rotation at that state */
static uint32_t *sw_enabled;  /* per depth: steps enabled there */
static uint16_t *sw_lab;      /* per depth: the step that led to it */
static uint16_t *sw_order;    /* directed runs, per depth: the enabled steps, nearest a violation first */
static uint32_t *sw_norder;   /* directed runs, per depth: how many */
static double sw_key[CC_NSTEPS + 1];
static int64_t sw_tmp[CC_NSLOTS];
static uint16_t sw_perm[CC_NSTEPS + 1];
static int sw_run = -1, sw_init = 0, sw_sp = 0;  /* the path being extended, for cc_fail's report */

static void sw_print_path(int extra) {
    printf(" %d", sw_sp - 1 + (extra >= 0));
    for (int d = 1; d < sw_sp; d++) printf(" %u", (unsigned)sw_lab[d]);
    if (extra >= 0) printf(" %d", extra);
    printf("\n");
}

static int sw_failing_step = -1;
static void sw_at_exit(void) {  /* cc_fail exits: the path to the failing state, for the interpreter to replay */
    if (sw_run >= 0 && sw_sp > 0) {
        printf("path %d %d", sw_run, sw_init);
        sw_print_path(sw_failing_step);
        fflush(stdout);
    }
}

/* A directed run's order at a state: every enabled step, by the distance of its successor to violating a
   pending invariant (cc_distance), ties in the run's rotated order (a stable insertion sort). */
static void sw_direct(int d, const int64_t *s, const int *pending) {
    uint16_t *o = sw_order + (size_t)d * (CC_NSTEPS + 1);
    uint32_t n = 0;
    for (uint32_t j = 0; j < CC_NSTEPS; j++) {
        int k = sw_perm[(sw_rot[d] + j) % CC_NSTEPS];
        sw_failing_step = k;
        int ok = cc_step_one(k, s, sw_tmp);
        sw_failing_step = -1;
        if (__builtin_expect(cc_ovf, 0)) cc_fail("overflow", k, 0);
        if (!ok) continue;
        double x = cc_distance(sw_tmp, pending);
        uint32_t i = n++;
        while (i > 0 && sw_key[i - 1] > x) { sw_key[i] = sw_key[i - 1]; o[i] = o[i - 1]; i--; }
        sw_key[i] = x;
        o[i] = (uint16_t)k;
    }
    sw_norder[d] = n;
}

int main(int argc, char **argv) {
    if (argc < 11) {
        fprintf(stderr, "usage: swarm SEED WORKER NWORKERS RUNS TIMEOUT MAX_STATES MAX_DEPTH BITS_LOG RUN_BASE "
                        "PENDING < initial states\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 10);
    int worker = atoi(argv[2]), nworkers = atoi(argv[3]);
    uint64_t runs = strtoull(argv[4], NULL, 10);        /* 0: until a budget ends it */
    double timeout = atof(argv[5]);                       /* 0: none */
    uint64_t max_states = strtoull(argv[6], NULL, 10);  /* this worker's, 0: none */
    int max_depth = atoi(argv[7]);
    int bits_max = atoi(argv[8]);
    uint64_t run_base = strtoull(argv[9], NULL, 10);    /* states of a Luby unit */
    const char *pend = argv[10];                         /* per property, 1: look for it; then the deadlock */
    if (nworkers < 1 || worker < 0 || worker >= nworkers || max_depth < 1 || bits_max < 10 || bits_max > 40 ||
        (int)strlen(pend) != CC_NPROPS + 1) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    int ninit = 0;
    if (scanf("%d", &ninit) != 1 || ninit < 1) { fprintf(stderr, "no initial states on stdin\n"); return 2; }
    int64_t *inits = malloc(sizeof(int64_t) * CC_NSLOTS * (size_t)ninit);
    for (int k = 0; k < ninit * CC_NSLOTS; k++) {
        long long x;
        if (scanf("%lld", &x) != 1) { fprintf(stderr, "short initial state\n"); return 2; }
        inits[k] = x;
    }
    int pending[CC_NPROPS + 1], npending = 0;
    for (int k = 0; k <= CC_NPROPS; k++) { pending[k] = pend[k] == '1'; npending += pending[k]; }
    sw_stack = malloc(sizeof(int64_t) * CC_NSLOTS * (size_t)(max_depth + 1));
    sw_next_k = malloc(sizeof(uint32_t) * (size_t)(max_depth + 1));
    sw_rot = malloc(sizeof(uint32_t) * (size_t)(max_depth + 1));
    sw_enabled = malloc(sizeof(uint32_t) * (size_t)(max_depth + 1));
    sw_lab = malloc(sizeof(uint16_t) * (size_t)(max_depth + 1));
    sw_order = malloc(sizeof(uint16_t) * (CC_NSTEPS + 1) * (size_t)(max_depth + 1));
    sw_norder = malloc(sizeof(uint32_t) * (size_t)(max_depth + 1));
    bs = malloc(((size_t)1 << bits_max) / 8);
    if (!sw_stack || !sw_next_k || !sw_rot || !sw_enabled || !sw_lab || !sw_order || !sw_norder || !bs) {
        printf("result stopped=max_memory runs=0 states=0 transitions=0 depth=0\nend\n");
        return 5;
    }
    atexit(sw_at_exit);
    for (int k = 0; k <= CC_NEVENTS; k++) ev_idx[k] = NONE;
    double t0 = sw_now();
    uint64_t states = 0, transitions = 0, runs_done = 0, cut = 0, max_seen_depth = 0;
    double lost = 0.0;     /* expected states wrongly taken as seen (Bloom false positives), summed over runs */
    double worst = 1.0;    /* the lowest estimated coverage of a run (stored / (stored + expected lost)) */
    int min_bits = 64, max_bits = 0, depth_lo = 1 << 30, depth_hi = 0;
    const char *stopped = "runs";
    int64_t t[CC_NSLOTS], c[CC_NSLOTS];
    for (uint64_t r = (uint64_t)worker; runs == 0 || r < runs; r += (uint64_t)nworkers) {
        if (npending == 0) { stopped = "decided"; break; }
        if (max_states && states >= max_states) { stopped = "max_states"; break; }
        if (timeout > 0 && sw_now() - t0 > timeout) { stopped = "timeout"; break; }
        sw_rng = seed * 0x2545f4914f6cdd1dULL ^ (r + 1) * 0x9e3779b97f4a7c15ULL;
        sw_next(); sw_next();
        /* the run's order: a permutation of the steps */
        for (int k = 0; k < CC_NSTEPS; k++) sw_perm[k] = (uint16_t)k;
        for (int k = CC_NSTEPS - 1; k > 0; k--) {
            int j = (int)sw_below((uint64_t)k + 1);
            uint16_t x = sw_perm[k]; sw_perm[k] = sw_perm[j]; sw_perm[j] = x;
        }
        /* its depth limit: a power of two between 16 and MAX_DEPTH, log-uniform (short ones sweep wide) */
        int lg_hi = 4;
        while (lg_hi < 30 && (1 << (lg_hi + 1)) <= max_depth) lg_hi++;
        int limit = max_depth < 16 ? max_depth : 1 << (4 + (int)sw_below((uint64_t)(lg_hi - 4 + 1)));
        if ((r / (uint64_t)nworkers) % 4 == 3 || limit > max_depth) limit = max_depth;  /* every 4th: the whole depth */
        /* its budget: Luby restarts; the bitstate sized to it (16 bits a state), up to BITS_LOG */
        uint64_t budget = sw_luby(r / (uint64_t)nworkers + 1) * run_base;
        if (max_states && budget > max_states - states) budget = max_states - states;
        int lg = 16;
        while (lg < bits_max && ((uint64_t)1 << lg) < budget * 16) lg++;
        bs_log = lg;
        if (lg < min_bits) min_bits = lg;
        if (lg > max_bits) max_bits = lg;
        if (limit < depth_lo) depth_lo = limit;
        if (limit > depth_hi) depth_hi = limit;
        memset(bs, 0, ((size_t)1 << lg) / 8);
        bs_set = 0;
        salt1 = sw_next();
        salt2 = sw_next();
        /* every other run of a worker is directed: it tries first the step nearest a violation */
        int directed = (int)((r / (uint64_t)nworkers) % 2);
        int init = (int)sw_below((uint64_t)ninit);
        sw_run = (int)r;
        sw_init = init;
        uint64_t run_states = 0;
        double run_lost = 0.0;
        double m = (double)((uint64_t)1 << lg);
        /* the initial state */
        memcpy(sw_stack, inits + (size_t)init * CC_NSLOTS, sizeof(int64_t) * CC_NSLOTS);
        memcpy(c, sw_stack, sizeof c);
        cc_canonical(c);
        bs_test_set(c);
        run_states++;
        sw_sp = 1;
        sw_next_k[0] = 0; sw_rot[0] = (uint32_t)sw_below(CC_NSTEPS ? CC_NSTEPS : 1); sw_enabled[0] = 0; sw_lab[0] = 0;
        if (directed) sw_direct(0, sw_stack, pending);
        for (int k = 0; k < CC_NPROPS; k++) {
            if (!pending[k]) continue;
            int val = cc_prop(k, sw_stack);
            if (cc_ovf) cc_fail("overflow_property", k, 0);
            if (cc_prop_kind[k] == 0 ? !val : val) {
                pending[k] = 0; npending--;
                printf("found %d %d %d %.6f", k, sw_run, init, sw_now() - t0);
                sw_print_path(-1);
            }
        }
        int run_stopped = 0;
        while (sw_sp > 0 && !run_stopped) {
            int d = sw_sp - 1;
            int64_t *s = sw_stack + (size_t)d * CC_NSLOTS;
            if (sw_next_k[d] >= (directed ? sw_norder[d] : CC_NSTEPS)) {  /* every step tried: done with it */
                if (sw_enabled[d] == 0 && pending[CC_NPROPS] && !cc_terminal(s)) {
                    pending[CC_NPROPS] = 0; npending--;
                    printf("found -1 %d %d %.6f", sw_run, init, sw_now() - t0);
                    sw_print_path(-1);
                }
                if (cc_ovf) cc_fail("overflow_terminal", -1, 0);
                sw_sp--;
                continue;
            }
            int k = directed ? sw_order[(size_t)d * (CC_NSTEPS + 1) + sw_next_k[d]]
                             : sw_perm[(sw_rot[d] + sw_next_k[d]) % CC_NSTEPS];
            sw_next_k[d]++;
            sw_failing_step = k;
            int ok = cc_step_one(k, s, t);
            sw_failing_step = -1;
            if (__builtin_expect(cc_ovf, 0)) cc_fail("overflow", k, 0);
            if (!ok) continue;
            sw_enabled[d]++;
            transitions++;
            if ((transitions & 1023) == 0 && timeout > 0 && sw_now() - t0 > timeout) { run_stopped = 2; break; }
            memcpy(c, t, sizeof c);
            cc_canonical(c);
            double fill = (double)bs_set / m;
            if (!bs_test_set(c)) continue;
            double fp = fill * fill * fill;
            run_lost += fp < 1.0 ? fp / (1.0 - fp) : 1.0;
            run_states++;
            /* properties at the new state: only those its step can change (runtime.c's check_props) */
            for (int p = 0; p < CC_NPROPS; p++) {
                if (!pending[p] || !cc_step_reads[k][p]) continue;
                int val = cc_prop(p, t);
                if (cc_ovf) cc_fail("overflow_property", p, 0);
                if (cc_prop_kind[p] == 0 ? !val : val) {
                    pending[p] = 0; npending--;
                    printf("found %d %d %d %.6f", p, sw_run, init, sw_now() - t0);
                    sw_print_path(k);
                }
            }
            if (npending == 0) { run_stopped = 1; break; }
            if (run_states >= budget) { run_stopped = 1; break; }
            if (sw_sp >= limit) { cut++; continue; }  /* at the depth limit: stored, not expanded */
            memcpy(sw_stack + (size_t)sw_sp * CC_NSLOTS, t, sizeof t);
            sw_next_k[sw_sp] = 0;
            sw_rot[sw_sp] = (uint32_t)sw_below(CC_NSTEPS);
            sw_enabled[sw_sp] = 0;
            sw_lab[sw_sp] = (uint16_t)k;
            sw_sp++;  /* before ordering its steps: a step that fails there is reported on the path through it */
            if (directed) sw_direct(sw_sp - 1, sw_stack + (size_t)(sw_sp - 1) * CC_NSLOTS, pending);
            if ((uint64_t)sw_sp > max_seen_depth) max_seen_depth = (uint64_t)sw_sp;
        }
        states += run_states;
        lost += run_lost;
        double cov = run_states / (run_states + run_lost);
        if (cov < worst) worst = cov;
        runs_done++;
        sw_run = -1;
        if (run_stopped == 2) { stopped = "timeout"; break; }
    }
    if (npending == 0) stopped = "decided";
    double secs = sw_now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    printf("result stopped=%s directed=%d runs=%llu states=%llu transitions=%llu depth=%llu cut=%llu lost=%.3f coverage=%.6f "
           "bits_min=%d bits_max=%d depth_lo=%d depth_hi=%d seconds=%.6f cpu=%.6f\n",
           stopped, CC_NPROPS > 0, (unsigned long long)runs_done, (unsigned long long)states, (unsigned long long)transitions,
           (unsigned long long)(max_seen_depth ? max_seen_depth - 1 : 0), (unsigned long long)cut, lost, worst,
           runs_done ? min_bits : 0, max_bits, runs_done ? depth_lo : 0, depth_hi, secs, cpu);
    printf("end\n");
    fflush(stdout);
    return 0;
}
