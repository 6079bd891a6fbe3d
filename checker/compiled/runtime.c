// SPDX-License-Identifier: GPL-2.0-only
/* countercheck compiled explorer: the search runtime.
 *
 * checker/compiled/codegen.py puts its #defines (CC_NSLOTS, CC_NSTEPS,
 * CC_NPROPS, CC_NEVENTS, CC_EV_UNBALANCED) before this text and its
 * functions (cc_prop_kind[], cc_updated[], cc_dom_lo/hi/has[], cc_expand(),
 * cc_prop(), cc_terminal(), cc_unbalanced(), cc_canonical()) at the
 * GENERATED mark, so the program is one translation unit (the quick build
 * links the text after the RUNTIME mark, compiled once: see CC_SPLIT below).
 *
 * The search is checker/explore/search.py's loop, state for state:
 * breadth first; successors in the generated order (action declaration
 * order, CPU ascending, choices as declared); properties checked when a
 * state is first stored; the first parent kept. What is kept per state
 * follows SPIN's pan.c where it can: the state packed to the bits its slots
 * need (a slot's range grows when a value does not fit: every stored state
 * is repacked, which happens a few times, early); stored once, in BFS
 * order, in an arena (so the frontier is an index range, no queue); an
 * open-addressing hash table of 32-bit indices; a parent index and a step
 * number per state for traces.
 *
 * Output, on stdout, one record per line (read by checker/compiled/run.py):
 *   result KEY=VALUE ...       statistics and why the search stopped
 *   found PROP INDEX           the first state deciding a property
 *   event EVENT INDEX STEP     the first transition (STEP -1: terminal state) raising a context event
 *   node INDEX PARENT STEP     the stored path back from each state above
 *   state INDEX V0 V1 ...      the unpacked slot vector of a state
 *   error KIND STEP DETAIL     the search cannot decide the point: it runs on the interpreter
 *   checkpoint LEVEL PATH      a whole level saved (search_checkpoint.c), as it happens
 *
 * The optional arguments after the six above: THREADS (search_threads.c), FINGERPRINT
 * (search_fingerprint.c), CHECKPOINT_DIR and RESUME_LEVEL (search_checkpoint.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NONE UINT32_MAX

/* One translation unit, or two: the quick build (checker/compiled/build.py) compiles the runtime after the
 * RUNTIME mark once, as an object (-DCC_SPLIT_RUNTIME, the sizes read from the program at run time), and
 * links it with each program's generated part (-DCC_SPLIT_GEN): what they share is defined there, declared
 * here. */
#if defined(CC_SPLIT_GEN) || defined(CC_SPLIT_RUNTIME)
#define CC_SPLIT 1
#endif
#if defined(CC_SPLIT_GEN)
#define CC_LINK extern
#elif defined(CC_SPLIT_RUNTIME)
#define CC_LINK
#else
#define CC_LINK static
#endif

/* ---- checked arithmetic: Python's ints do not wrap, so neither may ours ---- */
/* thread-local: each search thread (search_threads.c) has its own */
CC_LINK __thread int cc_ovf;

static inline int64_t cc_add(int64_t a, int64_t b) { int64_t r; if (__builtin_add_overflow(a, b, &r)) cc_ovf = 1; return r; }
static inline int64_t cc_sub(int64_t a, int64_t b) { int64_t r; if (__builtin_sub_overflow(a, b, &r)) cc_ovf = 1; return r; }
static inline int64_t cc_mul(int64_t a, int64_t b) { int64_t r; if (__builtin_mul_overflow(a, b, &r)) cc_ovf = 1; return r; }
static inline int64_t cc_neg(int64_t a) { if (a == INT64_MIN) { cc_ovf = 1; return a; } return -a; }
/* Bit-vectors of width n <= 64 (C's typed words, checker.cint) as uint64_t holding the value mod 2^n,
 * with Z3's meaning: a shift by n or more gives 0 (bvashr: the sign), bv_to_int is unsigned. */
#define CC_MASK(n) ((n) >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << (n)) - 1))
static inline int64_t cc_sx(uint64_t a, int n) { return n >= 64 ? (int64_t)a : (int64_t)(a << (64 - n)) >> (64 - n); }
static inline uint64_t cc_shl(uint64_t a, uint64_t b, int n) { return b >= (uint64_t)n ? 0 : (a << b) & CC_MASK(n); }
static inline uint64_t cc_lshr(uint64_t a, uint64_t b, int n) { return b >= (uint64_t)n ? 0 : a >> b; }
static inline uint64_t cc_ashr(uint64_t a, uint64_t b, int n) {
    int64_t s = cc_sx(a, n);
    return (uint64_t)(b >= (uint64_t)n ? (s < 0 ? -1 : 0) : (s >> b)) & CC_MASK(n);
}
static inline int64_t cc_u2i(uint64_t a) { if (a > (uint64_t)INT64_MAX) { cc_ovf = 1; return 0; } return (int64_t)a; }
/* Python's floor division and remainder (the remainder has the divisor's sign); d != 0 */
static inline int64_t cc_fdiv(int64_t a, int64_t d) {
    if (d == -1) return cc_neg(a);
    int64_t q = a / d;
    if ((a % d != 0) && ((a < 0) != (d < 0))) q--;
    return q;
}
static inline int64_t cc_fmod(int64_t a, int64_t d) {
    if (d == -1) return 0;
    int64_t r = a % d;
    if (r != 0 && ((r < 0) != (d < 0))) r += d;
    return r;
}
typedef __int128 cw_t;
#define CW_MAX ((cw_t)(((unsigned __int128)1 << 127) - 1))
#define CW_MIN (-CW_MAX - 1)
static inline cw_t cw_add(cw_t a, cw_t b) { cw_t r; if (__builtin_add_overflow(a, b, &r)) cc_ovf = 1; return r; }
static inline cw_t cw_sub(cw_t a, cw_t b) { cw_t r; if (__builtin_sub_overflow(a, b, &r)) cc_ovf = 1; return r; }
static inline cw_t cw_mul(cw_t a, cw_t b) { cw_t r; if (__builtin_mul_overflow(a, b, &r)) cc_ovf = 1; return r; }
static inline cw_t cw_neg(cw_t a) { if (a == CW_MIN) { cc_ovf = 1; return a; } return -a; }
static inline cw_t cw_fdiv(cw_t a, cw_t d) {
    if (d == -1) return cw_neg(a);
    cw_t q = a / d;
    if ((a % d != 0) && ((a < 0) != (d < 0))) q--;
    return q;
}
static inline cw_t cw_fmod(cw_t a, cw_t d) {
    if (d == -1) return 0;
    cw_t r = a % d;
    if (r != 0 && ((r < 0) != (d < 0))) r += d;
    return r;
}
/* A value stored in a slot: it must fit int64 */
static inline int64_t cw_narrow(cw_t x) {
    if (x < (cw_t)INT64_MIN || x > (cw_t)INT64_MAX) { cc_ovf = 1; return 0; }
    return (int64_t)x;
}

