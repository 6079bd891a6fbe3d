// SPDX-License-Identifier: GPL-2.0-only
/* Liveness on the compiled engine: the state graph and the fair-SCC search of
 * checker/explore/liveness.py, in C (appended after runtime.c and the generated
 * liveness predicates when CC_LIVE is defined; checker/compiled/liveness.py).
 *
 * The graph is the interpreter's (checker/explore/graph.py): every reachable
 * state, unreduced, numbered in BFS order (the search's arena order), and every
 * step as an edge (a state's edges in the generated order, so two steps to one
 * state stay two edges), kept as arrays: lv_off[u] .. lv_off[u+1] index lv_dst
 * (the successor's number) and lv_step (the step: action, CPU and choice).
 *
 * Per property, as liveness.py: R is the graph without the goal (its states, the
 * steps into them, and the goal steps); a trigger (an initial state for
 * eventually, every state for an `always` one, a P state for leads_to) violates it
 * if it reaches, in R, a state with nothing enabled or a fair cycle. Fair cycles:
 * Tarjan's SCCs of R (iterative); in a component, a strongly fair instance (action,
 * CPU) enabled somewhere but never taken inside rules out the states enabling it
 * (the rest decomposed again), a weakly fair one enabled in every state and never
 * taken rules out the component. Enabledness is judged on the whole graph. Which
 * states reach a bad one: Tarjan emits the components sinks first, so one pass in
 * emission order decides each. The lasso: the BFS-tree path to the least such
 * trigger, a shortest path in R on to a bad state, and a cycle in its component
 * that takes each fair instance taken inside and visits a state disabling each
 * weakly fair one it does not take. Python replays it on the interpreter and
 * checks it is a real, fair, violating run before reporting it.
 *
 * Arguments: MAX_STATES TIMEOUT MAX_MEMORY; the initial states on stdin.
 * Output: result ... (as the search's), then per property
 *   live K holds | live K violated TRIGGER TRIGGER_POS LOOP_START STOPS NEDGES
 *   ledge U STEP V          (NEDGES of them: the lasso's steps, in order)
 *   state INDEX V0 V1 ...   (every state on a lasso)
 */
#define LV_GOAL 1
#define LV_TRIG 2
#define LV_BAD 4
#define CC_WINST ((CC_NINST + 63) / 64)

static uint64_t *lv_off;
static uint32_t *lv_dst;
static uint16_t *lv_step;
static uint64_t lv_nedges, lv_ecap;
static uint8_t *lv_flag, *lv_eg, *lv_onstk, *lv_doomed;
static uint32_t *lv_mark, *lv_tidx, *lv_tlow, *lv_stk, *lv_cnode, *lv_topc, *lv_order, *lv_cstart, *lv_work,
    *lv_wseg, *lv_wlen, *lv_scratch, *lv_prev;
static uint64_t *lv_cedge;
static uint32_t lv_ncomp, lv_nwork, lv_worktop, lv_gen;

static void *lv_alloc(size_t bytes) {
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) {
        printf("result stopped=memory states=%u transitions=%llu depth=0\n", nstates, (unsigned long long)transitions);
        exit(5);
    }
    return p;
}

/* Finds or stores a packed state: 1 stored, 0 seen (its number in *at), -1 a limit stopped the search. */
static int lv_find(const uint64_t *words, uint64_t h, uint32_t par, int lab, uint64_t limit, uint32_t *at) {
    uint64_t tag = h & 0xffffffff00000000ULL;
    size_t mask = tab_size - 1, p = TAB_POS(h, mask);
    uint64_t e;
    while ((e = tab[p]) != 0) {
        if ((e & 0xffffffff00000000ULL) == tag) {
            uint32_t j = (uint32_t)e - 1;
            if (memcmp(arena + (size_t)j * L_stride, words, L_stride) == 0) { *at = j; return 0; }
        }
        p = (p + 1) & mask;
    }
    int r = store_packed(words, h, par, lab, limit);
    if (r == 1) *at = nstates - 1;
    return r;
}

