// SPDX-License-Identifier: GPL-2.0-only
/* countercheck compiled explorer: the search with fingerprints (--fingerprint), TLC's and SPIN's hash
 * compaction.
 *
 * Appended to runtime.c (checker/compiled/codegen.py runtime_source()). The same breadth-first search,
 * state for state, as runtime.c's loop, but what is kept of a stored state is a 64-bit hash of its slot
 * values (not of its packing, which widening changes): two states with the same hash are taken for one,
 * and the second is never explored; the chance of that is the birthday bound n(n-1)/2 / 2^64 for n states,
 * which the report gives beside every verdict. A stored state costs its hash in the table (8 bytes at a
 * load of 0.64 to 0.8: 10 to 12.5 bytes), its parent index and step on disk (6 bytes, in a temporary file
 * that is gone when the program ends), and, while it is in the frontier, its packing.
 *
 * The table is 1024 open-addressing tables (segments, chosen by the hash's top bits), each grown by a
 * quarter on its own: growing never needs twice the memory of the whole. A path is printed by replaying
 * its steps from the initial state (the parent file gives the steps).
 */

#define FP_SEGS 1024
#define FP_SEG(h) ((size_t)((h) >> 54))

struct fp_seg { uint64_t *t; uint32_t size, n; };
static struct fp_seg fp_seg[FP_SEGS];
static uint64_t fp_table_bytes;
static int fp_slots[CC_NSLOTS], fp_nslots;  /* the slots hashed: every slot whose value can differ */
static uint8_t *fp_cur, *fp_next;            /* the frontier: this level's states and the next's, packed */
static uint32_t fp_ncur, fp_nnext;
static size_t fp_cap;                        /* bytes reserved for each */
static FILE *fp_parents;                     /* per state: its parent's index and its step (6 bytes) */
static int64_t *fp_inits;

