// SPDX-License-Identifier: GPL-2.0-only
/* countercheck compiled explorer: the search on several threads (--jobs N).
 *
 * Appended to runtime.c (checker/compiled/codegen.py runtime_source()); it uses runtime.c's layout, arena,
 * table and output. The result is the one-thread search's, state for state: the same states with the same
 * BFS numbers, the same parent and step for each, so the same verdicts and shortest traces; only where
 * each state sits in the arena differs.
 *
 * Breadth first, one level at a time. The threads take the level's states in chunks, in BFS order, expand
 * them and insert each successor into the shared table: a new one is written to a slot of the arena past
 * the level (each thread reserves slots a block at a time), then published with a compare-and-swap on its
 * table entry (the one-thread search's entry: the high half of the hash and the index). The order in which threads publish is timing; what is kept
 * with each new state is not: its key, the least (BFS rank of the parent, step) that reaches it, lowered
 * with an atomic minimum. The one-thread search numbers a level's new states in the order of exactly
 * that key (it expands parents in BFS order, successors in step order, and keeps the first), so at the
 * level's end a counting sort by key gives each new state its BFS number (order[rank] = its arena index)
 * and its parent and step. The arena is not reordered: the table's entries keep pointing at it.
 *
 * What the one-thread search finds first (a property's first state, the deadlock, each context event)
 * is the least BFS number that shows it: each thread keeps its least, the level's end takes the least of
 * those. A limit on states stops the one-thread search at the first new state past it, halfway through
 * a parent's successors: here the level's new states past the limit are dropped and the counts stop
 * at that parent. Chunks are taken in BFS order and a round of work ends only between chunks, so what was
 * expanded when a round ends is a prefix of the level, and the keys of the new states it found are final.
 *
 * A round ends when the table could fill past its load bound (the main thread grows it, alone: a
 * margin of a chunk's worth of successors per thread is left free, so no insert can find it full), at
 * a limit, or when a successor does not fit the packed layout: the layout is widened (runtime.c
 * widen(), which repacks the stored states and rebuilds the table) and the level starts again.
 */

#define TH_HI 0xffffffff00000000ULL

struct __attribute__((aligned(64))) th_worker {  /* a thread's own cache lines */
    pthread_t th;
    int64_t s[CC_NSLOTS];
    int64_t whole[CC_NSLOTS];  /* a successor made whole (runtime.c succ_whole) */
    int64_t *succ;     /* (CC_NSTEPS + 1) successors */
    uint32_t *lab;
    uint64_t *pk;      /* the successors packed */
    uint64_t *pkh;     /* their hashes */
    uint32_t blk_next, blk_end;  /* arena slots reserved by this thread and not yet used (a block at a time:
                                    one shared counter per state would bounce its cache line between cores) */
    uint32_t dl;       /* the least BFS rank in this level of a deadlocked state (NONE: none) */
    uint32_t ev[CC_NEVENTS + 1];  /* per event, the least BFS number raising it, and the step */
    int ev_s[CC_NEVENTS + 1];
    uint32_t *found[CC_NPROPS + 1];  /* per pending property, the new states (arena slots) that decide it */
    size_t nfound[CC_NPROPS + 1], capfound[CC_NPROPS + 1];
    int widen_slot;    /* a successor's value that does not fit: the slot (-1: none) and the value */
    int64_t widen_val;
};

/* States a thread takes at a time: 64; COUNTERCHECK_THREAD_CHUNK sets it (the tests set 1, so that the
   threads interleave on small specs) */
static uint32_t th_chunk = 64;
#define TH_BLOCK 256
static int TH_n;
static double th_t_round, th_t_finish;  /* where the time went (COUNTERCHECK_THREAD_STATS: on stderr) */
static int th_rounds;
static struct th_worker *TH_w;
static uint32_t *th_order, *th_order_next;  /* BFS rank -> arena index, this level and the next */
static uint64_t *th_key;      /* per arena slot past the level: the least (parent rank << 16 | step) */
static uint32_t *th_rank;     /* per arena slot past the level: its BFS rank in the next level */
static uint32_t *th_count;    /* the counting sort's buckets, per parent rank */
static uint32_t *th_nsucc;    /* per rank in this level: its successor count (the transitions at a limit) */
static uint32_t th_ls, th_le, th_F;  /* the level: its first state, its end, its size */
/* chunks handed out; arena slots taken past the level: the two counters the threads write, each on a cache
   line of its own (so the level's read-mostly fields beside them stay in every core's cache) */
