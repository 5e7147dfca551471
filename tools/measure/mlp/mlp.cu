// Lines in flight per SM: how many distinct 128-byte lines one SM's loads
// (and stores) can have outstanding at once, by Little's law from the rate
// at which one SM moves lines when its warps ask for more than it allows.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o mlp mlp.cu
// Run:    ./mlp list            the cases, one per line
//         ./mlp time FILE.csv   per case, warm back-to-back batches timed
//                               with CUDA events
//         ./mlp ncu [FROM TO]   every case with u = 4 (or those of FROM..TO-1)
//                               launched once, kernels named k_*, meant to
//                               run under Nsight Compute; prints
//                               "CASE,<index>,<kind>,<where>,<grid>,<block>,<u>"
//                               before each launch.
//
// Kernel k_mlp<U, KIND>(a, out, base, iters): each thread runs `iters`
// trips of a loop that is not unrolled (#pragma unroll 1); a trip issues U
// independent accesses back to back and (loads) adds the U values into the
// thread's sum before the next trip, so a warp has U instructions in flight
// and a block of T threads asks for T * U lines (sector) or T / 32 * U
// lines (line) at once. Access k (= trip * U + j) of a thread, with N
// threads in the grid, g the thread's index and w = g / 32 its warp's:
//   sector  float a[(base + k * N + g) * 32]: every lane its own line, one
//           32-byte sector of it (32 lines a warp instruction);
//   line    float a[(base + k * N / 32 + w) * 32 + lane]: a warp reads one
//           whole line (4 sectors);
//   store   a[(base + k * N + g) * 32] = trip (as sector, stores: nothing
//           waits for them, so a warp has as many in flight as it can issue).
// where:
//   dram  each launch starts `base` past the last one's lines, cycling over
//         a 4 GiB buffer: no line is in the L2 (nor L1) when loaded;
//   l2    base = 0 every launch: after the warm-up launches the lines are in
//         the L2 (the footprint is at most 4 MiB of sectors, 4 MiB of lines
//         for `line`), not in the L1 (16 MiB of addresses a launch for
//         `sector`, past its 256 KiB).
// grid 1 (one SM) or the SMs (132, one block each). Lines a launch: 2^15
// for one SM, 2^13 per SM for all (iters = that / lines a trip, at least 4
// and 2). Block T in {32, ..., 1024}, U in {1, ..., 32}; `empty` (iters 0)
// times the launch alone.
//
// Then k_st<SHAPE> (below): stores of 32 lines x 1 sector (4 bytes of it),
// 4 x 1 whole sector, 2 x 2 and 1 x 4 per warp instruction (and, added for
// the third run, 16 x 1 whole sector and 32 x 16 bytes of one with 16-byte
// stores, and 4 lines x 2 half-written sectors), 2^17 sectors an
// SM, blocks of 1024 on 1, 2, 4, ... 132 SMs: how fast one SM sends store
// requests and sectors, and where the whole GPU's store rate takes over;
// and k_mask<U>: sector loads of one block of 16 warps with only some warps
// running (warps 0 and 1 on two sub-partitions, 0 and 4 on one): whether
// a warp's limit on lines in flight is its own or its sub-partition's.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../warm.cuh"

static const uint64_t GiB = 1ull << 30;
static const uint64_t A_BYTES = 4 * GiB;
static const uint64_t A_LINES = A_BYTES / 128;

template <int U, int KIND>
__global__ void k_mlp(float *a, float *out, uint64_t base, int iters) {
    const uint64_t n = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t per_k = KIND == 1 ? n / 32 : n;
    const uint64_t me = KIND == 1 ? g / 32 : g;
    const uint64_t lane = KIND == 1 ? (threadIdx.x & 31) : 0;
    float s = 0.0f;
#pragma unroll 1
    for (int it = 0; it < iters; it++) {
        float v[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            uint64_t k = (uint64_t)it * U + j;
            uint64_t idx = (base + k * per_k + me) * 32 + lane;
            if (KIND == 2)
                a[idx] = (float)it;
            else
                v[j] = a[idx];
        }
        if (KIND != 2) {
#pragma unroll
            for (int j = 0; j < U; j++) s += v[j];
        }
    }
    if (KIND != 2 && s == 12345.0f) out[0] = s;
}

