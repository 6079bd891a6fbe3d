// SPDX-License-Identifier: GPL-2.0-only
/* countercheck compiled explorer: one hash slice of a distributed search (--cluster ray).
 *
 * Appended to runtime.c and built as a shared library (checker/compiled/slice.py), loaded by each Ray
 * actor with ctypes. The actor owns the states whose cr_owner() hash falls to it, in runtime.c's arena
 * and table; a coordinator (checker/compiled/ray_search.py) runs the levels in lock step:
 *
 *   cr_expand   this level's states, in rank order: successors canonicalised, packed, and appended to the
 *               buffer of their owner, each with its key (the parent's rank in its level << 16 | step)
 *               and its parent's index here; a chunk of records starts with the layout it was packed in
 *   cr_receive  a buffer from some actor: each successor unpacked with the chunk's layout, packed with
 *               this slice's own, and kept if new, with the least key that reached it
 *   cr_admit    the coordinator's global ranks for the new states (the order of their keys over all
 *               slices: the order in which the one-process search numbers them); properties are checked
 *               in rank order, and the ranked states are the next level
 *
 * So the parents, the first state deciding each property, the deadlock and the first context events are
 * the one-process search's (search_threads.c argues the same for threads). A run-time error (an overflow,
 * a failed check, a broken symmetry) does not exit: runtime.c's printf and exit are redirected here
 * (cr_out text, then a longjmp back to the entry point), and the entry point returns 4 (5: out of memory).
 */

static jmp_buf cr_jump;
static int cr_in_call;
static char *cr_text;
static size_t cr_text_len, cr_text_cap;