/* the graph's bytes, and the fair-SCC search's arrays to come (about 70 bytes a state) */
static uint64_t lv_bytes(void) {
    return bytes_used() + lv_nedges * (sizeof(uint32_t) + sizeof(uint16_t)) + (uint64_t)nstates * (8 + 70);
}

/* The graph, breadth first: a state's number is its BFS position, so expanding in number order is the queue. */
static void lv_graph(uint64_t limit, double timeout, double t0) {
    int64_t s[CC_NSLOTS];
    lv_off[0] = 0;
    uint64_t pw[CC_MAXWORDS];
    unsigned char same[CC_NSTEPS + 1];  /* no canonical form here: each successor is its parent but for its step's slots */
    memset(same, 1, sizeof same);
    for (uint32_t idx = 0; idx < nstates; idx++) {
        load_words(idx, pw);
        unpack_words(pw, s);
        int n = cc_expand(s, succ_buf, succ_lab);
        expanded++;
        transitions += (uint64_t)n;
        if (!pack_batch(n, idx, pw, same)) break;
        if (lv_nedges + (uint64_t)n > lv_ecap || lv_bytes() + (uint64_t)n * 14 > max_memory) {
            stopped = "max_memory";
            break;
        }
        int r = 0;
        for (int j = 0; j < n; j++) {
            uint32_t v;
            r = lv_find(pk_buf + (size_t)j * L_words, pk_hash[j], idx, (int)succ_lab[j], limit, &v);
            if (r < 0) break;
            lv_dst[lv_nedges] = v;
            lv_step[lv_nedges] = (uint16_t)succ_lab[j];
            lv_nedges++;
        }
        lv_off[idx + 1] = lv_nedges;
        if (r < 0 || strcmp(stopped, "none") != 0) break;
        if (timeout > 0 && (expanded & 255) == 0 && now() - t0 > timeout) { stopped = "timeout"; break; }
    }
}

static inline int lv_in_r(uint64_t e) {  /* a step of R, from a state of R */
    return !(lv_flag[lv_dst[e]] & LV_GOAL) && !(lv_eg && lv_eg[e]);
}

static inline void lv_enabled(uint32_t u, uint64_t *en) {
    memset(en, 0, sizeof(uint64_t) * CC_WINST);
    for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++) {
        int i = cc_step_inst[lv_step[e]];
        en[i >> 6] |= UINT64_C(1) << (i & 63);
    }
}

/* Tarjan's SCCs of R restricted to the states marked m, from each of nodes[0..n); each component is handed
   to emit (its states, how many) as it is found: sinks first. Iterative (an explicit call stack). */
static void lv_tarjan(const uint32_t *nodes, uint32_t n, uint32_t m, void (*emit)(const uint32_t *, uint32_t)) {
    for (uint32_t i = 0; i < n; i++) { lv_tidx[nodes[i]] = 0; lv_onstk[nodes[i]] = 0; }
    uint32_t counter = 0, sp = 0, csp = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = nodes[i];
        if (lv_tidx[r]) continue;
        lv_tidx[r] = lv_tlow[r] = ++counter;
        lv_stk[sp++] = r;
        lv_onstk[r] = 1;
        lv_cnode[csp] = r; lv_cedge[csp] = lv_off[r]; csp++;
        while (csp) {
            uint32_t u = lv_cnode[csp - 1];
            uint64_t e = lv_cedge[csp - 1];
            if (e < lv_off[u + 1]) {
                lv_cedge[csp - 1]++;
                if (!lv_in_r(e)) continue;
                uint32_t v = lv_dst[e];
                if (lv_mark[v] != m) continue;
                if (!lv_tidx[v]) {
                    lv_tidx[v] = lv_tlow[v] = ++counter;
                    lv_stk[sp++] = v;
                    lv_onstk[v] = 1;
                    lv_cnode[csp] = v; lv_cedge[csp] = lv_off[v]; csp++;
                } else if (lv_onstk[v] && lv_tidx[v] < lv_tlow[u]) {
                    lv_tlow[u] = lv_tidx[v];
                }
            } else {
                csp--;
                if (lv_tlow[u] == lv_tidx[u]) {
                    uint32_t pos = sp;
                    do { pos--; lv_onstk[lv_stk[pos]] = 0; } while (lv_stk[pos] != u);
                    emit(lv_stk + pos, sp - pos);
                    sp = pos;
                }
                if (csp) {
                    uint32_t p = lv_cnode[csp - 1];
                    if (lv_tlow[u] < lv_tlow[p]) lv_tlow[p] = lv_tlow[u];
                }
            }
        }
    }
}