// Stores of four shapes, four instructions a trip, nothing waiting for
// them: a warp instruction (lane l, warp w of NW in the grid, access k)
// writes, by SHAPE,
//   0  32 lines, 4 bytes of one sector each:  line k*NW*32 + w*32 + l, word 0
//   1  4 lines, one whole sector each:        line k*NW*4 + w*4 + l/8, word l%8
//   2  2 lines, two whole sectors each:       line k*NW*2 + w*2 + l/16, word l%16
//   3  1 line, all four sectors:              line k*NW + w, word l
//   4  16 lines, one whole sector each, 16-byte stores (two lanes a sector)
//   5  32 lines, 16 bytes of one sector each (16-byte stores)
//   6  4 lines, every other word of two sectors each (8 lanes a line)
// the line number taken modulo `lmask + 1` lines (a power of two) past `base`.
template <int SHAPE>
__global__ void k_st(float *a, uint64_t base, uint64_t lmask, int iters) {
    const uint64_t nw = (uint64_t)gridDim.x * blockDim.x / 32;
    const uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const unsigned l = threadIdx.x & 31;
    // Lines an instruction touches, and lanes a line.
    const unsigned per = SHAPE == 0 ? 32 : SHAPE == 1 ? 4 : SHAPE == 2 ? 2 : SHAPE == 3 ? 1 : SHAPE == 4 ? 16 : SHAPE == 5 ? 32 : 4;
    const unsigned lanes = 32 / per;
#pragma unroll 1
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint64_t k = (uint64_t)it * 4 + j;
            uint64_t line = (base + k * nw * per + w * per + l / lanes) & lmask;
            unsigned i = l % lanes;
            if (SHAPE == 4 || SHAPE == 5) {
                // 16 bytes a lane: two lanes fill a sector (4), or one lane
                // writes half of one (5).
                reinterpret_cast<float4 *>(a)[line * 8 + i] = make_float4(1.5f, 1.5f, 1.5f, 1.5f);
            } else if (SHAPE == 6) {
                // Every other word of two sectors.
                a[line * 32 + 2 * i] = 1.5f;
            } else {
                a[line * 32 + (SHAPE == 0 ? 0 : i)] = 1.5f;
            }
        }
    }
}

// Sector loads as k_mlp<U, 0>, one block, only the warps whose bit is set
// in `mask` running (warp w on sub-partition w % 4): whether a warp's
// limit on lines in flight belongs to the warp or to its sub-partition.
template <int U>
__global__ void k_mask(float *a, float *out, uint64_t base, int iters, unsigned mask) {
    if (!((mask >> (threadIdx.x / 32)) & 1)) return;
    const uint64_t n = blockDim.x;
    const uint64_t g = threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int it = 0; it < iters; it++) {
        float v[U];
#pragma unroll
        for (int j = 0; j < U; j++) v[j] = a[(base + ((uint64_t)it * U + j) * n + g) * 32];
#pragma unroll
        for (int j = 0; j < U; j++) s += v[j];
    }
    if (s == 12345.0f) out[0] = s;
}

static float *A, *OUT;
static int SMS;

struct Case {
    std::string kind;   // sector, line, store, empty
    std::string where;  // dram, l2
    unsigned grid, block, u;
    int iters;
    uint64_t lines;  // a launch's lines (st*: line requests; mask: lines)
    unsigned shape;  // st*: SHAPE; mask: the warps' mask
};

static const char *KINDS[] = {"sector", "line", "store"};

