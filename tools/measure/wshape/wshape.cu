// Which sectors of a line a DRAM-bound store kernel writes, at the same
// bytes: does a dirty sector whose 64-byte neighbour is clean cost the
// DRAM as much as the pair?
//
// Seed 002's stride kernel at 256 MiB is 13-30% slower on the H200 than
// in gpusim at float strides 10-32 and double strides 5-32 (DEVIATIONS.md
// 2), with gpusim's DRAM bytes within 2-8% of the H200's
// (tools/measure/l2hits, `big`). Its write-backs there are one or two
// lone sectors a line (float stride 16: sectors 0 and 2). These kernels
// write whole sectors (eight threads, four bytes each) of every 128-byte
// line of a 1 GiB buffer, chosen by a mask of the line's four sectors:
//
//   1111 every sector (the reference stream)
//   0011 sectors 0 and 1: one whole 64-byte half a line
//   0101 sectors 0 and 2: two lone sectors a line, the same bytes as 0011
//   0110 sectors 1 and 2: two lone sectors, neighbours across the halves
//   0001 sector 0 alone
//   1001 sectors 0 and 3: lone, at the two ends
//
// each write-only (`wo`: a[i] = 1.5f) and after a load of the same element
// (`rw`: a[i] = a[i] + 1, the seed's kernel shape, the load fetching the
// sector's 64-byte half). Nothing is read by `wo`, so the DRAM reads are
// the L2's fills alone. `wo` and `rw` give each sector eight threads (a
// warp instruction touches 4 sectors); `rw1` gives each kept sector one
// thread, which loads and stores the sector's first word (a warp
// instruction touches 32 sectors, as seed 002's stride kernel at float
// strides 8 and up: mask 0101 is its float stride 16, 0001 its stride 32);
// `ro1` the same threads' loads alone (a store that never happens keeps
// them: the buffer holds zeros).
//
// Two store-only modes (added for the third call) ask the same of lines
// the L2 never held, where nothing fetched a kept sector's 64-byte
// neighbour: `st16` writes each kept sector whole with two threads of 16
// bytes (a warp instruction touches 16 sectors), `st4` the sector's first
// word with one thread (a partly written sector, completed from DRAM; 32
// sectors a warp instruction). If a lone dirty sector costs its 64-byte
// unit whatever the L2 holds, mask 0101 takes as long as 1111 there, as it
// does for `rw1`; if only the atoms the L2 holds take a slot, as long as
// 0011.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o wshape wshape.cu
// Run:    ./wshape list          the cases, one per line
//         ./wshape ncu [REPS] [MODES]
//                                every case launched REPS (1) times after
//                                its buffer is set to zero; kernels are
//                                named k_*; meant to run under Nsight
//                                Compute. Prints
//                                "CASE,<index>,<mode>,<mask>,<grid>,<block>,<rep>"
//                                before each launch.
//         ./wshape time [REPS] [MODES]
//                                every case: REPS (5) batches of 10
//                                back-to-back launches timed with CUDA
//                                events (after one untimed launch); prints
//                                "TIME,<index>,<mode>,<mask>,<batch>,<ms per launch>"
//         MODES: a comma-separated list (e.g. st16,st4,rw1): only the cases
//         of those modes (every mode if absent); indices stay those of list

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t BYTES = 1024 * MiB;
static const unsigned LINES = BYTES / 128;

// The float index of thread t: its sector is the (t / 8)-th kept sector
// of the buffer in address order, t % 8 its word in it.
__device__ __forceinline__ unsigned idx(unsigned t, unsigned mask, unsigned per_line) {
    unsigned g = t >> 3, line = g / per_line, j = g % per_line, s = 0;
    // the j-th set bit of mask
    for (unsigned m = mask;; m &= m - 1) {
        s = __ffs(m) - 1;
        if (j-- == 0) break;
    }
    return line * 32 + s * 8 + (t & 7);
}

__global__ void k_wo(float *a, unsigned mask, unsigned per_line) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    a[idx(t, mask, per_line)] = 1.5f;
}

__global__ void k_rw(float *a, unsigned mask, unsigned per_line) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned i = idx(t, mask, per_line);
    a[i] = a[i] + 1.0f;
}

// One thread per kept sector: its first word, loaded and stored.
__global__ void k_rw1(float *a, unsigned mask, unsigned per_line) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned i = idx(t << 3, mask, per_line);
    a[i] = a[i] + 1.0f;
}