/* ---- errors that hand the point to the interpreter ---- */
#ifdef CC_SPLIT_GEN
extern pthread_mutex_t cc_fail_lock;
void cc_fail(const char *kind, int step, int detail);
#else
CC_LINK pthread_mutex_t cc_fail_lock = PTHREAD_MUTEX_INITIALIZER;  /* one thread reports; the others wait for exit */
#endif
CC_LINK __thread int cc_fail_held;
#ifndef CC_SPLIT_GEN
CC_LINK void cc_fail(const char *kind, int step, int detail) {
    if (!cc_fail_held) { pthread_mutex_lock(&cc_fail_lock); cc_fail_held = 1; }
    printf("error %s %d %d\n", kind, step, detail);
    fflush(stdout);
    exit(4);
}
#endif

/* Whether a step writes its whole successor (1), or the slots it writes alone (0: the one-thread and the
   threaded search without a canonical form, which pack from the parent's words, pack_succ(), and make a
   successor whole only where a property is checked on it, succ_whole()). Set once, before the search. */
#ifdef CC_SPLIT_GEN
extern int cc_whole;
#else
CC_LINK int cc_whole = 1;
#endif

/* ---- context events: the first transition raising each ---- */
CC_LINK __thread uint32_t cc_cur;  /* the state being expanded (its BFS number) */
#ifdef CC_SPLIT
CC_LINK uint32_t *ev_idx;  /* (the split build searches on one thread: main() allocates them) */
CC_LINK int *ev_step;
#else
static __thread uint32_t ev_idx[CC_NEVENTS + 1];
static __thread int ev_step[CC_NEVENTS + 1];
#endif
CC_LINK __thread int cc_events_off;  /* while the symmetry check expands renamed states: they are not in the search */
CC_LINK uint32_t cc_sample_first, cc_sample_every, cc_sample_max;  /* the symmetry check's sample: main()'s arguments */
/* the least state raising each event, its first step there (one thread numbers states in order; several
   threads expand a level's states in any order, so the least is kept rather than the first seen) */
static inline void cc_event(int e, int step) {
    if (cc_cur < ev_idx[e] && !cc_events_off) { ev_idx[e] = cc_cur; ev_step[e] = step; }
}

/*@GENERATED@*/

/* ---- the declared symmetry, checked as search.py checks it (Symmetry.check_sample): at the sampled
   states, the successors of a renamed state are the renamed successors, and no property nor the
   terminal predicate tells renamed states apart. A failure hands the state to the interpreter, which
   reports it with its explanation. ---- */
#if CC_SYM_MAPS > 0
static __thread int64_t sym_a[(CC_NSTEPS + 1) * CC_NSLOTS], sym_b[(CC_NSTEPS + 1) * CC_NSLOTS];
static __thread uint32_t sym_lab[CC_NSTEPS + 1];