static int cr_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return n;
    if (cr_text_len + (size_t)n + 1 > cr_text_cap) {
        size_t cap = (cr_text_cap + (size_t)n + 1) * 2;
        char *t = realloc(cr_text, cap);
        if (!t) return -1;
        cr_text = t;
        cr_text_cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(cr_text + cr_text_len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cr_text_len += (size_t)n;
    return n;
}

static void cr_exit(int code) {
    if (cr_in_call) longjmp(cr_jump, code == 5 ? 5 : 4);
    abort();  /* outside an entry point: nothing of ours calls exit there */
}

#define CR_ENTER do { int _j = setjmp(cr_jump); if (_j) { cr_in_call = 0; return _j; } cr_in_call = 1; } while (0)
#define CR_LEAVE(v) do { cr_in_call = 0; return (v); } while (0)

/* what an error left, for the Python side (checker/compiled/run.py's parse reads it) */
const char *cr_text_get(size_t *len) { *len = cr_text_len; return cr_text ? cr_text : ""; }

static int cr_nworkers, cr_wid;
static uint8_t *cr_owner_of;     /* per stored state: the actor holding its parent (parent[] holds its index there) */
static uint32_t *cr_lvl;         /* this level's states (arena indices), by rank */
static uint32_t *cr_lvl_rank;    /* their global ranks */
static uint16_t *cr_lvl_n;       /* their successor counts (the transitions up to a cut) */
static uint32_t cr_nlvl;
static uint32_t cr_level_end;    /* states stored before this level's candidates */
static uint64_t *cr_cand_key;    /* per candidate (arena index - cr_level_end): its least key */
static uint64_t cr_cand_cap;
static uint32_t cr_found_rank[CC_NPROPS + 1];
static uint32_t cr_ev_lid[CC_NEVENTS + 1];
static uint32_t cr_deadlock_rank, cr_deadlock_lid;
static uint64_t cr_transitions;
/* the outgoing buffers, one per actor */
static uint8_t **cr_buf;
static size_t *cr_len, *cr_cap;
/* the successors sent in this level (see dd_seen) */
static uint64_t *dd_tab;
static size_t dd_size, dd_n;
static uint8_t *dd_arena;
static size_t dd_cap;
static int64_t dd_lo[CC_NSLOTS];
static int dd_w[CC_NSLOTS];
static uint64_t cr_deduped;

/* A state's owner: a hash of its slot values, so every slice agrees whatever its packed layout. */
static inline uint32_t cr_owner_hash(const int64_t *v) {
    uint64_t h = 0x243f6a8885a308d3ULL;
    for (int i = 0; i < CC_NSLOTS; i++) {
        uint64_t k = (uint64_t)v[i] * 0xbf58476d1ce4e5b9ULL;
        k ^= k >> 31;
        h = (h ^ k) * 0x94d049bb133111ebULL;
        h ^= h >> 29;
    }
    return (uint32_t)(h >> 32);
}

int cr_nslots(void) { return CC_NSLOTS; }
int cr_nprops(void) { return CC_NPROPS; }
int cr_nevents(void) { return CC_NEVENTS; }

/* The canonical form of v (in place) and its owner among n actors: the coordinator seeds with these. */
int cr_canonical_owner(int64_t *v, int n) {
    CR_ENTER;
    cc_canonical(v);
    CR_LEAVE((int)(cr_owner_hash(v) % (uint32_t)n));
}

static void cr_put(int dest, const void *p, size_t n) {
    if (cr_len[dest] + n > cr_cap[dest]) {
        size_t cap = (cr_cap[dest] + n) * 2;
        uint8_t *b = realloc(cr_buf[dest], cap);
        if (!b) exit(5);
        cr_buf[dest] = b;
        cr_cap[dest] = cap;
    }
    memcpy(cr_buf[dest] + cr_len[dest], p, n);
    cr_len[dest] += n;
}

/* The slice: the layout from the initial states (as main() does), the arena, the table. */
int cr_init(const int64_t *inits, int ninit, uint64_t budget, int nworkers, int wid) {
    CR_ENTER;
    cr_nworkers = nworkers;
    cr_wid = wid;
    max_memory = budget;
    initial_layout(inits, ninit);
    arena_cap = (size_t)max_memory;
    node_cap = (size_t)(max_memory / 16) + 16;
    if (node_cap > (size_t)NONE) node_cap = NONE;
    arena = reserve(arena_cap);
    parent = reserve(node_cap * sizeof(uint32_t));
    label = reserve(node_cap * sizeof(uint16_t));
    cr_owner_of = reserve(node_cap);
    cr_lvl = reserve(node_cap * sizeof(uint32_t));
    cr_lvl_rank = reserve(node_cap * sizeof(uint32_t));
    cr_lvl_n = reserve(node_cap * sizeof(uint16_t));
    cr_cand_cap = node_cap;
    cr_cand_key = reserve(cr_cand_cap * sizeof(uint64_t));
    if (!arena || !parent || !label || !cr_owner_of || !cr_lvl || !cr_lvl_rank || !cr_lvl_n || !cr_cand_key)
        CR_LEAVE(5);
    tab_size = 1024;
    tab = calloc(tab_size, sizeof(uint64_t));
    cr_buf = calloc((size_t)nworkers, sizeof *cr_buf);
    cr_len = calloc((size_t)nworkers, sizeof *cr_len);
    cr_cap = calloc((size_t)nworkers, sizeof *cr_cap);
    for (int k = 0; k <= CC_NPROPS; k++) { found_idx[k] = NONE; cr_found_rank[k] = NONE; }
    for (int k = 0; k <= CC_NEVENTS; k++) { ev_idx[k] = NONE; cr_ev_lid[k] = NONE; }
    pending_props = CC_NPROPS;
    CR_LEAVE(0);
}

/* Everything the slice holds, given back (the library is then unloaded). */
void cr_free(void) {
    if (arena) munmap(arena, arena_cap);
    if (parent) munmap(parent, node_cap * sizeof(uint32_t));
    if (label) munmap(label, node_cap * sizeof(uint16_t));
    if (cr_owner_of) munmap(cr_owner_of, node_cap);
    if (cr_lvl) munmap(cr_lvl, node_cap * sizeof(uint32_t));
    if (cr_lvl_rank) munmap(cr_lvl_rank, node_cap * sizeof(uint32_t));
    if (cr_lvl_n) munmap(cr_lvl_n, node_cap * sizeof(uint16_t));
    if (cr_cand_key) munmap(cr_cand_key, cr_cand_cap * sizeof(uint64_t));
    arena = NULL; parent = NULL; label = NULL; cr_owner_of = NULL; cr_lvl = NULL; cr_lvl_rank = NULL;
    cr_lvl_n = NULL; cr_cand_key = NULL;
    free(tab); tab = NULL;
    for (int d = 0; cr_buf && d < cr_nworkers; d++) free(cr_buf[d]);
    free(cr_buf); free(cr_len); free(cr_cap); cr_buf = NULL; cr_len = NULL; cr_cap = NULL;
    free(cr_text); cr_text = NULL; cr_text_len = cr_text_cap = 0;
    free(dd_tab); dd_tab = NULL; dd_size = dd_n = 0;
    free(dd_arena); dd_arena = NULL; dd_cap = 0;
}

/* The initial states this slice owns (canonical, in rank order): rank, and the initial state's index. */
int cr_seed(const int64_t *vecs, const uint32_t *ranks, const uint32_t *inits, int n) {
    CR_ENTER;
    cr_nlvl = 0;
    for (int k = 0; k < n; k++) {
        const int64_t *v = vecs + (size_t)k * CC_NSLOTS;
        int r = store(v, NONE, (int)inits[k], (uint64_t)NONE - 2);
        if (r < 0) CR_LEAVE(6);
        if (r == 0) continue;  /* (the coordinator deduplicated them: not reached) */
        cr_owner_of[nstates - 1] = 0;
        cr_lvl[cr_nlvl] = nstates - 1;
        cr_lvl_rank[cr_nlvl++] = ranks[k];
        uint32_t before[CC_NPROPS + 1];
        memcpy(before, found_idx, sizeof before);
        check_props(v, nstates - 1, -1);
        for (int p = 0; p < CC_NPROPS; p++)
            if (before[p] == NONE && found_idx[p] != NONE) cr_found_rank[p] = ranks[k];
    }
    cr_level_end = nstates;
    CR_LEAVE(0);
}

/* A property decided elsewhere (at this level or before): not checked again here. */
void cr_decided(int k) {
    if (found_idx[k] == NONE) { found_idx[k] = NONE - 1; pending_props--; }
}

static void cr_chunk_header(int dest, uint32_t count) {
    uint32_t head[2] = {0x43524159u, count};  /* "CRAY", records in the chunk */
    cr_put(dest, head, sizeof head);
    cr_put(dest, L_lo, sizeof L_lo);
    int32_t w[CC_NSLOTS];
    for (int i = 0; i < CC_NSLOTS; i++) w[i] = L_w[i];
    cr_put(dest, w, sizeof w);
}

/* The successors this slice sent in this level (packed, in dd_lo/dd_w's layout): a successor is sent once,
   with the first key that reached it here, which is this slice's least (parents go in rank order, steps in
   order). The set is emptied when the layout widens: a duplicate sent then is only redundant. */

static void dd_reset(void) {
    if (dd_tab) memset(dd_tab, 0, dd_size * sizeof(uint64_t));
    dd_n = 0;
    memcpy(dd_lo, L_lo, sizeof dd_lo);
    memcpy(dd_w, L_w, sizeof dd_w);
}

/* 1: words (hash h) already sent in this level; else remembered, 0. */
static int dd_seen(const uint64_t *words, uint64_t h) {
    if ((dd_n + 1) * 2 > dd_size) {
        size_t size = dd_size ? dd_size * 2 : 4096;
        uint64_t *t = calloc(size, sizeof(uint64_t));
        if (!t) exit(5);
        for (size_t k = 0; k < dd_size; k++) {
            uint64_t e = dd_tab[k];
            if (!e) continue;
            size_t p = TAB_POS(e, size - 1);
            while (t[p]) p = (p + 1) & (size - 1);
            t[p] = e;
        }
        free(dd_tab);
        dd_tab = t;
        dd_size = size;
    }
    if ((dd_n + 1) * L_stride > dd_cap) {
        size_t cap = dd_cap ? dd_cap * 2 : (size_t)1 << 16;
        while (cap < (dd_n + 1) * L_stride) cap *= 2;
        uint8_t *a = realloc(dd_arena, cap);
        if (!a) exit(5);
        dd_arena = a;
        dd_cap = cap;
    }
    uint64_t tag = h & 0xffffffff00000000ULL;
    size_t mask = dd_size - 1, p = TAB_POS(h, mask);
    uint64_t e;
    while ((e = dd_tab[p]) != 0) {
        if ((e & 0xffffffff00000000ULL) == tag &&
            memcmp(dd_arena + (size_t)((uint32_t)e - 1) * L_stride, words, L_stride) == 0) return 1;
        p = (p + 1) & mask;
    }
    memcpy(dd_arena + dd_n * L_stride, words, L_stride);
    dd_tab[p] = tag | (uint64_t)(dd_n + 1);
    dd_n++;
    return 0;
}

/* Parents a chunk expands: its successors are packed in one layout (a widening falls between chunks). */
#define CR_CHUNK 512
#define CR_WORDS ((size_t)CC_MAXWORDS)  /* the most words a packed state takes */

/* Expand this level (ranks past cutoff are not: NONE for all). base: the states before this level, so
   base + rank is the one-process search's number of a state (its symmetry sample, its events). */
int cr_expand(uint64_t base, uint32_t cutoff, uint32_t sample_first, uint32_t sample_every, uint32_t sample_max) {
    CR_ENTER;
    for (int d = 0; d < cr_nworkers; d++) cr_len[d] = 0;
    dd_reset();
    cr_deadlock_rank = NONE;
    cr_deadlock_lid = NONE;
    cr_transitions = 0;
    static int64_t *succ;
    static uint32_t *slab, *sdest;
    static uint64_t *skey;
    static uint32_t *spar;
    static uint64_t *spk;  /* the chunk's successors, packed */
    static size_t scap;
    size_t need = (size_t)CR_CHUNK * (CC_NSTEPS + 1);
    if (scap < need) {
        succ = malloc(need * CC_NSLOTS * sizeof(int64_t));
        slab = malloc(need * sizeof(uint32_t));
        sdest = malloc(need * sizeof(uint32_t));
        skey = malloc(need * sizeof(uint64_t));
        spar = malloc(need * sizeof(uint32_t));
        spk = malloc(need * CR_WORDS * sizeof(uint64_t));
        if (!succ || !slab || !sdest || !skey || !spar || !spk) exit(5);
        scap = need;
    }
    uint32_t counts[256];
    uint64_t words[CC_MAXWORDS];
    int64_t s[CC_NSLOTS];
    for (uint32_t c0 = 0; c0 < cr_nlvl; c0 += CR_CHUNK) {
        uint32_t c1 = c0 + CR_CHUNK < cr_nlvl ? c0 + CR_CHUNK : cr_nlvl;
        size_t m = 0;
        for (uint32_t k = c0; k < c1; k++) {
            uint32_t rank = cr_lvl_rank[k], idx = cr_lvl[k];
            if (cutoff != NONE && rank > cutoff) { cr_lvl_n[k] = 0; continue; }
            cc_cur = (uint32_t)(base + rank);
            unpack_state(idx, s);
            int64_t *out = succ + m * CC_NSLOTS;
            int n = cc_expand(s, out, slab + m);
#if CC_EV_IRQ_SPINS >= 0
            if (n > 0 && ev_idx[CC_EV_IRQ_SPINS] == NONE && cc_irq_spins(s)) {
                ev_idx[CC_EV_IRQ_SPINS] = cc_cur; ev_step[CC_EV_IRQ_SPINS] = -2;
            }
#endif
#if CC_SYM_MAPS > 0
            if (sample_every && (cc_cur < sample_first || (cc_cur % sample_every == 0 && cc_cur <= (uint64_t)sample_every * sample_max)))
                sym_check(cc_cur, s, out, n);
#else
            (void)sample_first; (void)sample_every; (void)sample_max;
#endif
            cr_lvl_n[k] = (uint16_t)n;
            cr_transitions += (uint64_t)n;
            if (n == 0) {
                if (cc_terminal(s)) {
#if CC_EV_UNBALANCED >= 0
                    if (ev_idx[CC_EV_UNBALANCED] == NONE && cc_unbalanced(s)) {
                        ev_idx[CC_EV_UNBALANCED] = cc_cur; ev_step[CC_EV_UNBALANCED] = -1;
                    }
#endif
                } else if (cr_deadlock_rank == NONE || rank < cr_deadlock_rank) {
                    cr_deadlock_rank = rank; cr_deadlock_lid = idx;
                }
                if (cc_ovf) cc_fail("overflow_terminal", -1, 0);
            }
            for (int e = 0; e < CC_NEVENTS; e++)
                if (ev_idx[e] == cc_cur && cr_ev_lid[e] == NONE) cr_ev_lid[e] = idx;
            for (int j = 0; j < n; j++) {
                int64_t *t = out + (size_t)j * CC_NSLOTS;
                cc_canonical(t);
                sdest[m + j] = cr_owner_hash(t) % (uint32_t)cr_nworkers;
                skey[m + j] = ((uint64_t)rank << 16) | (uint64_t)j;
                spar[m + j] = idx;
            }
            m += (size_t)n;
        }
        /* every successor of the chunk packed in one layout (widened, and the chunk packed again, if one
           does not fit) */
    again:
        for (size_t j = 0; j < m; j++) {
            int bad = pack(succ + j * CC_NSLOTS, spk + j * CR_WORDS);
            if (bad) {
                if (!widen(bad - 1, succ[j * CC_NSLOTS + (size_t)(bad - 1)])) CR_LEAVE(6);
                goto again;
            }
        }
        if (memcmp(dd_lo, L_lo, sizeof dd_lo) != 0 || memcmp(dd_w, L_w, sizeof dd_w) != 0) dd_reset();
        memset(counts, 0, sizeof counts);
        for (size_t j = 0; j < m; j++) {
            const uint64_t *w = spk + j * CR_WORDS;
            if (dd_seen(w, hash_words(w))) { sdest[j] = NONE; cr_deduped++; continue; }
            counts[sdest[j]]++;
        }
        for (int d = 0; d < cr_nworkers; d++) if (counts[d]) cr_chunk_header(d, counts[d]);
        for (size_t j = 0; j < m; j++) {
            if (sdest[j] == NONE) continue;
            memcpy(words, spk + j * CR_WORDS, L_stride);
            uint64_t key = skey[j] | ((uint64_t)slab[j] << 48);  /* the step, for the parent link */
            cr_put((int)sdest[j], &key, sizeof key);
            cr_put((int)sdest[j], &spar[j], sizeof spar[j]);
            cr_put((int)sdest[j], words, L_stride);
        }
    }
    CR_LEAVE(0);
}

/* The buffer for actor d (after cr_expand). */
const uint8_t *cr_buffer(int d, size_t *len) { *len = cr_len[d]; return cr_buf[d]; }

static int same_widths(const int32_t *w) {
    for (int i = 0; i < CC_NSLOTS; i++) if (w[i] != L_w[i]) return 0;
    return 1;
}

/* Successors from actor `from`: each kept if new, with the least key. */
int cr_receive(const uint8_t *b, size_t len, int from) {
    CR_ENTER;
    size_t at = 0;
    int64_t lo[CC_NSLOTS], v[CC_NSLOTS];
    int32_t w[CC_NSLOTS];
    int off[CC_NSLOTS];
    uint64_t in[CC_MAXWORDS], words[CC_MAXWORDS];
    while (at < len) {
        uint32_t head[2];
        if (len - at < sizeof head + sizeof lo + sizeof w) CR_LEAVE(7);
        memcpy(head, b + at, sizeof head); at += sizeof head;
        memcpy(lo, b + at, sizeof lo); at += sizeof lo;
        memcpy(w, b + at, sizeof w); at += sizeof w;
        if (head[0] != 0x43524159u) CR_LEAVE(7);
        int bits = 0;
        for (int i = 0; i < CC_NSLOTS; i++) {
            if (w[i] < 0 || w[i] > 64) CR_LEAVE(7);
            off[i] = bits; bits += w[i];
        }
        size_t stride = (size_t)((bits + 7) / 8);
        if (stride == 0) stride = 1;
        if (stride > sizeof in) CR_LEAVE(7);
        int same = memcmp(lo, L_lo, sizeof lo) == 0 && stride == L_stride && same_widths(w);
        for (uint32_t r = 0; r < head[1]; r++) {
            uint64_t key;
            uint32_t par;
            if (len - at < sizeof key + sizeof par + stride) CR_LEAVE(7);
            memcpy(&key, b + at, sizeof key); at += sizeof key;
            memcpy(&par, b + at, sizeof par); at += sizeof par;
            int step = (int)(key >> 48);
            key &= 0xffffffffffffULL;
            if (same) {  /* packed in this slice's own layout: stored as it came */
                memset(words, 0, sizeof words);
                memcpy(words, b + at, stride); at += stride;
                goto packed;
            }
            memset(in, 0, sizeof in);
            memcpy(in, b + at, stride); at += stride;
            for (int i = 0; i < CC_NSLOTS; i++) {
                int bb = w[i];
                if (bb == 0) { v[i] = lo[i]; continue; }
                int q = off[i] >> 6, rr = off[i] & 63;
                uint64_t u = in[q] >> rr;
                if (rr + bb > 64) u |= in[q + 1] << (64 - rr);
                if (bb < 64) u &= (((uint64_t)1) << bb) - 1;
                v[i] = (int64_t)(u + (uint64_t)lo[i]);
            }
            if (!pack_widening(v, words)) CR_LEAVE(6);
            /* (a widening here changes this slice's layout: the chunk's next records are repacked) */
            same = memcmp(lo, L_lo, sizeof lo) == 0 && stride == L_stride && same_widths(w);
        packed:;
            uint64_t h = hash_words(words);
            uint64_t tag = h & 0xffffffff00000000ULL;
            size_t mask = tab_size - 1, p = TAB_POS(h, mask);
            uint64_t e;
            int seen = 0;
            while ((e = tab[p]) != 0) {
                if ((e & 0xffffffff00000000ULL) == tag) {
                    uint32_t j = (uint32_t)e - 1;
                    if (memcmp(arena + (size_t)j * L_stride, words, L_stride) == 0) {
                        seen = 1;
                        if (j >= cr_level_end && key < cr_cand_key[j - cr_level_end]) {
                            cr_cand_key[j - cr_level_end] = key;
                            parent[j] = par; label[j] = (uint16_t)step; cr_owner_of[j] = (uint8_t)from;
                        }
                        break;
                    }
                }
                p = (p + 1) & mask;
            }
            if (seen) continue;
            int st = store_packed(words, h, par, step, (uint64_t)NONE - 2);
            if (st < 0) CR_LEAVE(6);
            cr_owner_of[nstates - 1] = (uint8_t)from;
            cr_cand_key[nstates - 1 - cr_level_end] = key;
        }
    }
    CR_LEAVE(0);
}

/* This level's new states: their count, and their keys (in arena order) into keys. */
uint32_t cr_candidates(uint64_t *keys) {
    uint32_t n = nstates - cr_level_end;
    if (keys) memcpy(keys, cr_cand_key, sizeof(uint64_t) * n);
    return n;
}

static int cr_cmp_rank(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The new states' global ranks (arena order; NONE: past a state limit, dropped from the level): the next
   level, properties checked in rank order. */
int cr_admit(const uint32_t *ranks) {
    CR_ENTER;
    uint32_t n = nstates - cr_level_end;
    uint64_t *pairs = malloc(sizeof(uint64_t) * (n ? n : 1));
    if (!pairs) exit(5);
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++)
        if (ranks[k] != NONE) pairs[m++] = ((uint64_t)ranks[k] << 32) | k;
    qsort(pairs, m, sizeof(uint64_t), cr_cmp_rank);
    int64_t v[CC_NSLOTS];
    for (int p = 0; p < CC_NPROPS; p++) cr_found_rank[p] = NONE;
    for (uint32_t k = 0; k < m; k++) {
        uint32_t idx = cr_level_end + (uint32_t)pairs[k], rank = (uint32_t)(pairs[k] >> 32);
        cr_lvl[k] = idx;
        cr_lvl_rank[k] = rank;
        unpack_state(idx, v);
        uint32_t before[CC_NPROPS + 1];
        memcpy(before, found_idx, sizeof before);
        check_props(v, idx, (int)label[idx]);
        for (int p = 0; p < CC_NPROPS; p++)
            if (before[p] == NONE && found_idx[p] != NONE) cr_found_rank[p] = rank;
    }
    free(pairs);
    cr_nlvl = m;
    cr_level_end = nstates;
    CR_LEAVE(0);
}

/* What this level decided here: per property, the rank and index of its least state (NONE: none). */
void cr_found(uint32_t *rank, uint32_t *lid) {
    for (int p = 0; p < CC_NPROPS; p++) {
        rank[p] = cr_found_rank[p];
        lid[p] = cr_found_rank[p] == NONE ? NONE : found_idx[p];
    }
}

/* After cr_expand: the transitions of the parents up to rank cutoff (NONE: all), and the least deadlock. */
uint64_t cr_transitions_upto(uint32_t cutoff) {
    if (cutoff == NONE) return cr_transitions;
    uint64_t t = 0;
    for (uint32_t k = 0; k < cr_nlvl; k++) if (cr_lvl_rank[k] <= cutoff) t += cr_lvl_n[k];
    return t;
}

void cr_deadlock(uint32_t *rank, uint32_t *lid) { *rank = cr_deadlock_rank; *lid = cr_deadlock_lid; }

/* Per event: the least one-process number of a state raising it here, that state's index, and the step. */
void cr_events(uint32_t *num, uint32_t *lid, int32_t *step) {
    for (int e = 0; e < CC_NEVENTS; e++) { num[e] = ev_idx[e]; lid[e] = cr_ev_lid[e]; step[e] = ev_step[e]; }
}

/* A stored state: its slot values, its parent's owner and index there (NONE: initial), and its step. */
int cr_lookup(uint32_t idx, int64_t *v, uint32_t *par, int32_t *owner, int32_t *step) {
    if (idx >= nstates) return 1;
    unpack_state(idx, v);
    *par = parent[idx];
    *owner = cr_owner_of[idx];
    *step = label[idx];
    return 0;
}

/* States stored, bytes of the slice's own structures, and its packed stride. */
void cr_stats(uint64_t *out) {
    out[0] = nstates;
    out[1] = bytes_used() + (uint64_t)nstates * (1 + 4 + 4 + 2 + 8);
    out[2] = L_stride;
    out[3] = (uint64_t)peak_rss_bytes();
}