static std::vector<Case> cases() {
    std::vector<Case> v;
    v.push_back(Case{"empty", "-", 1, 32, 1, 0, 0, 0});
    v.push_back(Case{"empty", "-", (unsigned)SMS, 1024, 1, 0, 0, 0});
    for (int kind = 0; kind < 3; kind++)
        for (int where = 0; where < 3; where++) {
            // where 0: one SM, dram; 1: one SM, l2; 2: every SM, dram.
            unsigned grid = where == 2 ? SMS : 1;
            uint64_t target = where == 2 ? (1u << 13) : (1u << 15);
            int min_iters = where == 2 ? 2 : 4;
            for (unsigned t : {32u, 64u, 128u, 256u, 512u, 1024u})
                for (unsigned u : {1u, 2u, 4u, 8u, 16u, 32u}) {
                    // (79 registers a thread: no block of 1024)
                    if (kind == 1 && u == 32 && t == 1024) continue;
                    uint64_t trip = kind == 1 ? t / 32 * u : (uint64_t)t * u;
                    int iters = (int)std::max<uint64_t>(min_iters, target / trip);
                    uint64_t lines = trip * iters * grid;
                    v.push_back(Case{KINDS[kind], where == 1 ? "l2" : "dram", grid, t, u, iters, lines, 0});
                }
        }
    // Store shapes: 2^17 sectors an SM a launch, blocks of 1024, on 1 to
    // all SMs; `l2`: into an 8 MiB window (resident), `dram`: cycling.
    static const char *ST[] = {"st32x1", "st4x1", "st2x2", "st1x4", "st16x1v", "st32x1v", "st4x2h"};
    for (unsigned shape = 0; shape < 7; shape++) {
        unsigned per = shape == 0 ? 32 : shape == 1 ? 4 : shape == 2 ? 2 : shape == 3 ? 1 : shape == 4 ? 16 : shape == 5 ? 32 : 4;
        unsigned sectors = shape == 0 || shape == 5 ? 32 : shape == 4 ? 16 : shape == 6 ? 8 : 4;
        int iters = (int)((1u << 17) / (32 * 4 * sectors));
        for (unsigned g : {1u, 2u, 4u, 8u, 16u, 33u, 66u, (unsigned)SMS})
            v.push_back(Case{ST[shape], "l2", g, 1024, 4, iters, (uint64_t)g * 32 * 4 * per * iters, shape});
        for (unsigned g : {1u, (unsigned)SMS})
            v.push_back(Case{ST[shape], "dram", g, 1024, 4, iters, (uint64_t)g * 32 * 4 * per * iters, shape});
    }
    // Warp masks of one block of 512 (16 warps), sector loads.
    for (unsigned m : {0x1u, 0x3u, 0x5u, 0x11u, 0x101u, 0xFu, 0x1111u, 0xFFu, 0xFFFFu})
        for (unsigned u : {16u, 32u})
            for (int where = 0; where < 2; where++) {
                unsigned active = __builtin_popcount(m);
                int iters = (int)std::max<uint64_t>(4, (1u << 15) / (active * 32 * u));
                v.push_back(Case{"mask", where ? "l2" : "dram", 1, 512, u, iters, (uint64_t)active * 32 * u * iters, m});
            }
    return v;
}

static uint64_t launches = 0;

template <int KIND>
static void launch_k(const Case &c, uint64_t base) {
    switch (c.u) {
        case 1: k_mlp<1, KIND><<<c.grid, c.block>>>(A, OUT, base, c.iters); break;
        case 2: k_mlp<2, KIND><<<c.grid, c.block>>>(A, OUT, base, c.iters); break;
        case 4: k_mlp<4, KIND><<<c.grid, c.block>>>(A, OUT, base, c.iters); break;
        case 8: k_mlp<8, KIND><<<c.grid, c.block>>>(A, OUT, base, c.iters); break;
        case 16: k_mlp<16, KIND><<<c.grid, c.block>>>(A, OUT, base, c.iters); break;
        default: k_mlp<32, KIND><<<c.grid, c.block>>>(A, OUT, base, c.iters); break;
    }
}