static int vec_cmp(const void *x, const void *y) {
    const int64_t *a = x, *b = y;
    for (int i = 0; i < CC_NSLOTS; i++) if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int as_set(int64_t *v, int n) {  /* sorted, duplicates dropped; the new count */
    qsort(v, (size_t)n, sizeof(int64_t) * CC_NSLOTS, vec_cmp);
    int m = 0;
    for (int j = 0; j < n; j++)
        if (m == 0 || vec_cmp(v + (size_t)(m - 1) * CC_NSLOTS, v + (size_t)j * CC_NSLOTS) != 0) {
            if (m != j) memcpy(v + (size_t)m * CC_NSLOTS, v + (size_t)j * CC_NSLOTS, sizeof(int64_t) * CC_NSLOTS);
            m++;
        }
    return m;
}

static void sym_fail(uint32_t idx, const int64_t *s) {
    if (!cc_fail_held) { pthread_mutex_lock(&cc_fail_lock); cc_fail_held = 1; }
    printf("state %u", idx);
    for (int i = 0; i < CC_NSLOTS; i++) printf(" %lld", (long long)s[i]);
    printf("\n");
    cc_fail("symmetry", -1, (int)idx);
}

static void sym_check(uint32_t idx, const int64_t *s, const int64_t *succ, int n) {
    int64_t ps[CC_NSLOTS];
    cc_events_off = 1;
    for (int k = 0; k < CC_SYM_MAPS; k++) {
        cc_canon_rename(s, ps, cc_sym_maps[k]);
        for (int j = 0; j < n; j++)
            cc_canon_rename(succ + (size_t)j * CC_NSLOTS, sym_a + (size_t)j * CC_NSLOTS, cc_sym_maps[k]);
        int m = cc_expand(ps, sym_b, sym_lab);
        int na = as_set(sym_a, n), nb = as_set(sym_b, m);
        if (na != nb || memcmp(sym_a, sym_b, sizeof(int64_t) * CC_NSLOTS * (size_t)na) != 0) sym_fail(idx, s);
        for (int p = 0; p < CC_NPROPS; p++)
            if (!cc_prop(p, s) != !cc_prop(p, ps)) sym_fail(idx, s);
        if (!cc_terminal(s) != !cc_terminal(ps)) sym_fail(idx, s);
        if (cc_ovf) cc_fail("overflow_symmetry", -1, (int)idx);
    }
    cc_events_off = 0;
}
#endif

/* What the interpreter does at each state it takes steps from, besides the steps (search.py), for all
   three searches (this file's, search_threads.c's, search_fingerprint.c's): a spinning interrupt handler
   looked for before the steps, the declared symmetry checked at the sampled states, and a state without
   steps judged terminal (an unbalanced context then) or a deadlock. `bfs`: the state's BFS number (what is
   sampled, and the state an event is kept at: the least wins, as several threads see states in any order);
   `idx`: where it is stored (what a failed symmetry check prints); `*dl` lowered to `dl_at` at a deadlock. */
static inline void cc_bookkeeping(uint32_t bfs, uint32_t idx, const int64_t *s, const int64_t *succ, int n,
                                  uint32_t *dl, uint32_t dl_at) {
#if CC_EV_IRQ_SPINS >= 0
    if (n > 0 && bfs < ev_idx[CC_EV_IRQ_SPINS] && cc_irq_spins(s)) {
        ev_idx[CC_EV_IRQ_SPINS] = bfs; ev_step[CC_EV_IRQ_SPINS] = -2;
    }
#endif
#if CC_SYM_MAPS > 0
    if (cc_sample_every && (bfs < cc_sample_first || (bfs % cc_sample_every == 0 &&
                                                      bfs <= (uint64_t)cc_sample_every * cc_sample_max)))
        sym_check(idx, s, succ, n);
#else
    (void)idx; (void)succ;
#endif
    if (n == 0) {
        if (cc_terminal(s)) {
#if CC_EV_UNBALANCED >= 0
            if (bfs < ev_idx[CC_EV_UNBALANCED] && cc_unbalanced(s)) {
                ev_idx[CC_EV_UNBALANCED] = bfs; ev_step[CC_EV_UNBALANCED] = -1;
            }
#endif
        } else if (dl_at < *dl) {
            *dl = dl_at;
        }
        if (cc_ovf) cc_fail("overflow_terminal", -1, 0);
    }
}

#ifdef CC_SPLIT_GEN
/* What the runtime object (-DCC_SPLIT_RUNTIME) reads of this program: its sizes, tables and entry points. */
const int cc_x_nslots = CC_NSLOTS, cc_x_nsteps = CC_NSTEPS, cc_x_nprops = CC_NPROPS, cc_x_nevents = CC_NEVENTS;
#ifdef CC_NO_CANONICAL
const int cc_x_no_canonical = 1;
#else
const int cc_x_no_canonical = 0;
#endif
const int *const cc_x_prop_kind = cc_prop_kind, *const cc_x_updated = cc_updated, *const cc_x_family = cc_family,
          *const cc_x_static = cc_static, *const cc_x_dom_has = cc_dom_has, *const cc_x_step_wfirst = cc_step_wfirst,
          *const cc_x_step_wslots = cc_step_wslots;
const int64_t *const cc_x_dom_lo = cc_dom_lo, *const cc_x_dom_hi = cc_dom_hi;
const unsigned char *const cc_x_step_reads = &cc_step_reads[0][0];
int cc_x_expand(const int64_t *s, int64_t *out, uint32_t *lab) { return cc_expand(s, out, lab); }
int cc_x_prop(int k, const int64_t *s) { return cc_prop(k, s); }
void cc_x_canonical(int64_t *v) { cc_canonical(v); }
void cc_x_bookkeeping(uint32_t bfs, uint32_t idx, const int64_t *s, const int64_t *succ, int n, uint32_t *dl,
                      uint32_t dl_at) {
    cc_bookkeeping(bfs, idx, s, succ, n, dl, dl_at);
}
#endif

/*@RUNTIME@*/
#ifdef CC_SPLIT_RUNTIME
/* The program's part (cc_x_*, defined above in its own translation unit), under the names this text uses. */
extern const int cc_x_nslots, cc_x_nsteps, cc_x_nprops, cc_x_nevents, cc_x_no_canonical;
extern const int *const cc_x_prop_kind, *const cc_x_updated, *const cc_x_family, *const cc_x_static,
                 *const cc_x_dom_has, *const cc_x_step_wfirst, *const cc_x_step_wslots;
extern const int64_t *const cc_x_dom_lo, *const cc_x_dom_hi;
extern const unsigned char *const cc_x_step_reads;
int cc_x_expand(const int64_t *s, int64_t *out, uint32_t *lab);
int cc_x_prop(int k, const int64_t *s);
void cc_x_canonical(int64_t *v);
void cc_x_bookkeeping(uint32_t bfs, uint32_t idx, const int64_t *s, const int64_t *succ, int n, uint32_t *dl,
                      uint32_t dl_at);
#define CC_NSLOTS cc_x_nslots
#define CC_NSTEPS cc_x_nsteps
#define CC_NPROPS cc_x_nprops
#define CC_NEVENTS cc_x_nevents
#define cc_prop_kind cc_x_prop_kind
#define cc_updated cc_x_updated
#define cc_family cc_x_family
#define cc_static cc_x_static
#define cc_dom_has cc_x_dom_has
#define cc_dom_lo cc_x_dom_lo
#define cc_dom_hi cc_x_dom_hi
#define cc_step_wfirst cc_x_step_wfirst
#define cc_step_wslots cc_x_step_wslots
#define cc_expand cc_x_expand
#define cc_prop cc_x_prop
#define cc_canonical cc_x_canonical
#define cc_bookkeeping cc_x_bookkeeping
#define CC_READS(step, k) cc_x_step_reads[(step) * (CC_NPROPS + 1) + (k)]
#define CC_NO_CANON_NOW cc_x_no_canonical
/* an array sized by the program: allocated by main() (cc_split_alloc) */
#define CC_VEC(type, name, n) type *name
#else
#define CC_READS(step, k) cc_step_reads[step][k]
#ifdef CC_NO_CANONICAL
#define CC_NO_CANON_NOW 1
#else
#define CC_NO_CANON_NOW 0
#endif
#define CC_VEC(type, name, n) type name[n]
#endif
/* the 64-bit words of a packed state, at most (a slot takes at most 64 bits), and one spare */
#define CC_MAXWORDS ((CC_NSLOTS * 64 + 63) / 64 + 1)


/* ---- layout: per slot, its lowest value and bit width (mutable: widening) ---- */
static CC_VEC(int64_t, L_lo, CC_NSLOTS);
static CC_VEC(int, L_w, CC_NSLOTS);
static CC_VEC(int, L_off, CC_NSLOTS);
static int L_bits, L_words;
static size_t L_stride;

static void layout_active(void);

static void layout_offsets(void) {
    int off = 0;
    for (int i = 0; i < CC_NSLOTS; i++) { L_off[i] = off; off += L_w[i]; }
    L_bits = off;
    L_words = (off + 63) / 64;
    if (L_words == 0) L_words = 1;
    L_stride = (size_t)((off + 7) / 8);
    if (L_stride == 0) L_stride = 1;
    layout_active();
}

static int bits_for(uint64_t span) {  /* bits to hold 0..span */
    int b = 0;
    while (b < 64 && (span >> b) != 0) b++;
    return b;
}

/* The slots pack() visits: every slot but the static ones (no step writes them, and no renaming of CPUs
   can move a value into them: cc_static), with their layout, contiguous for the loop. */
struct slotpack { int slot, w, off; int64_t lo; };
static CC_VEC(struct slotpack, P, CC_NSLOTS);
static int P_n;

static void layout_active(void) {
    P_n = 0;
    for (int i = 0; i < CC_NSLOTS; i++)
        if (!cc_static[i] || L_w[i] > 0) { P[P_n].slot = i; P[P_n].w = L_w[i]; P[P_n].off = L_off[i]; P[P_n].lo = L_lo[i]; P_n++; }
}

/* 0 when v fits, else 1 + the first slot that does not. The packed slots are contiguous (in slot
   order; a static slot takes no bits), so the words are written as one bit stream, from registers. */
static inline int pack(const int64_t *v, uint64_t *w) {
    uint64_t acc = 0;
    int fill = 0, q = 0;
    for (int k = 0; k < P_n; k++) {
        const struct slotpack *sp = &P[k];
        int b = sp->w;
        uint64_t u = (uint64_t)v[sp->slot] - (uint64_t)sp->lo;
        if (b < 64 && (u >> b)) return sp->slot + 1;
        if (b == 0) continue;
        acc |= u << fill;
        if (fill + b >= 64) {
            w[q++] = acc;
            acc = fill ? u >> (64 - fill) : 0;
            fill = fill + b - 64;
        } else {
            fill += b;
        }
    }
    if (fill) w[q++] = acc;
    while (q < L_words) w[q++] = 0;
    return 0;
}

static inline void unpack_words(const uint64_t *w, int64_t *v) {
    for (int i = 0; i < CC_NSLOTS; i++) {
        int b = L_w[i];
        if (b == 0) { v[i] = L_lo[i]; continue; }
        int off = L_off[i], q = off >> 6, r = off & 63;
        uint64_t u = w[q] >> r;
        if (r + b > 64) u |= w[q + 1] << (64 - r);
        if (b < 64) u &= (((uint64_t)1) << b) - 1;
        v[i] = (int64_t)(u + (uint64_t)L_lo[i]);
    }
}

/* unpack_words for the slots pack() visits (P) alone: into a vector whose other slots, which hold their
   one value in every state (static, 0 bits), an unpack_words filled once. The hot loops' unpacking. */
static inline void unpack_active(const uint64_t *w, int64_t *v) {
    for (int k = 0; k < P_n; k++) {
        const struct slotpack *sp = &P[k];
        int b = sp->w, q = sp->off >> 6, r = sp->off & 63;
        if (b == 0) { v[sp->slot] = sp->lo; continue; }
        uint64_t u = w[q] >> r;
        if (r + b > 64) u |= w[q + 1] << (64 - r);
        if (b < 64) u &= (((uint64_t)1) << b) - 1;
        v[sp->slot] = (int64_t)(u + (uint64_t)sp->lo);
    }
}

/* ---- storage ---- */
static uint8_t *arena;
static uint32_t *parent;
static uint16_t *label;
static size_t arena_cap, node_cap;  /* bytes reserved; states reserved */
static uint32_t nstates;
/* The hash table: open addressing, linear probing; an entry is the state's index + 1 (0: empty) in its
   low 32 bits and the high 32 bits of its hash above them, so a probe compares states only when those
   agree (and a probe sequence stays within a cache line or two, never touching the arena in vain). */
static uint64_t *tab;
static size_t tab_size;  /* a power of two */
static uint64_t max_memory;
static CC_VEC(uint64_t, scratch_words, CC_MAXWORDS);

static void *reserve(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static inline uint64_t hash_words(const uint64_t *w) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)L_words;
    for (int i = 0; i < L_words; i++) {
        uint64_t k = w[i] * 0xbf58476d1ce4e5b9ULL;
        k ^= k >> 31;
        h = (h ^ k) * 0x94d049bb133111ebULL;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    return h;
}

static inline void load_words(uint32_t idx, uint64_t *w) {
    w[L_words - 1] = 0;
    memcpy(w, arena + (size_t)idx * L_stride, L_stride);
}

/* A state's table position comes from the high half of its hash, which its entry keeps: a larger table
   is rebuilt from the entries alone, without reading the arena. */
#define TAB_POS(h, mask) ((size_t)((h) >> 32) & (mask))

static uint64_t transitions;  /* the search's counts: here, so that running out of memory can say them */
static int depth;

static uint64_t *tab_alloc(size_t size) {
    uint64_t *t = calloc(size, sizeof(uint64_t));
    if (!t) {  /* out of memory mid-search: what was stored so far, no paths (the tables are half grown) */
        printf("result stopped=memory states=%u transitions=%llu depth=%d\n", nstates,
               (unsigned long long)transitions, depth);
        exit(5);
    }
    return t;
}

static void tab_grow(size_t size) {
    uint64_t *t = tab_alloc(size);
    for (size_t k = 0; k < tab_size; k++) {
        uint64_t e = tab[k];
        if (!e) continue;
        size_t h = TAB_POS(e, size - 1);
        while (t[h]) h = (h + 1) & (size - 1);
        t[h] = e;
    }
    free(tab);
    tab = t;
    tab_size = size;
}

/* After a widening every hash changes: rehash every stored state. */
static void tab_rebuild(size_t size) {
    uint64_t *t = tab_alloc(size);
    uint64_t w[CC_MAXWORDS];
    for (uint32_t i = 0; i < nstates; i++) {
        load_words(i, w);
        uint64_t hh = hash_words(w);
        size_t h = TAB_POS(hh, size - 1);
        while (t[h]) h = (h + 1) & (size - 1);
        t[h] = (hh & 0xffffffff00000000ULL) | (uint64_t)(i + 1);
    }
    free(tab);
    tab = t;
    tab_size = size;
}

static uint64_t bytes_used(void) {
    return (uint64_t)nstates * (L_stride + sizeof(uint32_t) + sizeof(uint16_t)) + (uint64_t)tab_size * sizeof(uint64_t);
}

/* Widen slot i so that v fits, then repack every stored state (backwards, in place: strides only grow).
   Every slot of i's variable (cc_family: the same first slot; static slots apart) takes the same wider
   range: CPUs are alike, and under symmetry the canonical form moves values between them, so a value
   one CPU's slot needed is soon needed by its siblings; one widening then serves them all. */
static int widen(int i, int64_t v) {
    __int128 nlo = v, nhi = v;
    for (int j = 0; j < CC_NSLOTS; j++) {
        if (j != i && (cc_family[j] != cc_family[i] || cc_static[j])) continue;
        __int128 lo = L_lo[j];
        __int128 hi = lo + (L_w[j] == 64 ? (((__int128)1) << 64) - 1 : ((((__int128)1) << L_w[j]) - 1));
        if (lo < nlo) nlo = lo;
        if (hi > nhi) nhi = hi;
    }
    int grew_down = v < L_lo[i];
    /* two bits of headroom: a range that grew grows on (a counter's values spread with the depth), and
       each widening repacks and rehashes every stored state */
    int nb = bits_for((uint64_t)(nhi - nlo)) + 2;
    if (cc_dom_has[i]) {  /* a declared domain bounds what the slot can hold: take it whole */
        __int128 dlo = cc_dom_lo[i], dhi = cc_dom_hi[i];
        if (dlo <= nlo && nhi <= dhi) { nlo = dlo; nhi = dhi; nb = bits_for((uint64_t)(dhi - dlo)); }
    }
    if (nb > 64) nb = 64;
    __int128 span = nb == 64 ? (((__int128)1) << 64) - 1 : ((((__int128)1) << nb) - 1);
    if (grew_down) nlo = nhi - span;  /* the slack on the side that grew */
    if (nlo < (__int128)INT64_MIN) nlo = INT64_MIN;
    int old_w[CC_NSLOTS], old_off[CC_NSLOTS];
    int64_t old_lo[CC_NSLOTS];
    memcpy(old_w, L_w, sizeof old_w); memcpy(old_off, L_off, sizeof old_off); memcpy(old_lo, L_lo, sizeof old_lo);
    size_t old_stride = L_stride;
    int old_words = L_words;
    for (int j = 0; j < CC_NSLOTS; j++)
        if (j == i || (cc_family[j] == cc_family[i] && !cc_static[j])) { L_w[j] = nb; L_lo[j] = (int64_t)nlo; }
    layout_offsets();
    if ((uint64_t)nstates * L_stride > arena_cap || (uint64_t)bytes_used() > max_memory) {
        memcpy(L_w, old_w, sizeof old_w); memcpy(L_off, old_off, sizeof old_off); memcpy(L_lo, old_lo, sizeof old_lo);
        layout_offsets();
        return 0;
    }
    int64_t vec[CC_NSLOTS];
    uint64_t w[CC_MAXWORDS];
    for (uint32_t k = nstates; k-- > 0;) {
        /* unpack with the old layout */
        memset(w, 0, sizeof w);
        memcpy(w, arena + (size_t)k * old_stride, old_stride);
        for (int j = 0; j < CC_NSLOTS; j++) {
            int bb = old_w[j];
            if (bb == 0) { vec[j] = old_lo[j]; continue; }
            int off = old_off[j], q = off >> 6, r = off & 63;
            uint64_t u = w[q] >> r;
            if (r + bb > 64) u |= w[q + 1] << (64 - r);
            if (bb < 64) u &= (((uint64_t)1) << bb) - 1;
            vec[j] = (int64_t)(u + (uint64_t)old_lo[j]);
        }
        (void)old_words;
        if (pack(vec, w)) { fprintf(stderr, "internal: repacking lost a value\n"); exit(6); }
        memcpy(arena + (size_t)k * L_stride, w, L_stride);
    }
    if (nstates) tab_rebuild(tab_size);
    return 1;
}

/* ---- the search ---- */
static uint32_t expanded;
static const char *stopped = "none";
static CC_VEC(uint32_t, found_idx, CC_NPROPS + 1);
static uint32_t deadlock = NONE;
static CC_VEC(int64_t, succ_buf, (CC_NSTEPS + 1) * CC_NSLOTS);
static CC_VEC(uint32_t, succ_lab, CC_NSTEPS + 1);
static int pending_props;

/* step < 0: an initial state, every pending property; else only those reading a slot the step writes
   (the others have the value they had in the parent, where they were pending: search.py's changed()) */
static void check_props(const int64_t *v, uint32_t idx, int step) {
    for (int k = 0; k < CC_NPROPS; k++) {
        if (found_idx[k] != NONE) continue;
        if (step >= 0 && !CC_READS(step, k)) continue;
        int val = cc_prop(k, v);
        if (cc_ovf) cc_fail("overflow_property", k, 0);
        if (cc_prop_kind[k] == 0 ? !val : val) { found_idx[k] = idx; pending_props--; }
    }
}

/* Stores a packed state with hash h if new. 1: stored; 0: seen; -1: a limit stopped the search. */
static int store_packed(const uint64_t *words, uint64_t h, uint32_t par, int lab, uint64_t limit) {
    uint64_t tag = h & 0xffffffff00000000ULL;
    size_t mask = tab_size - 1, p = TAB_POS(h, mask);
    uint64_t e;
    while ((e = tab[p]) != 0) {
        if ((e & 0xffffffff00000000ULL) == tag) {
            uint32_t j = (uint32_t)e - 1;
            if (memcmp(arena + (size_t)j * L_stride, words, L_stride) == 0) return 0;
        }
        p = (p + 1) & mask;
    }
    if ((uint64_t)nstates == limit) { stopped = "max_states"; return -1; }
    int grow = (uint64_t)(nstates + 1) * 10 > (uint64_t)tab_size * 7;  /* load at most 0.7 */
    uint64_t need = bytes_used() + L_stride + 6 + (grow ? (uint64_t)tab_size * 2 * sizeof(uint64_t) : 0);
    if (need > max_memory || (uint64_t)(nstates + 1) * L_stride > arena_cap || nstates + 1 >= node_cap) {
        stopped = "max_memory";
        return -1;
    }
    memcpy(arena + (size_t)nstates * L_stride, words, L_stride);
    parent[nstates] = par;
    label[nstates] = (uint16_t)lab;
    tab[p] = tag | (uint64_t)(nstates + 1);
    nstates++;
    if (grow) tab_grow(tab_size * 2);
    return 1;
}

/* Packs v (widening the layout until it fits). 0: the budget does not allow the wider layout. */
static int pack_widening(const int64_t *v, uint64_t *words) {
    int bad;
    while ((bad = pack(v, words)) != 0)
        if (!widen(bad - 1, v[bad - 1])) { stopped = "max_memory"; return 0; }
    return 1;
}

static int store(const int64_t *v, uint32_t par, int lab, uint64_t limit) {
    if (!pack_widening(v, scratch_words)) return -1;
    return store_packed(scratch_words, hash_words(scratch_words), par, lab, limit);
}

/* The successor t by `step` of s, whole: t itself when steps write whole successors, else s with the
   slots the step wrote taken from t, in buf. */
static inline const int64_t *succ_whole(const int64_t *s, const int64_t *t, int step, int64_t *buf) {
    if (cc_whole) return t;
    memcpy(buf, s, sizeof(int64_t) * CC_NSLOTS);
    for (int k = cc_step_wfirst[step]; k < cc_step_wfirst[step + 1]; k++) buf[cc_step_wslots[k]] = t[cc_step_wslots[k]];
    return buf;
}

/* Makes successor t canonical in place. 1 when it came out as it went in (no renaming moved anything, as
   for most successors): it is then its parent but for its step's slots, which pack_succ() packs alone. A
   copy and a compare cost a fraction of packing every slot (measured: percpu_eager variant C at 3 CPUs,
   symmetry on, 20 M states: 29.0 -> 24.9 s of exploring). */
static inline int canonical_same(int64_t *t) {
    if (CC_NO_CANON_NOW) return 1;
    int64_t pre[CC_NSLOTS];
    memcpy(pre, t, sizeof pre);
    cc_canonical(t);
    return memcmp(pre, t, sizeof pre) == 0;
}

/* A successor by `step` of the state whose packed words are pw, packed into w: as pack(), 0 when it fits,
   else 1 + the first slot that does not. A successor that is its parent but for the slots its step writes
   (cc_step_wslots: with no canonical form, or `same` from canonical_same()) has those alone packed into the
   parent's words, where pack() visits every slot (most of the search's work on a wide state). */
static inline int pack_succ(const uint64_t *pw, const int64_t *t, int step, int same, uint64_t *w) {
    if (!same) return pack(t, w);
    for (int q = 0; q < L_words; q++) w[q] = pw[q];
    for (int k = cc_step_wfirst[step]; k < cc_step_wfirst[step + 1]; k++) {
        int i = cc_step_wslots[k], b = L_w[i];
        uint64_t u = (uint64_t)t[i] - (uint64_t)L_lo[i];
        if (b < 64 && (u >> b)) return i + 1;
        if (b == 0) continue;
        uint64_t m = b == 64 ? ~UINT64_C(0) : (UINT64_C(1) << b) - 1;
        int q = L_off[i] >> 6, r = L_off[i] & 63;
        w[q] = (w[q] & ~(m << r)) | (u << r);
        if (r + b > 64) w[q + 1] = (w[q + 1] & ~(m >> (64 - r))) | (u >> (64 - r));
    }
    return 0;
}

/* The successors of one state, packed and hashed first with their table slots prefetched, so the
   cache misses of the probes overlap; then stored in order (the order decides parents and labels).
   pw: the parent's packed words, par its index (the words are reloaded after a widening). */
static CC_VEC(uint64_t, pk_buf, (CC_NSTEPS + 1) * (CC_NSLOTS + 1));
static CC_VEC(uint64_t, pk_hash, CC_NSTEPS + 1);

static int pack_batch(int n, uint32_t par, uint64_t *pw, const unsigned char *same) {
again:
    for (int j = 0; j < n; j++) {
        const int64_t *t = succ_buf + (size_t)j * CC_NSLOTS;
        uint64_t *w = pk_buf + (size_t)j * L_words;
        int bad = pack_succ(pw, t, (int)succ_lab[j], same[j], w);
        if (bad) {
            if (!widen(bad - 1, t[bad - 1])) { stopped = "max_memory"; return 0; }
            load_words(par, pw);  /* repacked by the widening */
            goto again;  /* the layout changed: the states packed so far are repacked */
        }
        pk_hash[j] = hash_words(w);
        __builtin_prefetch(&tab[TAB_POS(pk_hash[j], tab_size - 1)]);
    }
    return 1;
}

static void unpack_state(uint32_t idx, int64_t *v) {
    uint64_t w[CC_MAXWORDS];
    load_words(idx, w);
    unpack_words(w, v);
}

static void print_state(uint32_t idx) {
    int64_t v[CC_NSLOTS];
    unpack_state(idx, v);
    printf("state %u", idx);
    for (int i = 0; i < CC_NSLOTS; i++) printf(" %lld", (long long)v[i]);
    printf("\n");
}

static char *marked;
static void print_path(uint32_t idx) {
    while (idx != NONE && !marked[idx]) {
        marked[idx] = 1;
        printf("node %u %lld %d\n", idx, parent[idx] == NONE ? -1LL : (long long)parent[idx], (int)label[idx]);
        print_state(idx);
        idx = parent[idx];
    }
}

static long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) { if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0; fclose(f); }
    return res * sysconf(_SC_PAGESIZE);
}