static struct { uint32_t v; char pad[60]; } __attribute__((aligned(64))) th_hot_chunk, th_hot_ncand;
#define th_next_chunk th_hot_chunk.v
#define th_ncand th_hot_ncand.v
static uint32_t th_nchunks;
static uint64_t th_cand_cap;  /* a round ends before th_ncand + th_margin exceeds this */
static uint64_t th_margin;    /* the most successors the threads can insert between two checks */
static int th_abort;          /* a successor needs a wider layout */
static double th_deadline;
static uint32_t th_ev[CC_NEVENTS + 1];  /* the events found (arena indices; ev_idx is each thread's own) */
static int th_ev_step[CC_NEVENTS + 1];

static void th_push_found(struct th_worker *w, int k, uint32_t i) {
    if (w->nfound[k] == w->capfound[k]) {
        w->capfound[k] = w->capfound[k] ? 2 * w->capfound[k] : 64;
        w->found[k] = realloc(w->found[k], w->capfound[k] * sizeof(uint32_t));
        if (!w->found[k]) { fprintf(stderr, "out of memory\n"); exit(5); }
    }
    w->found[k][w->nfound[k]++] = i;
}

/* Inserts a packed successor. 1 and its arena index in *at: new; 0: stored before (its key lowered). */
static int th_insert(struct th_worker *w, const uint64_t *words, uint64_t h, uint64_t key, uint32_t *at) {
    uint64_t tag = h & TH_HI;
    size_t mask = tab_size - 1, p = TAB_POS(h, mask);
    for (;;) {
        uint64_t e = __atomic_load_n(&tab[p], __ATOMIC_ACQUIRE);
        if (e == 0) {
            if (w->blk_next == w->blk_end) {
                w->blk_next = th_le + __atomic_fetch_add(&th_ncand, TH_BLOCK, __ATOMIC_RELAXED);
                w->blk_end = w->blk_next + TH_BLOCK;
            }
            uint32_t i = w->blk_next;
            memcpy(arena + (size_t)i * L_stride, words, L_stride);
            th_key[i - th_le] = key;
            uint64_t want = 0;
            if (__atomic_compare_exchange_n(&tab[p], &want, tag | (uint64_t)(i + 1), 0, __ATOMIC_RELEASE,
                                            __ATOMIC_ACQUIRE)) {
                w->blk_next++;
                *at = i;
                return 1;
            }
            e = want;  /* another thread took the entry first: maybe with this state */
        }
        if ((e & TH_HI) == tag) {
            uint32_t j = (uint32_t)e - 1;
            if (memcmp(arena + (size_t)j * L_stride, words, L_stride) == 0) {
                if (j >= th_le) {  /* new in this level: keep the least key */
                    uint64_t *kp = &th_key[j - th_le], old = __atomic_load_n(kp, __ATOMIC_RELAXED);
                    while (key < old && !__atomic_compare_exchange_n(kp, &old, key, 1, __ATOMIC_RELAXED,
                                                                     __ATOMIC_RELAXED)) {}
                }
                return 0;
            }
        }
        p = (p + 1) & mask;
    }
}

/* runtime.c check_props, for a new state of the next level: the properties it decides are noted (the
   least BFS number among them is found at the level's end) */
static void th_check_props(struct th_worker *w, const int64_t *v, uint32_t at, int step) {
    for (int k = 0; k < CC_NPROPS; k++) {
        if (found_idx[k] != NONE || !cc_step_reads[step][k]) continue;
        int val = cc_prop(k, v);
        if (cc_ovf) cc_fail("overflow_property", k, 0);
        if (cc_prop_kind[k] == 0 ? !val : val) th_push_found(w, k, at);
    }
}

