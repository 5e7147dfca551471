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

__device__ __forceinline__ uint32_t smid() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

const int SMS = 132;
const int SMID_MAX = 256;  // %smid need not be below the SM count
const int CHUNK = 8;       // lines a warp claims at once

__global__ void who(unsigned* seen) {
    if (threadIdx.x == 0) seen[smid()] = 1;
}

// mode 0: read the lines, 1: write them whole, 2: probe (time each load),
// 3: write 8 bytes of each sector.
// Lines of SM rank s: s, s + SMS, s + 2 SMS, ... below `lines`.
__global__ void walk(uint32_t* a, uint64_t lines, int mode, int warps, const int* dense, unsigned* ctr,
                     uint32_t* lat, uint32_t* sink) {
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

struct Bufs {
    uint32_t *lat, *sink;
    unsigned* ctr;
    int* dense;
};

void pass(Bufs& m, uint32_t* buf, uint64_t bytes, int mode) {
    CK(cudaMemset(m.ctr, 0, SMS * sizeof(unsigned)));
    const int warps = mode == 2 ? 2 : 8;
    walk<<<SMS * 8, 256>>>(buf, bytes / 128, mode, warps, m.dense, m.ctr, m.lat, m.sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: victim OUT.csv\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "w");
    if (!f) return 1;
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
    if (getenv("VICTIM_POLLUTE")) {
        // Call 2: A (8 MiB) read, then s MiB of other lines read, written
        // whole or written 8 bytes a sector, then A probed.
        fprintf(f, "rep,pollute,s_mib,lines,unprobed");
        for (int i = 0; i < BINS; i++) fprintf(f, ",b%d", i * 50);
        fprintf(f, "\n");
        const char* names[] = {"read", "whole", "", "partial"};
        const int ps[] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64};
        const uint64_t lines = set / 128;
        std::vector<uint32_t> lat(lines);
        for (int rep = 0; rep < 2; rep++)
            for (int pol : {0, 1, 3})
                for (int s : ps) {
                    pass(m, flush, fl, 0);
                    pass(m, flush, fl, 0);
                    pass(m, abuf, set, 0);
                    if (s) pass(m, bbuf, s * MiB, pol);
                    CK(cudaMemset(m.lat, 0, lines * 4));
                    pass(m, abuf, set, 2);
                    CK(cudaMemcpy(lat.data(), m.lat, lines * 4, cudaMemcpyDeviceToHost));
                    std::vector<uint64_t> h(BINS, 0);
                    uint64_t unprobed = 0;
                    for (uint64_t i = 0; i < lines; i++) {
                        uint32_t v = lat[i] & 0x7fffffffu;
                        if (v == 0) {
                            unprobed++;
                            continue;
                        }
                        h[std::min<uint64_t>(v / 50, BINS - 1)]++;
                    }
                    fprintf(f, "%d,%s,%d,%llu,%llu", rep, names[pol], s, (unsigned long long)lines,
                            (unsigned long long)unprobed);
                    for (int i = 0; i < BINS; i++) fprintf(f, ",%llu", (unsigned long long)h[i]);
                    fprintf(f, "\n");
                    fflush(f);
                }
        fclose(f);
        return 0;
    }
    fprintf(f, "rep,seq,probe,s_mib,lines,unprobed");
    for (int i = 0; i < BINS; i++) fprintf(f, ",b%d", i * 50);
    fprintf(f, "\n");
    const char* seqs[] = {"WA", "AW", "RA"};
    const int ss[] = {0, 8, 16, 20, 24, 28, 32, 36, 40, 48, 64};
    const uint64_t lines = set / 128;
    std::vector<uint32_t> lat(lines);
    for (int rep = 0; rep < 2; rep++)
        for (int q = 0; q < 3; q++)
            for (int probe = 0; probe < 2; probe++)  // 0: A, 1: W
                for (int s : ss) {
                    pass(m, flush, fl, 0);
                    pass(m, flush, fl, 0);
                    const int wmode = q == 2 ? 0 : 1;
                    if (q == 1) {
                        pass(m, abuf, set, 0);
                        pass(m, wbuf, set, wmode);
                    } else {
                        pass(m, wbuf, set, wmode);
                        pass(m, abuf, set, 0);
                    }
                    if (s) pass(m, bbuf, s * MiB, 0);
                    CK(cudaMemset(m.lat, 0, lines * 4));
                    pass(m, probe ? wbuf : abuf, set, 2);
                    CK(cudaMemcpy(lat.data(), m.lat, lines * 4, cudaMemcpyDeviceToHost));
                    std::vector<uint64_t> h(BINS, 0);
                    uint64_t unprobed = 0;
                    for (uint64_t i = 0; i < lines; i++) {
                        uint32_t v = lat[i] & 0x7fffffffu;
                        if (v == 0) {
                            unprobed++;
                            continue;
                        }
                        h[std::min<uint64_t>(v / 50, BINS - 1)]++;
                    }
                    fprintf(f, "%d,%s,%s,%d,%llu,%llu", rep, seqs[q], probe ? "W" : "A", s,
                            (unsigned long long)lines, (unsigned long long)unprobed);
                    for (int i = 0; i < BINS; i++) fprintf(f, ",%llu", (unsigned long long)h[i]);
                    fprintf(f, "\n");
                    fflush(f);
                }
    fclose(f);
    return 0;
}
