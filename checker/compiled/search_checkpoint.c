// SPDX-License-Identifier: GPL-2.0-only
/* countercheck compiled explorer: checkpoints of the one-thread search (--checkpoint, --resume).
 *
 * Appended to runtime.c (checker/compiled/codegen.py runtime_source()). After each whole BFS level the
 * search writes the states it stored since the last checkpoint, with their parents and steps and the
 * layout they are packed in, and everything the search has decided so far, to DIR/level-NNNNNN.bin (a
 * temporary name, fsynced, renamed), then prints `checkpoint LEVEL PATH`: the Python side
 * (checker/compiled/checkpoint.py) seals the file with a manifest (its length and SHA-256, bound to the
 * spec, parameters and the checker's digest, checker.persist) and only a sealed level counts. To resume,
 * the Python side checks every level file against its manifest and passes the last level: the program
 * loads the levels in order (each state unpacked with its file's layout and stored again, so the BFS
 * numbers are the same) and goes on from that level's frontier.
 *
 * A level file: "CCLEVEL1\n", then little-endian int64 fields (CP_NFIELDS), the properties found
 * (CC_NPROPS), the events found (index, step) (CC_NEVENTS), the layout (lo, width per slot), then `count`
 * packed states of `stride` bytes, their parents (uint32) and their steps (uint16).
 */
#include <fcntl.h>

enum { CP_LEVEL, CP_FIRST, CP_COUNT, CP_NSLOTS, CP_STRIDE, CP_NSTATES, CP_LSTART, CP_LEND, CP_DEPTH, CP_EXPANDED,
       CP_TRANSITIONS, CP_DEADLOCK, CP_NPROPS, CP_NEVENTS, CP_NFIELDS };
#define CP_MAGIC "CCLEVEL1\n"

/* cp_dir (declared in runtime.c): the checkpoint directory, NULL: none */
static uint32_t cp_saved;       /* states written by the checkpoints so far */

static int cp_write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0) { if (errno == EINTR) continue; return 0; }
        c += k; n -= (size_t)k;
    }
    return 1;
}

/* Writes the level just finished; the program stops (error checkpoint) if it cannot. */
static void cp_save(int level, uint32_t level_start, uint32_t level_end) {
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/level-%06d.bin", cp_dir, level);
    snprintf(tmp, sizeof tmp, "%s/.level-%06d.bin.tmp", cp_dir, level);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int64_t f[CP_NFIELDS] = {0};
    f[CP_LEVEL] = level; f[CP_FIRST] = cp_saved; f[CP_COUNT] = nstates - cp_saved; f[CP_NSLOTS] = CC_NSLOTS;
    f[CP_STRIDE] = (int64_t)L_stride; f[CP_NSTATES] = nstates; f[CP_LSTART] = level_start; f[CP_LEND] = level_end;
    f[CP_DEPTH] = depth; f[CP_EXPANDED] = expanded; f[CP_TRANSITIONS] = (int64_t)transitions;
    f[CP_DEADLOCK] = deadlock == NONE ? -1 : deadlock; f[CP_NPROPS] = CC_NPROPS; f[CP_NEVENTS] = CC_NEVENTS;
    int ok = fd >= 0 && cp_write_all(fd, CP_MAGIC, strlen(CP_MAGIC)) && cp_write_all(fd, f, sizeof f);
    for (int k = 0; ok && k < CC_NPROPS; k++) {
        int64_t x = found_idx[k] == NONE ? -1 : found_idx[k];
        ok = cp_write_all(fd, &x, 8);
    }
    for (int e = 0; ok && e < CC_NEVENTS; e++) {
        int64_t x[2] = {ev_idx[e] == NONE ? -1 : ev_idx[e], ev_step[e]};
        ok = cp_write_all(fd, x, 16);
    }
    for (int i = 0; ok && i < CC_NSLOTS; i++) {
        int64_t x[2] = {L_lo[i], L_w[i]};
        ok = cp_write_all(fd, x, 16);
    }
    uint32_t n = nstates - cp_saved;
    ok = ok && cp_write_all(fd, arena + (size_t)cp_saved * L_stride, (size_t)n * L_stride)
         && cp_write_all(fd, parent + cp_saved, (size_t)n * sizeof(uint32_t))
         && cp_write_all(fd, label + cp_saved, (size_t)n * sizeof(uint16_t))
         && fsync(fd) == 0;
    if (fd >= 0) close(fd);
    if (!ok || rename(tmp, path) != 0) { unlink(tmp); cc_fail("checkpoint", level, errno); }
    cp_saved = nstates;
    printf("checkpoint %d %s\n", level, path);
    fflush(stdout);  /* read as it comes: the Python side seals the file */
}