/* the peak resident set of this program (VmHWM: getrusage's maxrss keeps the forking parent's across exec) */
static long peak_rss_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) { kb = atol(line + 6); break; }
    fclose(f);
    return kb * 1024L;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*@POR@*/
/* the level-synchronised search on several threads: search_threads.c, after this file */
static void search_threaded(int nthreads, uint64_t limit, double timeout, double t0);
/* the search keeping 64-bit hashes of the states: search_fingerprint.c */
static void search_fingerprint(const int64_t *inits, int ninit, uint64_t limit, double timeout, double t0);
static void fp_print_path(uint32_t idx);
/* checkpoints of the one-thread search: search_checkpoint.c */
static const char *cp_dir;
static void cp_save(int level, uint32_t level_start, uint32_t level_end);
static int cp_load(int last, uint32_t *level_start, uint32_t *level_end);

/* The layout: each slot's range over the initial states; a slot some step writes gets its declared domain,
   or 2 bits to start with, and grows on demand. (The one-process search and a Ray slice, search_ray.c.) */
static void initial_layout(const int64_t *inits, int ninit) {
    for (int i = 0; i < CC_NSLOTS; i++) {
        int64_t lo = inits[i], hi = inits[i];
        for (int k = 1; k < ninit; k++) {
            int64_t x = inits[(size_t)k * CC_NSLOTS + i];
            if (x < lo) lo = x;
            if (x > hi) hi = x;
        }
        L_lo[i] = lo;
        L_w[i] = bits_for((uint64_t)hi - (uint64_t)lo);
        if (cc_updated[i]) {
            if (cc_dom_has[i] && cc_dom_lo[i] <= lo && hi <= cc_dom_hi[i]) {
                L_lo[i] = cc_dom_lo[i];
                L_w[i] = bits_for((uint64_t)cc_dom_hi[i] - (uint64_t)cc_dom_lo[i]);
            } else if (L_w[i] < 2) {
                L_w[i] = 2;
                if (lo > INT64_MIN + 1) L_lo[i] = lo - 1;
            }
        }
    }
    layout_offsets();
}