/* Expands the state of BFS rank r in this level: runtime.c's loop body. 0: a successor needs widening. */
static int th_expand(struct th_worker *w, uint32_t r) {
    uint32_t idx = th_order[r], bfs = th_ls + r;
    int64_t *s = w->s;
    uint64_t pw0[CC_MAXWORDS];
    load_words(idx, pw0);
    unpack_active(pw0, s);
    cc_cur = bfs;
    int n = cc_expand(s, w->succ, w->lab);
    cc_bookkeeping(bfs, idx, s, w->succ, n, &w->dl, r);
    th_nsucc[r] = (uint32_t)n;
    unsigned char same[CC_NSTEPS + 1];
    for (int j = 0; j < n; j++) same[j] = (unsigned char)canonical_same(w->succ + (size_t)j * CC_NSLOTS);
    for (int j = 0; j < n; j++) {
        const int64_t *t = w->succ + (size_t)j * CC_NSLOTS;
        uint64_t *pw = w->pk + (size_t)j * L_words;
        int bad = pack_succ(pw0, t, (int)w->lab[j], same[j], pw);
        if (bad) {
            w->widen_slot = bad - 1;
            w->widen_val = t[bad - 1];
            __atomic_store_n(&th_abort, 1, __ATOMIC_RELAXED);
            return 0;
        }
        w->pkh[j] = hash_words(pw);
        __builtin_prefetch(&tab[TAB_POS(w->pkh[j], tab_size - 1)]);
    }
    for (int j = 0; j < n; j++) {
        uint32_t at;
        if (th_insert(w, w->pk + (size_t)j * L_words, w->pkh[j], ((uint64_t)r << 16) | w->lab[j], &at))
            th_check_props(w, succ_whole(s, w->succ + (size_t)j * CC_NSLOTS, (int)w->lab[j], w->whole), at, (int)w->lab[j]);
    }
    return 1;
}

/* One round: chunks in BFS order until none is left, the table or a limit needs the main thread, a
   successor needs a wider layout, or the time is up. A chunk taken is expanded whole (but on a widening). */
static void *th_round(void *arg) {
    struct th_worker *w = arg;
    for (int e = 0; e <= CC_NEVENTS; e++) ev_idx[e] = NONE;  /* this thread's, for this round */
    for (;;) {
        if (__atomic_load_n(&th_abort, __ATOMIC_RELAXED)) break;
        if ((uint64_t)__atomic_load_n(&th_ncand, __ATOMIC_RELAXED) + th_margin > th_cand_cap) break;
        if (th_deadline > 0 && now() > th_deadline) break;
        uint32_t c = __atomic_fetch_add(&th_next_chunk, 1, __ATOMIC_RELAXED);
        if (c >= th_nchunks) break;
        uint32_t r1 = (c + 1) * th_chunk < th_F ? (c + 1) * th_chunk : th_F;
        for (uint32_t r = c * th_chunk; r < r1; r++)
            if (!th_expand(w, r)) break;
    }
    for (int e = 0; e < CC_NEVENTS; e++)
        if (ev_idx[e] < w->ev[e]) { w->ev[e] = ev_idx[e]; w->ev_s[e] = ev_step[e]; }
    return NULL;
}

static void th_run_round(void) {
    uint32_t left = th_nchunks > th_next_chunk ? th_nchunks - th_next_chunk : 0;
    int n = left < (uint32_t)TH_n ? (int)left : TH_n;
    if (n <= 1) { th_round(&TH_w[0]); return; }
    for (int t = 1; t < n; t++)
        if (pthread_create(&TH_w[t].th, NULL, th_round, &TH_w[t]) != 0) { n = t; break; }  /* fewer threads */
    th_round(&TH_w[0]);
    for (int t = 1; t < n; t++) pthread_join(TH_w[t].th, NULL);
}

static void th_reset_level(void) {
    th_next_chunk = 0;
    th_ncand = 0;
    th_abort = 0;
    for (int t = 0; t < TH_n; t++) {
        struct th_worker *w = &TH_w[t];
        w->blk_next = w->blk_end = 0;
        w->dl = NONE;
        w->widen_slot = -1;
        for (int e = 0; e <= CC_NEVENTS; e++) { w->ev[e] = NONE; w->ev_s[e] = 0; }
        for (int k = 0; k <= CC_NPROPS; k++) w->nfound[k] = 0;
    }
}

/* Bytes a level with `cand` new states takes beyond bytes_used(): the states, and this file's arrays. */
static uint64_t th_bytes(uint64_t cand) {
    return cand * (L_stride + sizeof(uint32_t) + sizeof(uint16_t) + sizeof(uint64_t) + 2 * sizeof(uint32_t))
           + (uint64_t)th_F * 3 * sizeof(uint32_t);
}

/* The most new states this level can take before the table must grow or memory runs out. */
static uint64_t th_capacity(void) {
    uint64_t cap = (uint64_t)tab_size * 7 / 10;
    cap = cap > th_le ? cap - th_le : 0;
    uint64_t used = bytes_used() + th_bytes(0), per = th_bytes(1) - th_bytes(0);
    uint64_t mem = used < max_memory ? (max_memory - used) / per : 0;
    if (mem < cap) cap = mem;
    uint64_t ar = arena_cap / L_stride;
    ar = ar > th_le ? ar - th_le : 0;
    if (ar < cap) cap = ar;
    uint64_t nodes = node_cap > (uint64_t)th_le + 2 ? node_cap - th_le - 2 : 0;
    if (nodes < cap) cap = nodes;
    return cap;
}

