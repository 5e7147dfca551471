// Which line the H200's L2 gives up first: the least recently used one, or
// a clean one before a dirty one?
//
// Build:  nvcc -O3 -arch=sm_90 -o victim victim.cu
// Run:    ./victim OUT.csv
//
// Each case: the L2 is emptied (256 MiB of other data read twice); two
// sets of 8 MiB, W and A, are touched one after the other in the order
// `seq` says, W written whole (dirty) or read (clean), A read; then s MiB of
// other lines (B) are read; then every line of one of the two sets (`probe`)
// is loaded once more by one warp, which times the load with clock64 (from
// before it to the first use of its value). Per case the histogram of those
// latencies in 50-cycle bins: about 300-350 cycles is a hit in the SM's own
// partition, 550 or more a line that partition no longer holds
// (../l2repl/README.md).
//
//   seq WA: W written, then A read.   LRU gives up W first (the older);
//                                     a cache that spares dirty lines, A.
//   seq AW: A read, then W written.   Both give up A first (control).
//   seq RA: W read, then A read.      Both clean: LRU gives up W first
//                                     (control for WA without the dirt).
//
// Call 3 (VICTIM_RW=1, call3.sh) asks the same of lines read and then
// written in part, as seed 002's stride kernel leaves them: do they take
// more of the L2 than lines read (other lines touched that way before a
// probed set), and is the older set still given up first (W read then
// written 8 bytes a sector, A read)? `victim ncu` walks 16 and 64 MiB in
// each way once for Nsight Compute.
//
// Every line is touched by a warp of the same SM in every phase (warps
// claim their SM's lines through a per-SM counter), so a line's near and
// far copies are the same in each phase. All loads are ld.global.cg (L2
// only), the stores plain and whole lines (the L1 does not keep them).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

const int SMS = 132;
const int SMID_MAX = 256;  // %smid need not be below the SM count
const int CHUNK = 8;       // lines a warp claims at once

__global__ void who(unsigned* seen) {
    if (threadIdx.x == 0) seen[smid()] = 1;
}

// mode 0: read the lines, 1: write them whole, 2: probe (time each load),
// 3: write 8 bytes of each sector, 4: read each line, then write 8 bytes
// of each of its sectors (the value read plus one: seed 002's kernels at
// large strides), 5: read each line, then write it whole (the same),
// 6-8: one sector of each line (below), 9 and 10: a line a lane (below).
// Lines of SM rank s: s, s + SMS, s + 2 SMS, ... below `lines`.
__device__ __forceinline__ void walk_body(uint32_t* a, uint64_t lines, int mode, int warps, const int* dense,
                                          unsigned* ctr, uint32_t* lat, uint32_t* sink) {
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (w >= warps) return;
    const int d = dense[smid()];
    if (d < 0) return;
    const uint32_t s = d;
    const uint64_t mine = s < lines ? (lines - s + SMS - 1) / SMS : 0;
    uint32_t acc = 0;
    for (;;) {
        unsigned c = 0;
        if (lane == 0) c = atomicAdd(ctr + s, 1);
        c = __shfl_sync(0xffffffffu, c, 0);
        if (mode >= 9) {
            // One line a lane, 32 lines a warp instruction, as seed 002's
            // stride kernel at large strides: each lane loads the first 8
            // bytes of its line with a plain load (cached in the L1 as the
            // kernel's are), and in mode 9 stores them back plus one.
            const uint64_t k = (uint64_t)c * 32 + lane;
            if ((uint64_t)c * 32 >= mine) break;
            if (k < mine) {
                uint64_t* q = (uint64_t*)(a + (s + k * SMS) * 32);
                uint64_t v = *q;
                acc += (uint32_t)v;
                if (mode == 9) *q = v + 1;
            }
            continue;
        }
        const uint64_t k0 = (uint64_t)c * CHUNK;
        if (k0 >= mine) break;
        for (uint64_t k = k0; k < k0 + CHUNK && k < mine; k++) {
            const uint64_t line = s + k * SMS;
            uint32_t* p = a + line * 32 + lane;
            if (mode == 0) {
                acc += ld_cg(p);
            } else if (mode == 1) {
                *p = (uint32_t)line;
            } else if (mode == 3) {
                // The first 8 bytes of each 32-byte sector: a partial write.
                if ((lane & 7) < 2) *p = (uint32_t)line;
            } else if (mode >= 6 && mode <= 8) {
                // One sector of the line (lanes 0-7): read (6), read then 8
                // bytes of it written (7), as (7) with a volatile load (8:
                // LDG.E.STRONG.SYS, not kept in the L1; call 4's CSV names it
                // "plain", call 5 has the plain load): one line per sector,
                // as seed 002's kernels at large strides touch them.
                if (lane < 8) {
                    uint32_t v = mode == 8 ? *(volatile uint32_t*)p : ld_cg(p);
                    acc += v;
                    if (mode != 6 && lane < 2) *p = v + 1;
                }
            } else if (mode == 4 || mode == 5) {
                // The store waits for the load's value, as a[i] = a[i] + 1.
                uint32_t v = ld_cg(p);
                if (mode == 5 || (lane & 7) < 2) *p = v + 1;
            } else {
                long long t0 = clk();
                uint32_t v = ld_cg(p);
                acc += v;
                uint32_t use = __reduce_add_sync(0xffffffffu, v);
                long long t1 = clk();
                if (lane == 0) lat[line] = (uint32_t)(t1 - t0) | (use == 0xdeadbeefu ? 1u << 31 : 0u);
            }
        }
    }
    if (acc == 0xdeadbeefu) sink[threadIdx.x] = acc;
}