#ifdef CC_SPLIT_RUNTIME
static void *cc_zalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) { printf("result stopped=max_memory states=0\n"); exit(5); }
    return p;
}
/* The arrays a one-unit program sizes at compile time (CC_VEC), for the program linked with this object. */
static void cc_split_alloc(void) {
    L_lo = cc_zalloc(CC_NSLOTS, sizeof *L_lo); L_w = cc_zalloc(CC_NSLOTS, sizeof *L_w);
    L_off = cc_zalloc(CC_NSLOTS, sizeof *L_off); P = cc_zalloc(CC_NSLOTS, sizeof *P);
    scratch_words = cc_zalloc(CC_MAXWORDS, sizeof *scratch_words);
    found_idx = cc_zalloc(CC_NPROPS + 1, sizeof *found_idx);
    succ_buf = cc_zalloc((size_t)(CC_NSTEPS + 1) * CC_NSLOTS, sizeof *succ_buf);
    succ_lab = cc_zalloc(CC_NSTEPS + 1, sizeof *succ_lab);
    pk_buf = cc_zalloc((size_t)(CC_NSTEPS + 1) * (CC_NSLOTS + 1), sizeof *pk_buf);
    pk_hash = cc_zalloc(CC_NSTEPS + 1, sizeof *pk_hash);
    ev_idx = cc_zalloc(CC_NEVENTS + 1, sizeof *ev_idx); ev_step = cc_zalloc(CC_NEVENTS + 1, sizeof *ev_step);
}
#endif