static void lv_emit_top(const uint32_t *c, uint32_t k) {  /* a component of R: kept in emission order */
    uint32_t start = lv_cstart[lv_ncomp];
    for (uint32_t i = 0; i < k; i++) { lv_order[start + i] = c[i]; lv_topc[c[i]] = lv_ncomp; }
    lv_ncomp++;
    lv_cstart[lv_ncomp] = start + k;
}

static void lv_emit_work(const uint32_t *c, uint32_t k) {  /* a component still to judge */
    memcpy(lv_work + lv_worktop, c, sizeof(uint32_t) * k);
    lv_wseg[lv_nwork] = lv_worktop;
    lv_wlen[lv_nwork] = k;
    lv_nwork++;
    lv_worktop += k;
}

static int lv_any(const uint64_t *a) {
    for (int w = 0; w < CC_WINST; w++) if (a[w]) return 1;
    return 0;
}

/* Judge one component (its states in lv_scratch[0..k)): fair (its states marked bad), not fair, or
   decomposed again without the states enabling a strongly fair instance it never takes (liveness.py). */
static void lv_judge(uint32_t k, int fair) {
    uint32_t m = ++lv_gen;
    for (uint32_t i = 0; i < k; i++) lv_mark[lv_scratch[i]] = m;
    if (k == 1) {
        uint32_t u = lv_scratch[0];
        int loop = 0;
        for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++)
            if (lv_dst[e] == u && lv_in_r(e)) loop = 1;
        if (!loop) { lv_mark[u] = 0; return; }
    }
    uint64_t taken[CC_WINST], enab[CC_WINST], all[CC_WINST], en[CC_WINST], bad[CC_WINST];
    memset(taken, 0, sizeof taken); memset(enab, 0, sizeof enab); memset(all, 0xff, sizeof all);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t u = lv_scratch[i];
        lv_enabled(u, en);
        for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++)
            if (lv_in_r(e) && lv_mark[lv_dst[e]] == m) {
                int x = cc_step_inst[lv_step[e]];
                taken[x >> 6] |= UINT64_C(1) << (x & 63);
            }
        for (int w = 0; w < CC_WINST; w++) { enab[w] |= en[w]; all[w] &= en[w]; }
    }
    for (int w = 0; w < CC_WINST; w++) bad[w] = fair ? enab[w] & cc_inst_strong[w] & ~taken[w] : 0;
    if (lv_any(bad)) {
        uint32_t m2 = ++lv_gen, cnt = 0;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t u = lv_scratch[i];
            lv_enabled(u, en);
            int hit = 0;
            for (int w = 0; w < CC_WINST; w++) if (en[w] & bad[w]) hit = 1;
            if (hit) lv_mark[u] = 0; else { lv_mark[u] = m2; lv_scratch[cnt++] = u; }
        }
        if (cnt) lv_tarjan(lv_scratch, cnt, m2, lv_emit_work);
        return;
    }
    if (fair) {
        for (int w = 0; w < CC_WINST; w++) bad[w] = enab[w] & cc_inst_weak[w] & ~taken[w] & all[w];
        if (lv_any(bad)) {
            for (uint32_t i = 0; i < k; i++) lv_mark[lv_scratch[i]] = 0;
            return;
        }
    }
    for (uint32_t i = 0; i < k; i++) lv_flag[lv_scratch[i]] |= LV_BAD;  /* keeps its mark m: the lasso's cycle */
}

