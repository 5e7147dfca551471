// Which lines the H200's L2 keeps: a resident set, then other lines, then
// which of the resident lines are still there.
//
// Build:  nvcc -O3 -arch=sm_90 -o l2repl l2repl.cu
// Run:    ./l2repl OUT.csv
//
// Each case: the L2 is emptied (256 MiB of other data read twice); the
// resident set A (r MiB) is read `touches` times; then s MiB of other lines
// (B) are read, or written whole (128 bytes per warp, no loads); then every
// line of A is loaded once more by one warp, which times the load with
// clock64 (from before it to the first use of its value). A load that
// hits in the L2 takes about 281 cycles (near partition) or 524-540 (far);
// one that goes to DRAM 670 or more (tools/measure/dlat). Per case the
// histogram of those latencies in 50-cycle bins.
//
// Every line is touched by a warp of the same SM in every phase (warps
// claim their SM's lines through a per-SM counter), so a line's near and
// far copies are the same in the fill and the probe. All loads are
// ld.global.cg (L2 only), the stores plain (the L1 does not keep them).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

const int SMS = 132;
const int SMID_MAX = 256;  // %smid need not be below the SM count: SMs are numbered on the whole die
const int CHUNK = 8;       // lines a warp claims at once

// Marks the %smid of every SM that runs a block.
__global__ void who(unsigned* seen) {
    if (threadIdx.x == 0) seen[smid()] = 1;
}

// mode 0: read the lines, 1: write them whole, 2: probe (time each load).
// Lines of SM s: s, s + SMS, s + 2 SMS, ... below `lines`; `warps`: the
// warps of each block that work.
// `dense`: each %smid's number among the SMs, 0..SMS-1.
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
            } else {
                long long t0 = clk();
                uint32_t v = ld_cg(p);
                acc += v;
                // The first use of v: the clock read waits for it.
                uint32_t use = __reduce_add_sync(0xffffffffu, v);
                long long t1 = clk();
                if (lane == 0) lat[line] = (uint32_t)(t1 - t0) | (use == 0xdeadbeefu ? 1u << 31 : 0u);
            }
        }
    }
    if (acc == 0xdeadbeefu) sink[threadIdx.x] = acc;
}

struct Bufs {
    uint32_t *a, *b, *flush, *lat, *sink;
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
        fprintf(stderr, "usage: l2repl OUT.csv\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "w");
    if (!f) return 1;
    const uint64_t MiB = 1ull << 20;
    const uint64_t amax = 32 * MiB, bmax = 512 * MiB, fl = 256 * MiB;
    Bufs m;
    CK(cudaMalloc(&m.a, amax));
    CK(cudaMalloc(&m.b, bmax));
    CK(cudaMalloc(&m.flush, fl));
    CK(cudaMalloc(&m.lat, amax / 128 * 4));
    CK(cudaMalloc(&m.sink, 4096));
    CK(cudaMalloc(&m.ctr, SMS * sizeof(unsigned)));
    // The SMs' numbers: which %smid values run blocks.
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
    fprintf(stderr, "SMs seen: %d (highest smid %d)\n", nsm, nsm ? (int)(std::find_if(hs.rbegin(), hs.rend(), [](unsigned x) { return x != 0; }).base() - hs.begin()) - 1 : -1);
    if (nsm != SMS) {
        fprintf(stderr, "expected %d SMs\n", SMS);
        return 1;
    }
    CK(cudaMalloc(&m.dense, SMID_MAX * sizeof(int)));
    CK(cudaMemcpy(m.dense, dn.data(), SMID_MAX * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemset(m.a, 1, amax));
    CK(cudaMemset(m.b, 1, bmax));
    CK(cudaMemset(m.flush, 1, fl));
    const int BINS = 40;  // 50-cycle bins, the last one open
    fprintf(f, "rep,r_mib,touches,pollute,s_mib,lines,unprobed");
    for (int i = 0; i < BINS; i++) fprintf(f, ",b%d", i * 50);
    fprintf(f, "\n");
    const int rs[] = {8, 24};
    const int ss[] = {0, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512};
    std::vector<uint32_t> lat(amax / 128);
    for (int rep = 0; rep < 2; rep++)
        for (int r : rs)
            for (int touches = 1; touches <= 2; touches++)
                for (int pol = 0; pol < 2; pol++)
                    for (int s : ss) {
                        if (rep == 1 && s > 192) continue;
                        const uint64_t lines = r * MiB / 128;
                        pass(m, m.flush, fl, 0);
                        pass(m, m.flush, fl, 0);
                        for (int t = 0; t < touches; t++) pass(m, m.a, r * MiB, 0);
                        if (s) pass(m, m.b, s * MiB, pol);
                        CK(cudaMemset(m.lat, 0, lines * 4));
                        pass(m, m.a, r * MiB, 2);
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
                        fprintf(f, "%d,%d,%d,%s,%d,%llu,%llu", rep, r, touches, pol ? "write" : "read", s,
                                (unsigned long long)lines, (unsigned long long)unprobed);
                        for (int i = 0; i < BINS; i++) fprintf(f, ",%llu", (unsigned long long)h[i]);
                        fprintf(f, "\n");
                        fflush(f);
                    }
    fclose(f);
    return 0;
}