#ifdef CC_LIVE
/* the state graph and the liveness checks: search_liveness.c, after this file */
static int live_main(int argc, char **argv);
#endif

int main(int argc, char **argv) {
#ifdef CC_LIVE
    return live_main(argc, argv);
#endif
    if (argc < 7) { fprintf(stderr, "usage: search MAX_STATES TIMEOUT MAX_MEMORY SAMPLE_FIRST SAMPLE_EVERY SAMPLE_MAX [THREADS [FINGERPRINT [CHECKPOINT_DIR RESUME_LEVEL]]] < initial states\n"); return 2; }
    uint64_t limit = strtoull(argv[1], NULL, 10);  /* 0: none */
    double timeout = atof(argv[2]);                /* 0: none */
    max_memory = strtoull(argv[3], NULL, 10);
    cc_sample_first = (uint32_t)atol(argv[4]), cc_sample_every = (uint32_t)atol(argv[5]), cc_sample_max = (uint32_t)atol(argv[6]);
    if (limit == 0 || limit > (uint64_t)NONE - 2) limit = (uint64_t)NONE - 2;
    int nthreads = argc > 7 ? atoi(argv[7]) : 1;
    if (nthreads < 1 || nthreads > 256) { fprintf(stderr, "THREADS must be 1 to 256\n"); return 2; }
    int fingerprint = argc > 8 ? atoi(argv[8]) : 0;
    if (fingerprint && nthreads > 1) { fprintf(stderr, "FINGERPRINT runs on one thread\n"); return 2; }
    cp_dir = argc > 9 && strcmp(argv[9], "-") != 0 ? argv[9] : NULL;
    int resume_level = argc > 10 ? atoi(argv[10]) : -1;
    if ((cp_dir || resume_level >= 0) && (nthreads > 1 || fingerprint || !cp_dir)) {
        fprintf(stderr, "CHECKPOINT_DIR: one thread, no fingerprints\n");
        return 2;
    }
#ifdef CC_SPLIT_RUNTIME
    cc_split_alloc();
#endif
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
    /* Address space reserved up front (touched only as used): the arena the whole budget, parents and
       labels enough for budget/16 states (a stored state takes at least ~18 bytes with its table share).
       Under an address-space limit (ulimit -v) the budget shrinks to fit. */
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        uint64_t room = (uint64_t)as.rlim_cur / 2;
        if (max_memory > room) max_memory = room;
    }
    for (;;) {
        arena_cap = (size_t)max_memory;
        node_cap = (size_t)(max_memory / 16) + 16;
        if (node_cap > (size_t)NONE) node_cap = NONE;
        arena = reserve(arena_cap);
        parent = arena ? reserve(node_cap * sizeof(uint32_t)) : NULL;
        label = parent ? reserve(node_cap * sizeof(uint16_t)) : NULL;
        if (arena && parent && label) break;
        if (arena) munmap(arena, arena_cap);
        if (parent) munmap(parent, node_cap * sizeof(uint32_t));
        if (max_memory < (16u << 20)) { printf("result stopped=max_memory states=0\n"); return 5; }
        max_memory /= 2;
    }
    tab_size = 1024;
    tab = calloc(tab_size, sizeof(uint64_t));
    for (int k = 0; k <= CC_NPROPS; k++) found_idx[k] = NONE;
    for (int k = 0; k <= CC_NEVENTS; k++) ev_idx[k] = NONE;
    pending_props = CC_NPROPS;

    for (int k = 0; k < ninit && !fingerprint && resume_level < 0; k++) {
        int64_t v[CC_NSLOTS];
        memcpy(v, inits + (size_t)k * CC_NSLOTS, sizeof v);
        cc_canonical(v);
        int r = store(v, NONE, k, (uint64_t)NONE - 2);  /* as search.py: no state limit on initial states */
        if (r < 0) break;
        if (r == 1) check_props(v, nstates - 1, -1);
    }
    uint32_t level_start = 0, level_end = nstates;
    int64_t s[CC_NSLOTS];
    int cp_level = 0;
    if (resume_level >= 0) {
        if (!cp_load(resume_level, &level_start, &level_end)) cc_fail("resume", resume_level, 0);
        cp_level = resume_level + 1;
    } else if (cp_dir && strcmp(stopped, "none") == 0) {
        cp_save(cp_level++, level_start, level_end);
    }
    if (nstates) unpack_state(0, s);  /* the slots unpack_active leaves alone */
    int64_t whole[CC_NSLOTS];