__global__ void walk(uint32_t* a, uint64_t lines, int mode, int warps, const int* dense, unsigned* ctr,
                     uint32_t* lat, uint32_t* sink) {
    walk_body(a, lines, mode, warps, dense, ctr, lat, sink);
}

// The same walk under another name, for the passes Nsight Compute profiles
// (call 3, `victim ncu`); the flushes stay `walk`.
__global__ void k_walk(uint32_t* a, uint64_t lines, int mode, int warps, const int* dense, unsigned* ctr,
                       uint32_t* lat, uint32_t* sink) {
    walk_body(a, lines, mode, warps, dense, ctr, lat, sink);
}

struct Bufs {
    uint32_t *lat, *sink;
    unsigned* ctr;
    int* dense;
};

void pass(Bufs& m, uint32_t* buf, uint64_t bytes, int mode, bool profiled = false) {
    CK(cudaMemset(m.ctr, 0, SMS * sizeof(unsigned)));
    const int warps = mode == 2 ? 2 : 8;
    if (profiled)
        k_walk<<<SMS * 8, 256>>>(buf, bytes / 128, mode, warps, m.dense, m.ctr, m.lat, m.sink);
    else
        walk<<<SMS * 8, 256>>>(buf, bytes / 128, mode, warps, m.dense, m.ctr, m.lat, m.sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

// One probe of `lines` lines: the histogram of their latencies in `bins`
// 50-cycle bins (the last one open), after the count of lines not probed.
void histogram(FILE* f, Bufs& m, std::vector<uint32_t>& lat, uint64_t lines, int bins) {
    CK(cudaMemcpy(lat.data(), m.lat, lines * 4, cudaMemcpyDeviceToHost));
    std::vector<uint64_t> h(bins, 0);
    uint64_t unprobed = 0;
    for (uint64_t i = 0; i < lines; i++) {
        uint32_t v = lat[i] & 0x7fffffffu;
        if (v == 0) {
            unprobed++;
            continue;
        }
        h[std::min<uint64_t>(v / 50, bins - 1)]++;
    }
    fprintf(f, ",%llu,%llu", (unsigned long long)lines, (unsigned long long)unprobed);
    for (int i = 0; i < bins; i++) fprintf(f, ",%llu", (unsigned long long)h[i]);
    fprintf(f, "\n");
    fflush(f);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: victim OUT.csv [OUT2.csv] | victim ncu\n");
        return 2;
    }
    const bool ncu = !strcmp(argv[1], "ncu");
    FILE* f = ncu ? nullptr : fopen(argv[1], "w");
    if (!ncu && !f) return 1;
    const uint64_t MiB = 1ull << 20;
    const uint64_t set = 8 * MiB, bmax = 64 * MiB, fl = 256 * MiB;
    Bufs m;
    uint32_t *wbuf, *abuf, *bbuf, *flush;
    CK(cudaMalloc(&wbuf, set));
    CK(cudaMalloc(&abuf, set));
    CK(cudaMalloc(&bbuf, bmax));
    CK(cudaMalloc(&flush, fl));
    CK(cudaMalloc(&m.lat, set / 128 * 4));
    CK(cudaMalloc(&m.sink, 4096));
    CK(cudaMalloc(&m.ctr, SMS * sizeof(unsigned)));
    unsigned* seen;
    CK(cudaMalloc(&seen, SMID_MAX * sizeof(unsigned)));
    CK(cudaMemset(seen, 0, SMID_MAX * sizeof(unsigned)));
    for (int i = 0; i < 4; i++) who<<<SMS * 16, 64>>>(seen);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> hs(SMID_MAX);
    CK(cudaMemcpy(hs.data(), seen, SMID_MAX * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::vector<int> dn(SMID_MAX, -1);
    int nsm = 0;
    for (int i = 0; i < SMID_MAX; i++)
        if (hs[i]) dn[i] = nsm++;
    if (nsm != SMS) {
        fprintf(stderr, "expected %d SMs, saw %d\n", SMS, nsm);
        return 1;
    }
    CK(cudaMalloc(&m.dense, SMID_MAX * sizeof(int)));
    CK(cudaMemcpy(m.dense, dn.data(), SMID_MAX * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemset(wbuf, 1, set));
    CK(cudaMemset(abuf, 1, set));
    CK(cudaMemset(bbuf, 1, bmax));
    CK(cudaMemset(flush, 1, fl));
    const int BINS = 40;  // 50-cycle bins, the last one open
    if (ncu) {
        // Call 3 under Nsight Compute (one cold launch each, `k_walk`): s MiB
        // of lines read, read then written 8 bytes a sector, read then
        // written whole, and written 8 bytes a sector.
        const bool sector = getenv("VICTIM_SECTOR") != nullptr;
        const bool stream = getenv("VICTIM_STREAM") != nullptr;
        for (int mode : stream   ? std::vector<int>{10, 9}
                        : sector ? std::vector<int>{6, 7, 8}
                                 : std::vector<int>{0, 4, 5, 3})
            for (int s : {16, 64})
                pass(m, bbuf, s * MiB, mode, true);
        return 0;
    }
    const uint64_t lines = set / 128;
    std::vector<uint32_t> lat(lines);
    // The header of a probe CSV whose cases are named by `keys`.
    auto header = [&](FILE* out, const char* keys) {
        fprintf(out, "rep,%s,s_mib,lines,unprobed", keys);
        for (int i = 0; i < BINS; i++) fprintf(out, ",b%d", i * 50);
        fprintf(out, "\n");
    };
    // Calls 2-5: A (8 MiB) read, then s MiB of other lines walked in each
    // mode of `modes` (with its name), then A probed; twice over.
    auto pollute = [&](FILE* out, const std::vector<std::pair<int, const char*>>& modes,
                       const std::vector<int>& ps) {
        header(out, "pollute");
        for (int rep = 0; rep < 2; rep++)
            for (const auto& [pol, name] : modes)
                for (int s : ps) {
                    pass(m, flush, fl, 0);
                    pass(m, flush, fl, 0);
                    pass(m, abuf, set, 0);
                    if (s) pass(m, bbuf, s * MiB, pol);
                    CK(cudaMemset(m.lat, 0, lines * 4));
                    pass(m, abuf, set, 2);
                    fprintf(out, "%d,%s,%d", rep, name, s);
                    histogram(out, m, lat, lines, BINS);
                }
        fclose(out);
    };
    // Calls 1 and 3: the sets W (walked in mode `wmode`) and A (read) in
    // the order a sequence says, then s MiB of other lines read, then W or
    // A probed; twice over.
    struct Seq {
        const char* name;
        int wmode;
        bool a_first;
    };
    auto order = [&](FILE* out, const std::vector<Seq>& seqs) {
        header(out, "seq,probe");
        const int ss[] = {0, 8, 16, 20, 24, 28, 32, 36, 40, 48, 64};
        for (int rep = 0; rep < 2; rep++)
            for (const Seq& q : seqs)
                for (int probe = 0; probe < 2; probe++)  // 0: A, 1: W
                    for (int s : ss) {
                        pass(m, flush, fl, 0);
                        pass(m, flush, fl, 0);
                        if (q.a_first) {
                            pass(m, abuf, set, 0);
                            pass(m, wbuf, set, q.wmode);
                        } else {
                            pass(m, wbuf, set, q.wmode);
                            pass(m, abuf, set, 0);
                        }
                        if (s) pass(m, bbuf, s * MiB, 0);
                        CK(cudaMemset(m.lat, 0, lines * 4));
                        pass(m, probe ? wbuf : abuf, set, 2);
                        fprintf(out, "%d,%s,%s,%d", rep, q.name, probe ? "W" : "A", s);
                        histogram(out, m, lat, lines, BINS);
                    }
        fclose(out);
    };
    const std::vector<int> fine = {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64};
    const std::vector<int> wide = {0, 8, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64};
    if (getenv("VICTIM_STREAM")) {
        // Call 5: as call 4, with other lines touched as seed 002's stride
        // kernel touches them: a line a lane, 8 bytes of each loaded with a
        // plain load (10), then stored back (9); and whole lines read (0).
        pollute(f, {{0, "read"}, {10, "lane_read"}, {9, "lane_read_write"}}, wide);
        return 0;
    }
    if (getenv("VICTIM_SECTOR")) {
        // Call 4: as call 3's file 1, with other lines touched one sector
        // each: read (6), read then written 8 bytes (7), the same with a
        // volatile load (8, named "plain"), and whole lines read (0).
        pollute(f,
                {{0, "read"}, {6, "sector_read"}, {7, "sector_read_partial"}, {8, "sector_plain_read_partial"}},
                wide);
        return 0;
    }
    if (getenv("VICTIM_RW")) {
        // Call 3, file 1 (argv[1]): A (8 MiB) read, then s MiB of other lines
        // read (0), read then written 8 bytes a sector (4), read then written
        // whole (5) or written 8 bytes a sector (3), then A probed: does a
        // line read and then written in part take more of the L2 than one
        // read?
        pollute(f, {{0, "read"}, {4, "read_partial"}, {5, "read_whole"}, {3, "partial"}}, fine);
        // File 2 (argv[2]): W (8 MiB) read then written 8 bytes a sector and
        // A (8 MiB) read, in the order PA or AP, then s MiB of other lines
        // read, then W or A probed: is the older set given up first, as
        // with W written whole (call 1), or are lines read and then written
        // in part kept before clean ones?
        FILE* g = fopen(argc > 2 ? argv[2] : "order.csv", "w");
        if (!g) return 1;
        order(g, {{"PA", 4, false}, {"AP", 4, true}});
        return 0;
    }
    if (getenv("VICTIM_POLLUTE")) {
        // Call 2: A (8 MiB) read, then s MiB of other lines read, written
        // whole or written 8 bytes a sector, then A probed.
        pollute(f, {{0, "read"}, {1, "whole"}, {3, "partial"}}, fine);
        return 0;
    }
    // Call 1: W written whole (WA, AW) or read (RA), A read.
    order(f, {{"WA", 1, false}, {"AW", 1, true}, {"RA", 0, false}});
    return 0;
}