/* The lasso's edges, growing. */
static uint32_t *lz_u, *lz_v;
static uint16_t *lz_s;
static size_t lz_n, lz_cap;

static void lz_push(uint32_t u, uint16_t s, uint32_t v) {
    if (lz_n == lz_cap) {
        lz_cap = lz_cap ? lz_cap * 2 : 64;
        lz_u = realloc(lz_u, lz_cap * sizeof *lz_u);
        lz_v = realloc(lz_v, lz_cap * sizeof *lz_v);
        lz_s = realloc(lz_s, lz_cap * sizeof *lz_s);
        if (!lz_u || !lz_v || !lz_s) { fprintf(stderr, "out of memory for a lasso\n"); exit(5); }
    }
    lz_u[lz_n] = u; lz_s[lz_n] = s; lz_v[lz_n] = v; lz_n++;
}

/* What a breadth-first search in R looks for. */
enum { LV_TO_BAD, LV_TO_PENDING, LV_TO_NODE };
static uint64_t lv_take[CC_WINST], lv_visit[CC_WINST];

static int lv_has_pending_step(uint32_t x, uint32_t m, uint64_t *edge) {
    for (uint64_t e = lv_off[x]; e < lv_off[x + 1]; e++) {
        int i = cc_step_inst[lv_step[e]];
        if (lv_in_r(e) && lv_mark[lv_dst[e]] == m && (lv_take[i >> 6] >> (i & 63) & 1)) { if (edge) *edge = e; return 1; }
    }
    return 0;
}

static int lv_goal_test(int what, uint32_t x, uint32_t m, uint32_t target) {
    if (what == LV_TO_BAD) return (lv_flag[x] & LV_BAD) || lv_off[x] == lv_off[x + 1];
    if (what == LV_TO_NODE) return x == target;
    if (lv_has_pending_step(x, m, NULL)) return 1;
    uint64_t en[CC_WINST];
    lv_enabled(x, en);
    for (int w = 0; w < CC_WINST; w++) if (lv_visit[w] & ~en[w]) return 1;
    return 0;
}

/* A shortest path in R (inside the states marked m, unless m is 0) from start to a state passing the test;
   with first_step, at least one step. Its edges are appended to the lasso; the state it ends in returned. */
static uint32_t lv_bfs(uint32_t start, uint32_t m, int what, uint32_t target, int first_step) {
    if (!first_step && lv_goal_test(what, start, m, target)) return start;
    uint32_t gen = ++lv_gen, head = 0, tail = 0;
    if (!first_step) lv_tidx[start] = gen;
    lv_stk[tail++] = start;
    while (head < tail) {
        uint32_t u = lv_stk[head++];
        for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++) {
            uint32_t v = lv_dst[e];
            if (!lv_in_r(e) || (m && lv_mark[v] != m) || lv_tidx[v] == gen) continue;
            lv_tidx[v] = gen;
            lv_prev[v] = u;
            lv_cedge[v] = e;
            if (lv_goal_test(what, v, m, target)) {
                size_t at = lz_n, len = 0;
                for (uint32_t x = v;; x = lv_prev[x]) { len++; if (lv_prev[x] == start) break; }
                for (size_t i = 0; i < len; i++) lz_push(0, 0, 0);
                uint32_t x = v;
                for (size_t i = len; i-- > 0;) {
                    uint64_t ee = lv_cedge[x];
                    lz_u[at + i] = lv_prev[x]; lz_s[at + i] = lv_step[ee]; lz_v[at + i] = x;
                    x = lv_prev[x];
                }
                return v;
            }
            lv_stk[tail++] = v;
        }
    }
    fprintf(stderr, "internal: no path inside a strongly connected component\n");
    exit(6);
}

static void lv_walked(size_t from, uint32_t m) {  /* the lasso's edges from `from` on: what they took and visited */
    for (size_t i = from; i < lz_n; i++) {
        int x = cc_step_inst[lz_s[i]];
        lv_take[x >> 6] &= ~(UINT64_C(1) << (x & 63));
        uint64_t en[CC_WINST];
        lv_enabled(lz_v[i], en);
        for (int w = 0; w < CC_WINST; w++) lv_visit[w] &= en[w];
    }
    (void)m;
}