static void launch(const Case &c) {
    uint64_t base = 0;
    // Lines the case's addresses span (mask: holes for the idle warps).
    uint64_t span = c.kind == "mask" ? (uint64_t)c.u * c.iters * c.block : c.lines;
    if (c.where == "dram") {
        // Past the last launch's lines, cycling over the buffer.
        uint64_t slots = A_LINES / std::max<uint64_t>(span, 1);
        base = (launches % std::max<uint64_t>(slots, 1)) * span;
    }
    launches++;
    if (c.kind == "mask") {
        if (c.u == 16)
            k_mask<16><<<1, c.block>>>(A, OUT, base, c.iters, c.shape);
        else
            k_mask<32><<<1, c.block>>>(A, OUT, base, c.iters, c.shape);
    } else if (c.kind.rfind("st", 0) == 0 && c.kind != "store") {
        // 8 MiB window in the L2, or the whole buffer.
        uint64_t lmask = c.where == "l2" ? (8ull << 20) / 128 - 1 : A_LINES - 1;
        switch (c.shape) {
            case 0: k_st<0><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
            case 1: k_st<1><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
            case 2: k_st<2><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
            case 3: k_st<3><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
            case 4: k_st<4><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
            case 5: k_st<5><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
            default: k_st<6><<<c.grid, c.block>>>(A, base, lmask, c.iters); break;
        }
    } else if (c.kind == "line")
        launch_k<1>(c, base);
    else if (c.kind == "store")
        launch_k<2>(c, base);
    else
        launch_k<0>(c, base);
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    SMS = prop.multiProcessorCount;
    std::vector<Case> all = cases();
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++)
            printf("%zu,%s,%s,%u,%u,%u,%d,%llu,%u\n", i, all[i].kind.c_str(), all[i].where.c_str(), all[i].grid,
                   all[i].block, all[i].u, all[i].iters, (unsigned long long)all[i].lines, all[i].shape);
        return 0;
    }
    printf("# device: %s, %d SMs, L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
    CK(cudaMalloc(&A, A_BYTES));
    CK(cudaMalloc(&OUT, 4096));
    CK(cudaMemset(A, 0, A_BYTES));
    CK(cudaDeviceSynchronize());
    if (mode == "ncu") {
        bool range = argc > 3;
        size_t from = range ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = range ? strtoull(argv[3], nullptr, 10) : all.size();
        for (size_t i = from; i < std::min(to, all.size()); i++) {
            const Case &c = all[i];
            if (!range && c.u != 4) continue;
            printf("CASE,%zu,%s,%s,%u,%u,%u\n", i, c.kind.c_str(), c.where.c_str(), c.grid, c.block, c.u);
            fflush(stdout);
            launch(c);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
        }
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: mlp list | time FILE.csv [FROM] | ncu [FROM TO]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "index,kind,where,grid,block,u,iters,lines,shape,warm_ns,warm_min_ns,warm_max_ns,launches_per_batch\n");
    size_t first = argc > 3 ? strtoull(argv[3], nullptr, 10) : 0;
    for (size_t i = first; i < all.size(); i++) {
        const Case &c = all[i];
        WarmTime w = warm_batches([&] { launch(c); });
        fprintf(f, "%zu,%s,%s,%u,%u,%u,%d,%llu,%u,%.1f,%.1f,%.1f,%d\n", i, c.kind.c_str(), c.where.c_str(), c.grid,
                c.block, c.u, c.iters, (unsigned long long)c.lines, c.shape, w.med_ns, w.min_ns, w.max_ns,
                w.per_batch);
        fflush(f);
        printf("%3zu %-6s %-4s grid %3u T %4u u %2u iters %5d lines %8llu  warm %10.1f ns  %.3f lines/ns\n", i,
               c.kind.c_str(), c.where.c_str(), c.grid, c.block, c.u, c.iters, (unsigned long long)c.lines, w.med_ns,
               c.lines / w.med_ns);
        fflush(stdout);
    }
    fclose(f);
    return 0;
}