// One thread per kept sector: its first word, loaded only.
__global__ void k_ro1(float *a, unsigned mask, unsigned per_line, float *out) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[idx(t << 3, mask, per_line)];
    if (v == 12345.0f) out[0] = v;
}

// Two threads per kept sector, 16 bytes each: the sector written whole,
// nothing read.
__global__ void k_st16(float4 *a, unsigned mask, unsigned per_line) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned i = idx(t << 2, mask, per_line);  // the sector's first or fifth word
    a[i >> 2] = make_float4(1.5f, 1.5f, 1.5f, 1.5f);
}

// One thread per kept sector: its first word stored, nothing read.
__global__ void k_st4(float *a, unsigned mask, unsigned per_line) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    a[idx(t << 3, mask, per_line)] = 1.5f;
}

struct Case {
    std::string mode;
    unsigned mask;
};

static std::vector<Case> cases() {
    std::vector<Case> v;
    for (const char *mode : {"wo", "rw", "rw1", "ro1"})
        for (unsigned mask : {0xFu, 0x3u, 0x5u, 0x6u, 0x1u, 0x9u}) v.push_back({mode, mask});
    for (const char *mode : {"st16", "st4"})
        for (unsigned mask : {0xFu, 0x3u, 0x5u, 0x1u}) v.push_back({mode, mask});
    return v;
}

static void bits(unsigned mask, char *out) {
    for (int s = 3; s >= 0; s--) *out++ = (mask >> s & 1) ? '1' : '0';
    *out = 0;
}

// Threads per kept sector.
static unsigned per_sector(const Case &c) {
    if (c.mode == "st16") return 2;
    return c.mode == "rw1" || c.mode == "ro1" || c.mode == "st4" ? 1 : 8;
}

static unsigned grid_of(const Case &c) {
    return (unsigned)((uint64_t)LINES * __builtin_popcount(c.mask) * per_sector(c) / 256);
}

static void launch(const Case &c, float *a) {
    unsigned per_line = __builtin_popcount(c.mask), block = 256, grid = grid_of(c);
    if (c.mode == "wo")
        k_wo<<<grid, block>>>(a, c.mask, per_line);
    else if (c.mode == "rw")
        k_rw<<<grid, block>>>(a, c.mask, per_line);
    else if (c.mode == "rw1")
        k_rw1<<<grid, block>>>(a, c.mask, per_line);
    else if (c.mode == "st16")
        k_st16<<<grid, block>>>((float4 *)a, c.mask, per_line);
    else if (c.mode == "st4")
        k_st4<<<grid, block>>>(a, c.mask, per_line);
    else
        k_ro1<<<grid, block>>>(a, c.mask, per_line, a + BYTES / 4 - 1);
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    std::vector<Case> all = cases();
    char m[5];
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++) {
            bits(all[i].mask, m);
            printf("%zu,%s,%s,%u,256\n", i, all[i].mode.c_str(), m, grid_of(all[i]));
        }
        return 0;
    }
    if (mode != "ncu" && mode != "time") {
        fprintf(stderr, "usage: wshape list | ncu [REPS] [MODES] | time [REPS] [MODES]\n");
        return 2;
    }
    // The modes to run: ",st16,st4," matches ",st4,".
    std::string only = argc > 3 ? "," + std::string(argv[3]) + "," : "";
    float *a;
    CK(cudaMalloc(&a, BYTES));
    int reps = argc > 2 ? atoi(argv[2]) : (mode == "ncu" ? 1 : 5);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (size_t i = 0; i < all.size(); i++) {
        const Case &c = all[i];
        if (!only.empty() && only.find("," + c.mode + ",") == std::string::npos) continue;
        bits(c.mask, m);
        unsigned grid = grid_of(c);
        if (mode == "ncu") {
            for (int r = 0; r < reps; r++) {
                CK(cudaMemset(a, 0, BYTES));
                CK(cudaDeviceSynchronize());
                printf("CASE,%zu,%s,%s,%u,256,%d\n", i, c.mode.c_str(), m, grid, r);
                fflush(stdout);
                launch(c, a);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        } else {
            CK(cudaMemset(a, 0, BYTES));
            launch(c, a);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            for (int r = 0; r < reps; r++) {
                CK(cudaEventRecord(e0));
                for (int k = 0; k < 10; k++) launch(c, a);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                printf("TIME,%zu,%s,%s,%d,%.6f\n", i, c.mode.c_str(), m, r, ms / 10);
            }
        }
    }
    return 0;
}