#ifndef CC_POR
    if (CC_NO_CANON_NOW) cc_whole = fingerprint;  /* (the fingerprint search hashes whole successors; the reduction reads them) */
#endif
    if (fingerprint)
        search_fingerprint(inits, ninit, limit, timeout, t0);
    else if (nthreads > 1 && strcmp(stopped, "none") == 0)
        search_threaded(nthreads, limit, timeout, t0);
    else while (level_start < level_end && strcmp(stopped, "none") == 0) {
        int any_new = 0;
        for (uint32_t idx = level_start; idx < level_end; idx++) {
            cc_cur = idx;
            uint64_t pw[CC_MAXWORDS];
            load_words(idx, pw);
            unpack_active(pw, s);
            expanded++;
            int n = cc_expand(s, succ_buf, succ_lab);
            cc_bookkeeping(idx, idx, s, succ_buf, n, &deadlock, idx);
            transitions += (uint64_t)n;
            unsigned char same[CC_NSTEPS + 1];
            for (int j = 0; j < n; j++) same[j] = (unsigned char)canonical_same(succ_buf + (size_t)j * CC_NSLOTS);
            if (!pack_batch(n, idx, pw, same)) break;
#ifdef CC_POR
            { int k = cc_por_select(idx, n); transitions -= (uint64_t)(n - k); n = k; }  /* ample.py */
#endif
            for (int j = 0; j < n; j++) {
                const int64_t *t = succ_buf + (size_t)j * CC_NSLOTS;
                int r = store_packed(pk_buf + (size_t)j * L_words, pk_hash[j], idx, (int)succ_lab[j], limit);
                if (r < 0) break;
                if (r == 1) {
                    any_new = 1;
                    if (pending_props) check_props(succ_whole(s, t, (int)succ_lab[j], whole), nstates - 1, (int)succ_lab[j]);
                }
            }
            if (strcmp(stopped, "none") != 0) break;
            if (timeout > 0 && (expanded & 255) == 0 && now() - t0 > timeout) { stopped = "timeout"; break; }
        }
        if (any_new) depth++;
        level_start = level_end;
        level_end = nstates;
        if (cp_dir && strcmp(stopped, "none") == 0 && level_start < level_end) cp_save(cp_level++, level_start, level_end);
    }
    double secs = now() - t0;
    struct rusage ru;  /* CPU time of this process (a fork starts at zero) */
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    printf("result states=%u transitions=%llu depth=%d stopped=%s deadlock=%lld expanded=%u stride=%zu bits=%d "
           "rss_before=%ld rss_peak=%ld seconds=%.6f cpu=%.6f threads=%d fingerprint=%d\n",
           nstates, (unsigned long long)transitions, depth, stopped, deadlock == NONE ? -1LL : (long long)deadlock,
           expanded, L_stride, L_bits, rss0, peak_rss_bytes(), secs, cpu, nthreads, fingerprint);
#ifdef CC_POR
    printf("result por_full=%llu por_reduced=%llu por_assumed_failed=%d\n", (unsigned long long)por_full,
           (unsigned long long)por_reduced, por_assumed_failed());
#endif
    marked = calloc(nstates + 1, 1);
    void (*path)(uint32_t) = fingerprint ? fp_print_path : print_path;
    for (int k = 0; k < CC_NPROPS; k++)
        if (found_idx[k] != NONE) { printf("found %d %u\n", k, found_idx[k]); path(found_idx[k]); }
    if (deadlock != NONE) path(deadlock);
    for (int e = 0; e < CC_NEVENTS; e++)
        if (ev_idx[e] != NONE) { printf("event %d %u %d\n", e, ev_idx[e], ev_step[e]); path(ev_idx[e]); }
    printf("end\n");
    return 0;
}