static int cp_read_all(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n; }

/* Loads levels 0..last; the loop's level bounds through the pointers. 0: a file is not what it says. */
static int cp_load(int last, uint32_t *level_start, uint32_t *level_end) {
    int64_t f[CP_NFIELDS];
    for (int level = 0; level <= last; level++) {
        char path[4096], magic[sizeof CP_MAGIC];
        snprintf(path, sizeof path, "%s/level-%06d.bin", cp_dir, level);
        FILE *in = fopen(path, "rb");
        if (!in) return 0;
        int ok = cp_read_all(in, magic, strlen(CP_MAGIC)) && memcmp(magic, CP_MAGIC, strlen(CP_MAGIC)) == 0
                 && cp_read_all(in, f, sizeof f) && f[CP_LEVEL] == level && f[CP_FIRST] == nstates
                 && f[CP_NSLOTS] == CC_NSLOTS && f[CP_NPROPS] == CC_NPROPS && f[CP_NEVENTS] == CC_NEVENTS
                 && f[CP_COUNT] >= 0 && f[CP_FIRST] + f[CP_COUNT] == f[CP_NSTATES] && f[CP_STRIDE] > 0
                 && f[CP_STRIDE] <= (int64_t)(CC_MAXWORDS * sizeof(uint64_t));
        int64_t found[CC_NPROPS + 1], evs[2 * CC_NEVENTS + 2], lay[2 * CC_NSLOTS];
        ok = ok && cp_read_all(in, found, 8 * CC_NPROPS) && cp_read_all(in, evs, 16 * CC_NEVENTS)
             && cp_read_all(in, lay, 16 * CC_NSLOTS);
        for (int i = 0; ok && i < CC_NSLOTS; i++) ok = lay[2 * i + 1] >= 0 && lay[2 * i + 1] <= 64;
        int off[CC_NSLOTS], o = 0;
        for (int i = 0; ok && i < CC_NSLOTS; i++) { off[i] = o; o += (int)lay[2 * i + 1]; }
        ok = ok && (o + 7) / 8 <= f[CP_STRIDE];
        size_t n = ok ? (size_t)f[CP_COUNT] : 0, stride = ok ? (size_t)f[CP_STRIDE] : 0;
        uint8_t *buf = malloc(n * stride + 1);
        uint32_t *par = malloc(n * sizeof(uint32_t) + 1);
        uint16_t *lab = malloc(n * sizeof(uint16_t) + 1);
        ok = ok && buf && par && lab && cp_read_all(in, buf, n * stride) && cp_read_all(in, par, n * 4)
             && cp_read_all(in, lab, n * 2) && fgetc(in) == EOF;
        fclose(in);
        for (size_t k = 0; ok && k < n; k++) {
            uint64_t w[CC_MAXWORDS];
            int64_t v[CC_NSLOTS];
            memset(w, 0, sizeof w);
            memcpy(w, buf + k * stride, stride);
            for (int j = 0; j < CC_NSLOTS; j++) {
                int bb = (int)lay[2 * j + 1];
                if (bb == 0) { v[j] = lay[2 * j]; continue; }
                int q = off[j] >> 6, r = off[j] & 63;
                uint64_t u = w[q] >> r;
                if (r + bb > 64) u |= w[q + 1] << (64 - r);
                if (bb < 64) u &= (((uint64_t)1) << bb) - 1;
                v[j] = (int64_t)(u + (uint64_t)lay[2 * j]);
            }
            uint32_t p = par[k];
            ok = (p == NONE || p < nstates) && store(v, p, lab[k], (uint64_t)NONE - 2) == 1;
        }
        free(buf); free(par); free(lab);
        if (!ok) return 0;
        if (level == last) {
            for (int k = 0; k < CC_NPROPS; k++) found_idx[k] = found[k] < 0 ? NONE : (uint32_t)found[k];
            for (int e = 0; e < CC_NEVENTS; e++) { ev_idx[e] = evs[2 * e] < 0 ? NONE : (uint32_t)evs[2 * e]; ev_step[e] = (int)evs[2 * e + 1]; }
            deadlock = f[CP_DEADLOCK] < 0 ? NONE : (uint32_t)f[CP_DEADLOCK];
            depth = (int)f[CP_DEPTH];
            expanded = (uint32_t)f[CP_EXPANDED];
            transitions = (uint64_t)f[CP_TRANSITIONS];
            if (f[CP_LSTART] > f[CP_LEND] || f[CP_LEND] != (int64_t)nstates) return 0;
            *level_start = (uint32_t)f[CP_LSTART];
            *level_end = (uint32_t)f[CP_LEND];
        }
    }
    cp_saved = nstates;
    return 1;
}