/* runtime.c tab_grow on the threads: each moves a range of the old table's entries into the new one, taking
   an empty entry with a compare-and-swap (the entries are distinct: where they land is all that races). */
static uint64_t *th_grow_new;
static size_t th_grow_size;

static void *th_grow_part(void *arg) {
    size_t t = (size_t)(intptr_t)arg, lo = tab_size / TH_n * t, hi = t + 1 == (size_t)TH_n ? tab_size : tab_size / TH_n * (t + 1);
    size_t mask = th_grow_size - 1;
    for (size_t k = lo; k < hi; k++) {
        uint64_t e = tab[k];
        if (!e) continue;
        for (size_t h = TAB_POS(e, mask);; h = (h + 1) & mask) {
            uint64_t want = 0;
            if (__atomic_compare_exchange_n(&th_grow_new[h], &want, e, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
        }
    }
    return NULL;
}

static void th_tab_grow(size_t size) {
    th_grow_new = tab_alloc(size);
    th_grow_size = size;
    pthread_t th[256];
    int n = 1;
    for (; n < TH_n; n++)
        if (pthread_create(&th[n], NULL, th_grow_part, (void *)(intptr_t)n) != 0) break;
    for (int t = n; t < TH_n; t++) th_grow_part((void *)(intptr_t)t);  /* (a thread not started: its part here) */
    th_grow_part((void *)(intptr_t)0);
    for (int t = 1; t < n; t++) pthread_join(th[t], NULL);
    free(tab);
    tab = th_grow_new;
    tab_size = size;
}

/* The table grows (doubling) until a round can run; 0: memory does not allow it. */
static int th_make_room(void) {
    while ((uint64_t)th_ncand + th_margin > th_capacity()) {
        uint64_t need = bytes_used() + th_bytes(th_ncand + th_margin) + (uint64_t)tab_size * 2 * sizeof(uint64_t);
        uint64_t tab_cap = (uint64_t)tab_size * 7 / 10;
        if ((uint64_t)th_le + th_ncand + th_margin <= tab_cap || need > max_memory) return 0;  /* not the table */
        th_tab_grow(tab_size * 2);
    }
    return 1;
}

/* Moves the new state in arena slot `from` (past the level) to slot `to`; `fix`: its table entry too. */
static void th_move(uint32_t from, uint32_t to, int fix) {
    memcpy(arena + (size_t)to * L_stride, arena + (size_t)from * L_stride, L_stride);
    th_key[to - th_le] = th_key[from - th_le];
    if (!fix) return;
    uint64_t w[CC_MAXWORDS];
    load_words(to, w);
    uint64_t h = hash_words(w);
    size_t mask = tab_size - 1, p = TAB_POS(h, mask);
    while ((uint32_t)tab[p] != from + 1) p = (p + 1) & mask;
    tab[p] = (tab[p] & TH_HI) | (uint64_t)(to + 1);
}

/* The level's end: BFS numbers, parents and steps of the new states (up to `room` of them), what was found.
   `done`: how many of the level's states were expanded (a prefix). */
static void th_finish_level(uint32_t done, uint64_t room) {
    uint32_t nc = th_ncand;
    for (int t = 0; t < TH_n; t++) {  /* slots reserved and not used: holes */
        for (uint32_t i = TH_w[t].blk_next; i < TH_w[t].blk_end; i++) th_key[i - th_le] = UINT64_MAX;
        TH_w[t].blk_next = TH_w[t].blk_end = 0;
    }
    /* counting sort by parent rank; within a parent by step (its successors are few: insertion sort) */
    memset(th_count, 0, sizeof(uint32_t) * ((size_t)done + 1));
    uint32_t nnew = 0;
    for (uint32_t i = 0; i < nc; i++)
        if (th_key[i] != UINT64_MAX) { th_count[(th_key[i] >> 16) + 1]++; nnew++; }
    for (uint32_t r = 1; r <= done; r++) th_count[r] += th_count[r - 1];
    for (uint32_t i = 0; i < nc; i++)
        if (th_key[i] != UINT64_MAX) th_order_next[th_count[th_key[i] >> 16]++] = th_le + i;
    for (uint32_t r = 1; r < nnew; r++) {
        uint32_t x = th_order_next[r];
        uint64_t kx = th_key[x - th_le];
        uint32_t q = r;
        while (q > 0 && th_key[th_order_next[q - 1] - th_le] > kx) { th_order_next[q] = th_order_next[q - 1]; q--; }
        th_order_next[q] = x;
    }
    uint32_t keep = nnew, last = done;  /* the states kept; the level's states expanded */
    if (nnew > room) {  /* the one-thread search stopped at the parent of the first state past the limit */
        keep = (uint32_t)room;
        last = (uint32_t)(th_key[th_order_next[keep] - th_le] >> 16) + 1;
        stopped = "max_states";
    }
    for (uint32_t i = 0; i < nc; i++) th_rank[i] = NONE;
    for (uint32_t r = 0; r < nnew; r++) th_rank[th_order_next[r] - th_le] = r;
    /* what was found: the least BFS number, among what the one-thread search would have seen */
    uint32_t found_rank[CC_NPROPS + 1];
    for (int k = 0; k < CC_NPROPS; k++) {
        found_rank[k] = NONE;
        for (int t = 0; t < TH_n; t++)
            for (size_t f = 0; f < TH_w[t].nfound[k]; f++) {
                uint32_t r = th_rank[TH_w[t].found[k][f] - th_le];
                if (r < keep && r < found_rank[k]) found_rank[k] = r;
            }
    }
    uint32_t dl = NONE;
    for (int t = 0; t < TH_n; t++) if (TH_w[t].dl < dl) dl = TH_w[t].dl;
    if (deadlock == NONE && dl < last) deadlock = th_order[dl];
    for (int e = 0; e < CC_NEVENTS; e++) {
        uint32_t best = NONE;
        int step = 0;
        for (int t = 0; t < TH_n; t++)
            if (TH_w[t].ev[e] < best) { best = TH_w[t].ev[e]; step = TH_w[t].ev_s[e]; }
        if (th_ev[e] == NONE && best != NONE && best - th_ls < last) { th_ev[e] = th_order[best - th_ls]; th_ev_step[e] = step; }
    }
    /* the kept states into the arena slots th_le .. th_le + keep: the slots past them that hold kept states
       move into those that hold none (a slot reserved and not used, or a state dropped at the limit) */
    uint32_t to = 0;
    for (uint32_t from = keep; from < nc; from++) {
        uint32_t r = th_rank[from];
        if (r == NONE || r >= keep) continue;
        while (th_rank[to] != NONE && th_rank[to] < keep) to++;
        th_move(th_le + from, th_le + to, keep == nnew);
        th_rank[to] = r;
        th_rank[from] = NONE;
        th_order_next[r] = th_le + to;
    }
    for (uint32_t r = 0; r < keep; r++) {
        uint32_t i = th_order_next[r];
        uint64_t k = th_key[i - th_le];
        parent[i] = th_order[k >> 16];
        label[i] = (uint16_t)(k & 0xffff);
    }
    for (int k = 0; k < CC_NPROPS; k++)
        if (found_rank[k] != NONE) { found_idx[k] = th_order_next[found_rank[k]]; pending_props--; }
    for (uint32_t r = 0; r < last; r++) transitions += th_nsucc[r];
    expanded += last;
    if (keep > 0) depth++;
    nstates = th_le + keep;
}

static void *th_reserve_or_die(size_t bytes) {
    void *p = reserve(bytes);
    if (!p) { printf("result stopped=memory states=%u transitions=0 depth=0\n", nstates); exit(5); }
    return p;
}

static void search_threaded(int nthreads, uint64_t limit, double timeout, double t0) {
    TH_n = nthreads;
    const char *chunk = getenv("COUNTERCHECK_THREAD_CHUNK");
    if (chunk && atoi(chunk) > 0 && atoi(chunk) <= 65536) th_chunk = (uint32_t)atoi(chunk);
    if (posix_memalign((void **)&TH_w, 64, (size_t)nthreads * sizeof *TH_w) != 0) TH_w = NULL;
    if (TH_w) memset(TH_w, 0, (size_t)nthreads * sizeof *TH_w);
    if (!TH_w) { printf("result stopped=memory states=%u transitions=0 depth=0\n", nstates); exit(5); }
    for (int t = 0; t < nthreads; t++) {
        TH_w[t].succ = malloc(sizeof(int64_t) * (CC_NSTEPS + 1) * CC_NSLOTS);
        TH_w[t].lab = malloc(sizeof(uint32_t) * (CC_NSTEPS + 1));
        TH_w[t].pk = malloc(sizeof(uint64_t) * (CC_NSTEPS + 1) * (CC_NSLOTS + 1));
        TH_w[t].pkh = malloc(sizeof(uint64_t) * (CC_NSTEPS + 1));
        if (!TH_w[t].succ || !TH_w[t].lab || !TH_w[t].pk || !TH_w[t].pkh) {
            printf("result stopped=memory states=%u transitions=0 depth=0\n", nstates);
            exit(5);
        }
        if (nstates) unpack_state(0, TH_w[t].s);  /* the slots unpack_active leaves alone */
    }
    /* per-level arrays, as address space: only what a level uses is touched */
    th_order = th_reserve_or_die(node_cap * sizeof(uint32_t));
    th_order_next = th_reserve_or_die(node_cap * sizeof(uint32_t));
    th_key = th_reserve_or_die(node_cap * sizeof(uint64_t));
    th_rank = th_reserve_or_die(node_cap * sizeof(uint32_t));
    th_count = th_reserve_or_die((node_cap + 1) * sizeof(uint32_t));
    th_nsucc = th_reserve_or_die(node_cap * sizeof(uint32_t));
    th_margin = (uint64_t)nthreads * ((uint64_t)th_chunk * (CC_NSTEPS + 1) + TH_BLOCK);
    th_deadline = timeout > 0 ? t0 + timeout : 0;
    for (int e = 0; e <= CC_NEVENTS; e++) th_ev[e] = NONE;
    th_ls = 0;
    th_le = nstates;
    for (uint32_t i = 0; i < nstates; i++) th_order[i] = i;  /* the initial states, stored in order */
    while (th_ls < th_le && strcmp(stopped, "none") == 0) {
        th_F = th_le - th_ls;
        th_nchunks = (th_F + th_chunk - 1) / th_chunk;
        uint64_t room = limit - th_le;
        th_reset_level();
        for (;;) {
            if (!th_make_room()) { stopped = "max_memory"; break; }
            th_cand_cap = th_capacity();
            uint64_t past = room + (uint64_t)TH_n * TH_BLOCK;  /* then more than room states are new */
            if (past + th_margin < th_cand_cap) th_cand_cap = past + th_margin;
            double tr = now();
            th_run_round();
            th_t_round += now() - tr;
            th_rounds++;
            if (th_abort) {  /* widen, then the level again from its start */
                int ok = 1;
                for (int t = 0; t < TH_n && ok; t++) {
                    int i = TH_w[t].widen_slot;
                    if (i < 0) continue;
                    uint64_t u = (uint64_t)TH_w[t].widen_val - (uint64_t)L_lo[i];
                    if (L_w[i] < 64 && (u >> L_w[i]) != 0) ok = widen(i, TH_w[t].widen_val);
                }
                if (!ok) { stopped = "max_memory"; th_ncand = 0; break; }
                th_reset_level();
                continue;
            }
            if (th_next_chunk >= th_nchunks) break;  /* the level is expanded */
            uint32_t unused = 0;
            for (int t = 0; t < TH_n; t++) unused += TH_w[t].blk_end - TH_w[t].blk_next;
            if ((uint64_t)(th_ncand - unused) > room) break;  /* past the limit: th_finish_level stops */
            if (th_deadline > 0 && now() > th_deadline) { stopped = "timeout"; break; }
        }
        if (th_abort) break;  /* a widening the memory does not allow: this level is not kept */
        uint32_t done = th_next_chunk >= th_nchunks ? th_F : th_next_chunk * th_chunk;
        double tf = now();
        th_finish_level(done, room);
        th_t_finish += now() - tf;
        if (strcmp(stopped, "none") == 0 && done < th_F) stopped = "max_memory";
        uint32_t *o = th_order; th_order = th_order_next; th_order_next = o;
        th_ls = th_le;
        th_le = nstates;
    }
    for (int e = 0; e <= CC_NEVENTS; e++) { ev_idx[e] = th_ev[e]; ev_step[e] = th_ev_step[e]; }  /* for main() to print */
    if (getenv("COUNTERCHECK_THREAD_STATS"))
        fprintf(stderr, "threads: %d rounds, %.3f s in rounds, %.3f s finishing levels\n", th_rounds, th_t_round, th_t_finish);
}