/* A cycle from `start` inside its fair component (mark m) keeping fairness (liveness.py's _fair_loop). */
static void lv_fair_loop(uint32_t start, int fair) {
    uint32_t m = lv_mark[start];
    uint64_t en[CC_WINST], enab[CC_WINST];
    memset(lv_take, 0, sizeof lv_take); memset(enab, 0, sizeof enab);
    for (uint32_t u = 0; u < nstates; u++) {
        if (lv_mark[u] != m || (lv_flag[u] & LV_GOAL)) continue;
        lv_enabled(u, en);
        for (int w = 0; w < CC_WINST; w++) enab[w] |= en[w];
        for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++)
            if (lv_in_r(e) && lv_mark[lv_dst[e]] == m) {
                int x = cc_step_inst[lv_step[e]];
                lv_take[x >> 6] |= UINT64_C(1) << (x & 63);
            }
    }
    for (int w = 0; w < CC_WINST; w++) {
        lv_take[w] &= fair ? (cc_inst_weak[w] | cc_inst_strong[w]) : 0;
        lv_visit[w] = fair ? enab[w] & cc_inst_weak[w] & ~lv_take[w] : 0;
    }
    size_t begin = lz_n;
    uint32_t at = start;
    lv_enabled(at, en);
    for (int w = 0; w < CC_WINST; w++) lv_visit[w] &= en[w];
    while (lv_any(lv_take) || lv_any(lv_visit)) {
        size_t from = lz_n;
        at = lv_bfs(at, m, LV_TO_PENDING, 0, 0);
        lv_walked(from, m);
        uint64_t e;
        if (lv_has_pending_step(at, m, &e)) {
            from = lz_n;
            lz_push(at, lv_step[e], lv_dst[e]);
            at = lv_dst[e];
            lv_walked(from, m);
        }
    }
    if (at != start || lz_n == begin) lv_bfs(at, m, LV_TO_NODE, start, lz_n == begin);
}