static inline uint64_t fp_mix(uint64_t x) {  /* splitmix64's finaliser */
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Four independent multiply-xorshift lanes over the slots (so the multiplies overlap), then mixed. */
static inline uint64_t fp_hash(const int64_t *v) {
    uint64_t a = 0x9e3779b97f4a7c15ULL, b = 0xc2b2ae3d27d4eb4fULL, c = 0x165667b19e3779f9ULL,
             d = 0x27d4eb2f165667c5ULL ^ (uint64_t)fp_nslots;
    int k = 0;
    for (; k + 4 <= fp_nslots; k += 4) {
        a = (a ^ (uint64_t)v[fp_slots[k]]) * 0xff51afd7ed558ccdULL; a ^= a >> 32;
        b = (b ^ (uint64_t)v[fp_slots[k + 1]]) * 0xc4ceb9fe1a85ec53ULL; b ^= b >> 32;
        c = (c ^ (uint64_t)v[fp_slots[k + 2]]) * 0xff51afd7ed558ccdULL; c ^= c >> 32;
        d = (d ^ (uint64_t)v[fp_slots[k + 3]]) * 0xc4ceb9fe1a85ec53ULL; d ^= d >> 32;
    }
    for (; k < fp_nslots; k++) { a = (a ^ (uint64_t)v[fp_slots[k]]) * 0xff51afd7ed558ccdULL; a ^= a >> 32; }
    uint64_t h = fp_mix(fp_mix(a) ^ fp_mix(b + 0x9e3779b97f4a7c15ULL) ^ fp_mix(c + 0x3c6ef372fe94f82aULL) ^
                        fp_mix(d + 0xdaa66d2c7ddf743fULL));
    return h ? h : 1;  /* 0 marks an empty entry */
}

static inline size_t fp_pos(uint64_t h, uint32_t size) {
    return (size_t)((((h >> 22) & 0xffffffffULL) * (uint64_t)size) >> 32);
}

static uint64_t fp_frontier_bytes(void) {
    return ((uint64_t)fp_ncur + fp_nnext) * L_stride;
}

/* Grows a segment by a quarter. 0: the memory budget does not allow it. */
static int fp_grow(struct fp_seg *s) {
    uint32_t size = s->size + s->size / 4 + 1;
    if (fp_table_bytes + (uint64_t)size * 8 + fp_frontier_bytes() > max_memory) return 0;
    uint64_t *t = calloc(size, sizeof(uint64_t));
    if (!t) return 0;
    for (uint32_t k = 0; k < s->size; k++) {
        uint64_t h = s->t[k];
        if (!h) continue;
        size_t p = fp_pos(h, size);
        while (t[p]) p = p + 1 == size ? 0 : p + 1;
        t[p] = h;
    }
    free(s->t);
    fp_table_bytes += ((uint64_t)size - s->size) * 8;
    s->t = t;
    s->size = size;
    return 1;
}

/* 1: new (stored); 0: a state with this hash was stored; -1: the memory budget is spent. */
static int fp_insert(uint64_t h) {
    struct fp_seg *s = &fp_seg[FP_SEG(h)];
    size_t p = fp_pos(h, s->size);
    uint64_t e;
    while ((e = s->t[p]) != 0) {
        if (e == h) return 0;
        p = p + 1 == s->size ? 0 : p + 1;
    }
    if ((uint64_t)(s->n + 1) * 5 > (uint64_t)s->size * 4) {  /* load 0.8: grow, or up to 0.9 if it cannot */
        if (fp_grow(s)) return fp_insert(h);
        if ((uint64_t)(s->n + 1) * 10 > (uint64_t)s->size * 9) return -1;
    }
    s->t[p] = h;
    s->n++;
    return 1;
}

static void fp_parent(uint32_t par, int lab) {
    unsigned char rec[6];
    memcpy(rec, &par, 4);
    uint16_t l = (uint16_t)lab;
    memcpy(rec + 4, &l, 2);
    if (fwrite(rec, 6, 1, fp_parents) != 1) { fprintf(stderr, "cannot write the parent file: %s\n", strerror(errno)); exit(6); }
}

/* The layout grows so that v[i] fits: runtime.c widen() with no stored state (it changes the layout only),
   then both frontier buffers repacked from the old layout. 0: the budget does not allow it. */
static int fp_widen(int i, int64_t v) {
    int64_t old_lo[CC_NSLOTS];
    int old_w[CC_NSLOTS], old_off[CC_NSLOTS];
    memcpy(old_lo, L_lo, sizeof L_lo); memcpy(old_w, L_w, sizeof L_w); memcpy(old_off, L_off, sizeof L_off);
    size_t old_stride = L_stride;
    uint32_t keep = nstates;
    nstates = 0;
    int ok = widen(i, v);
    nstates = keep;
    if (!ok) return 0;
    if (fp_frontier_bytes() + fp_table_bytes > max_memory || ((uint64_t)fp_ncur + fp_nnext) * L_stride > fp_cap) return 0;
    uint8_t *bufs[2] = {fp_cur, fp_next};
    uint32_t counts[2] = {fp_ncur, fp_nnext};
    int64_t vec[CC_NSLOTS];
    uint64_t w[CC_MAXWORDS];
    for (int b = 0; b < 2; b++)
        for (uint32_t k = counts[b]; k-- > 0;) {  /* backwards, in place: the stride only grows */
            memset(w, 0, sizeof w);
            memcpy(w, bufs[b] + (size_t)k * old_stride, old_stride);
            for (int j = 0; j < CC_NSLOTS; j++) {
                int bb = old_w[j];
                if (bb == 0) { vec[j] = old_lo[j]; continue; }
                int off = old_off[j], q = off >> 6, r = off & 63;
                uint64_t u = w[q] >> r;
                if (r + bb > 64) u |= w[q + 1] << (64 - r);
                if (bb < 64) u &= (((uint64_t)1) << bb) - 1;
                vec[j] = (int64_t)(u + (uint64_t)old_lo[j]);
            }
            if (pack(vec, w)) { fprintf(stderr, "internal: repacking lost a value\n"); exit(6); }
            memcpy(bufs[b] + (size_t)k * L_stride, w, L_stride);
        }
    return 1;
}

/* Stores a new state (its hash h) reached from `par` by step `lab` in the next level: 1 stored, 0 seen, -1
   a limit. */
static int fp_store(const int64_t *v, uint64_t h, uint32_t par, int lab, uint64_t limit) {
    uint64_t w[CC_MAXWORDS];
    int bad;
    while ((bad = pack(v, w)) != 0)
        if (!fp_widen(bad - 1, v[bad - 1])) { stopped = "max_memory"; return -1; }
    int r = fp_insert(h);
    if (r < 0) { stopped = "max_memory"; return -1; }
    if (r == 0) return 0;
    if ((uint64_t)nstates == limit) { stopped = "max_states"; return -1; }  /* (its hash stays: the search ends) */
    if (((uint64_t)fp_nnext + 1) * L_stride > fp_cap || fp_frontier_bytes() + L_stride + fp_table_bytes > max_memory) {
        stopped = "max_memory";
        return -1;
    }
    memcpy(fp_next + (size_t)fp_nnext * L_stride, w, L_stride);
    fp_nnext++;
    fp_parent(par, lab);
    nstates++;
    return 1;
}

static void search_fingerprint(const int64_t *inits, int ninit, uint64_t limit, double timeout, double t0) {
    for (int i = 0; i < CC_NSLOTS; i++) {  /* a static slot keeps its initial value: hashed if those differ */
        int differs = 0;
        for (int k = 1; k < ninit && !differs; k++) differs = inits[(size_t)k * CC_NSLOTS + i] != inits[i];
        if (!cc_static[i] || differs) fp_slots[fp_nslots++] = i;
    }
    for (int k = 0; k < FP_SEGS; k++) {
        fp_seg[k].size = 64;
        fp_seg[k].t = calloc(64, sizeof(uint64_t));
        if (!fp_seg[k].t) { printf("result stopped=memory states=0\n"); exit(5); }
    }
    fp_table_bytes = (uint64_t)FP_SEGS * 64 * 8;
    fp_cap = (size_t)max_memory;
    fp_cur = reserve(fp_cap);
    fp_next = reserve(fp_cap);
    fp_parents = tmpfile();
    if (!fp_cur || !fp_next || !fp_parents) { printf("result stopped=memory states=0\n"); exit(5); }
    setvbuf(fp_parents, NULL, _IOFBF, 1 << 20);
    fp_inits = malloc(sizeof(int64_t) * CC_NSLOTS * (size_t)ninit);
    memcpy(fp_inits, inits, sizeof(int64_t) * CC_NSLOTS * (size_t)ninit);
    nstates = 0;
    for (int k = 0; k < ninit; k++) {
        int64_t v[CC_NSLOTS];
        memcpy(v, inits + (size_t)k * CC_NSLOTS, sizeof v);
        cc_canonical(v);
        int r = fp_store(v, fp_hash(v), NONE, k, (uint64_t)NONE - 2);  /* no state limit on initial states */
        if (r < 0) break;
        if (r == 1) check_props(v, nstates - 1, -1);
    }
    int64_t s[CC_NSLOTS];
    uint32_t level_start = 0;
    while (fp_nnext > 0 && strcmp(stopped, "none") == 0) {
        uint8_t *b = fp_cur; fp_cur = fp_next; fp_next = b;
        fp_ncur = fp_nnext;
        fp_nnext = 0;
        int any_new = 0;
        for (uint32_t k = 0; k < fp_ncur; k++) {
            uint32_t idx = level_start + k;
            uint64_t w[CC_MAXWORDS];
            w[L_words - 1] = 0;
            memcpy(w, fp_cur + (size_t)k * L_stride, L_stride);
            unpack_words(w, s);
            cc_cur = idx;
            expanded++;
            int n = cc_expand(s, succ_buf, succ_lab);
            cc_bookkeeping(idx, idx, s, succ_buf, n, &deadlock, idx);
            transitions += (uint64_t)n;
            for (int j = 0; j < n; j++) {  /* hashed first, their table entries prefetched: the misses overlap */
                int64_t *t = succ_buf + (size_t)j * CC_NSLOTS;
                cc_canonical(t);
                pk_hash[j] = fp_hash(t);
                const struct fp_seg *sg = &fp_seg[FP_SEG(pk_hash[j])];
                __builtin_prefetch(&sg->t[fp_pos(pk_hash[j], sg->size)]);
            }
            for (int j = 0; j < n; j++) {
                int64_t *t = succ_buf + (size_t)j * CC_NSLOTS;
                int r = fp_store(t, pk_hash[j], idx, (int)succ_lab[j], limit);
                if (r < 0) break;
                if (r == 1) { any_new = 1; check_props(t, nstates - 1, (int)succ_lab[j]); }
            }
            if (strcmp(stopped, "none") != 0) break;
            if (timeout > 0 && (expanded & 255) == 0 && now() - t0 > timeout) { stopped = "timeout"; break; }
        }
        if (any_new) depth++;
        level_start += fp_ncur;
    }
    fflush(fp_parents);
}

/* The path to a state, replayed from its initial state with the steps in the parent file; printed as
   runtime.c print_path() prints it (node and state lines, from the state back). */
static void fp_print_path(uint32_t idx) {
    uint32_t *chain = NULL;
    uint16_t *labs = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = idx;;) {
        unsigned char rec[6];
        if (pread(fileno(fp_parents), rec, 6, (off_t)i * 6) != 6) { fprintf(stderr, "cannot read the parent file\n"); exit(6); }
        uint32_t par;
        uint16_t lab;
        memcpy(&par, rec, 4);
        memcpy(&lab, rec + 4, 2);
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            chain = realloc(chain, cap * sizeof *chain);
            labs = realloc(labs, cap * sizeof *labs);
        }
        chain[n] = i;
        labs[n] = lab;
        n++;
        if (par == NONE) break;
        i = par;
    }
    int64_t v[CC_NSLOTS];
    cc_events_off = 1;  /* a replay: its events were recorded when the search took these steps */
    memcpy(v, fp_inits + (size_t)labs[n - 1] * CC_NSLOTS, sizeof v);
    cc_canonical(v);
    for (size_t k = n; k-- > 0;) {
        if (k + 1 < n) {  /* the step from chain[k + 1] */
            int m = cc_expand(v, succ_buf, succ_lab), j = 0;
            while (j < m && succ_lab[j] != labs[k]) j++;
            if (j == m) { fprintf(stderr, "internal: a stored step does not replay\n"); exit(6); }
            memcpy(v, succ_buf + (size_t)j * CC_NSLOTS, sizeof v);
            cc_canonical(v);
        }
        printf("node %u %lld %d\n", chain[k], k + 1 < n ? (long long)chain[k + 1] : -1LL, (int)labs[k]);
        printf("state %u", chain[k]);
        for (int i = 0; i < CC_NSLOTS; i++) printf(" %lld", (long long)v[i]);
        printf("\n");
    }
    cc_events_off = 0;
    free(chain);
    free(labs);
}