static void lv_check(int k) {
    int init_trig = cc_live_init_trig[k], fair = cc_live_fair[k];
    int64_t s[CC_NSLOTS], t[CC_NSLOTS];
    for (uint32_t u = 0; u < nstates; u++) {
        unpack_state(u, s);
        lv_flag[u] = (uint8_t)((cc_live_goal(k, s) ? LV_GOAL : 0) |
                               ((init_trig ? parent[u] == NONE : cc_live_trig(k, s)) ? LV_TRIG : 0));
        if (cc_ovf) cc_fail("overflow_liveness", k, 0);
        lv_mark[u] = (lv_flag[u] & LV_GOAL) ? 0 : 1;
    }
    if (cc_live_step_goal[k]) {
        if (!lv_eg) lv_eg = lv_alloc(lv_nedges);
        for (uint32_t u = 0; u < nstates; u++) {
            unpack_state(u, s);
            for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++) {
                unpack_state(lv_dst[e], t);
                lv_eg[e] = (uint8_t)cc_live_goal_step(k, s, t);
            }
        }
        if (cc_ovf) cc_fail("overflow_liveness", k, 1);
    } else if (lv_eg) {
        memset(lv_eg, 0, lv_nedges);
    }
    /* the components of R, sinks first */
    uint32_t nr = 0;
    for (uint32_t u = 0; u < nstates; u++) if (!(lv_flag[u] & LV_GOAL)) lv_scratch[nr++] = u;
    lv_ncomp = 0;
    lv_cstart[0] = 0;
    lv_gen = 1;
    lv_tarjan(lv_scratch, nr, 1, lv_emit_top);
    /* each judged; a decomposed one's parts go on the work stack */
    lv_nwork = 0; lv_worktop = 0;
    for (uint32_t c = 0; c < lv_ncomp; c++)
        lv_emit_work(lv_order + lv_cstart[c], lv_cstart[c + 1] - lv_cstart[c]);
    while (lv_nwork) {
        lv_nwork--;
        uint32_t k2 = lv_wlen[lv_nwork];
        memcpy(lv_scratch, lv_work + lv_wseg[lv_nwork], sizeof(uint32_t) * k2);
        lv_worktop = lv_wseg[lv_nwork];
        lv_judge(k2, fair);
    }
    /* which components reach a bad state in R: successors' components were emitted first */
    for (uint32_t c = 0; c < lv_ncomp; c++) {
        int d = 0;
        for (uint32_t i = lv_cstart[c]; i < lv_cstart[c + 1] && !d; i++) {
            uint32_t u = lv_order[i];
            if ((lv_flag[u] & LV_BAD) || lv_off[u] == lv_off[u + 1]) { d = 1; break; }
            for (uint64_t e = lv_off[u]; e < lv_off[u + 1]; e++)
                if (lv_in_r(e) && lv_topc[lv_dst[e]] != c && lv_doomed[lv_topc[lv_dst[e]]]) { d = 1; break; }
        }
        lv_doomed[c] = (uint8_t)d;
    }
    memset(lv_tidx, 0, sizeof(uint32_t) * ((size_t)nstates + 1));  /* the lasso's searches mark visits in it */
    uint32_t trig = NONE;
    for (uint32_t u = 0; u < nstates && trig == NONE; u++)
        if ((lv_flag[u] & LV_TRIG) && !(lv_flag[u] & LV_GOAL) && lv_doomed[lv_topc[u]]) trig = u;
    if (trig == NONE) { printf("live %d holds\n", k); return; }
    /* the lasso: the BFS-tree path to the trigger, on to a bad state, and a fair cycle there */
    lz_n = 0;
    uint32_t len = 0;
    for (uint32_t x = trig; parent[x] != NONE; x = parent[x]) len++;
    for (uint32_t i = 0; i < len; i++) lz_push(0, 0, 0);
    uint32_t x = trig;
    for (uint32_t i = len; i-- > 0;) { lz_u[i] = parent[x]; lz_s[i] = label[x]; lz_v[i] = x; x = parent[x]; }
    uint32_t end = lv_bfs(trig, 0, LV_TO_BAD, 0, 0);
    size_t loop_start = lz_n;
    int stops = lv_off[end] == lv_off[end + 1];
    if (!stops) lv_fair_loop(end, fair);
    printf("live %d violated %u %u %zu %d %zu\n", k, trig, len, loop_start, stops, lz_n);
    for (size_t i = 0; i < lz_n; i++) printf("ledge %u %u %u\n", lz_u[i], (unsigned)lz_s[i], lz_v[i]);
    /* the states on it: the trace's first, then each step's end (print_path's marks keep each once) */
    uint32_t first = lz_n ? lz_u[0] : trig;  /* (a trigger that stops at once: an initial state) */
    if (!marked[first]) { marked[first] = 1; print_state(first); }
    for (size_t i = 0; i < lz_n; i++) if (!marked[lz_v[i]]) { marked[lz_v[i]] = 1; print_state(lz_v[i]); }
}

static int live_main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: search MAX_STATES TIMEOUT MAX_MEMORY < initial states\n"); return 2; }
    uint64_t limit = strtoull(argv[1], NULL, 10);
    double timeout = atof(argv[2]);
    max_memory = strtoull(argv[3], NULL, 10);
    if (limit == 0 || limit > (uint64_t)NONE - 2) limit = (uint64_t)NONE - 2;
    int ninit = 0;
    if (scanf("%d", &ninit) != 1 || ninit < 1) { fprintf(stderr, "no initial states on stdin\n"); return 2; }
    int64_t *inits = malloc(sizeof(int64_t) * CC_NSLOTS * (size_t)ninit);
    for (int k = 0; k < ninit * CC_NSLOTS; k++) {
        long long x;
        if (scanf("%lld", &x) != 1) { fprintf(stderr, "short initial state\n"); return 2; }
        inits[k] = x;
    }
    long rss0 = rss_bytes();
    double t0 = now();
    initial_layout(inits, ninit);
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        uint64_t room = (uint64_t)as.rlim_cur / 4;
        if (max_memory > room) max_memory = room;
    }
    /* address space reserved, touched only as used: the arena, parents, labels, edge offsets and edges */
    for (;;) {
        arena_cap = (size_t)max_memory;
        node_cap = (size_t)(max_memory / 16) + 16;
        if (node_cap > (size_t)NONE) node_cap = NONE;
        lv_ecap = max_memory / 6 + 16;
        arena = reserve(arena_cap);
        parent = arena ? reserve(node_cap * sizeof(uint32_t)) : NULL;
        label = parent ? reserve(node_cap * sizeof(uint16_t)) : NULL;
        lv_off = label ? reserve((node_cap + 1) * sizeof(uint64_t)) : NULL;
        lv_dst = lv_off ? reserve(lv_ecap * sizeof(uint32_t)) : NULL;
        lv_step = lv_dst ? reserve(lv_ecap * sizeof(uint16_t)) : NULL;
        if (lv_step) break;
        if (arena) munmap(arena, arena_cap);
        if (parent) munmap(parent, node_cap * sizeof(uint32_t));
        if (label) munmap(label, node_cap * sizeof(uint16_t));
        if (lv_off) munmap(lv_off, (node_cap + 1) * sizeof(uint64_t));
        if (lv_dst) munmap(lv_dst, lv_ecap * sizeof(uint32_t));
        if (max_memory < (16u << 20)) { printf("result stopped=max_memory states=0\n"); return 5; }
        max_memory /= 2;
    }
    tab_size = 1024;
    tab = calloc(tab_size, sizeof(uint64_t));
    for (int k = 0; k < ninit; k++) {
        int64_t v[CC_NSLOTS];
        memcpy(v, inits + (size_t)k * CC_NSLOTS, sizeof v);
        if (store(v, NONE, k, (uint64_t)NONE - 2) < 0) break;
    }
    if (strcmp(stopped, "none") == 0) lv_graph(limit, timeout, t0);
    double graph_secs = now() - t0;
    long rss_graph = peak_rss_bytes();
    int complete = strcmp(stopped, "none") == 0;
    marked = calloc(nstates + 1, 1);
    if (complete && CC_NLIVE > 0) {
        size_t n = (size_t)nstates + 1;
        lv_flag = lv_alloc(n); lv_onstk = lv_alloc(n); lv_doomed = lv_alloc(n);
        lv_mark = lv_alloc(n * 4); lv_tidx = lv_alloc(n * 4); lv_tlow = lv_alloc(n * 4); lv_stk = lv_alloc(n * 4);
        lv_cnode = lv_alloc(n * 4); lv_topc = lv_alloc(n * 4); lv_order = lv_alloc(n * 4);
        lv_cstart = lv_alloc((n + 1) * 4); lv_work = lv_alloc(n * 4); lv_wseg = lv_alloc(n * 4);
        lv_wlen = lv_alloc(n * 4); lv_scratch = lv_alloc(n * 4); lv_prev = lv_alloc(n * 4);
        lv_cedge = lv_alloc(n * 8);
    }
    printf("result states=%u transitions=%llu depth=0 stopped=%s deadlock=-1 expanded=%u stride=%zu bits=%d "
           "rss_before=%ld rss_graph=%ld graph_seconds=%.6f threads=1 fingerprint=0 edges=%llu live=%d\n",
           nstates, (unsigned long long)transitions, stopped, expanded, L_stride, L_bits, rss0, rss_graph,
           graph_secs, (unsigned long long)lv_nedges, CC_NLIVE);
    fflush(stdout);
    if (complete)
        for (int k = 0; k < CC_NLIVE; k++) lv_check(k);
    double secs = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    printf("result rss_peak=%ld seconds=%.6f cpu=%.6f\n", peak_rss_bytes(), secs, cpu);
    printf("end\n");
    return 0;
}
