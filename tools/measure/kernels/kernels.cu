// Textbook kernels that no other campaign measures, for checking the model
// beyond the kernels it was built on: STREAM's triad, a shared-memory tree
// reduction and a grid-stride SAXPY.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o kernels kernels.cu
// Run:    ./kernels list            the cases, one per line
//         ./kernels time FILE.csv [FROM TO]
//                                   per case (or FROM..TO-1): a correctness
//                                   check, then warm back-to-back batches
//                                   timed with CUDA events
//         ./kernels ncu [FROM TO [REPS]]
//                                   every case (or FROM..TO-1) launched once
//                                   (REPS times); kernels are named k_*;
//                                   meant to run under Nsight Compute.
//                                   Prints "CASE,<index>,<kind>,<n_mib>,<grid>,<rep>"
//                                   before each launch.
//
// Kernels (floats, 256 threads a block):
//   k_triad    a[i] = b[i] + s * c[i] (J. D. McCalpin's STREAM triad), one
//              element a thread; n_mib is the size of each of the three
//              arrays.
//   k_reduce   M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA,
//              2007), kernel 4: each thread adds two elements a block apart
//              as it loads them into shared memory, then a tree over shared
//              memory with sequential addressing (s = 128, 64, ... 1, a
//              __syncthreads() after each step), and thread 0 writes the
//              block's sum; n_mib is the input's size, 512 elements a block.
//   k_reduce_ld, k_reduce_tree
//              k_reduce's loads and first step alone (one barrier, then
//              thread 0 writes sdata[0] + sdata[255]), and its tree alone
//              over sdata[tid] = tid (no global load): cases 17-20.
//   k_plds, k_padd
//              what a predicated-off shared load costs: 512 trips of 16
//              `@p ld.shared.f32` (or `@p add.f32`), p from a runtime flag
//              (off: no lane; on: every lane), 8 blocks an SM: cases 21-24.
//   k_saxpy    y[i] = a * x[i] + y[i] in a grid-stride loop (M. Harris, "CUDA
//              Pro Tip: Write Flexible Kernels with Grid-Stride Loops",
//              NVIDIA, 2013) over n_mib of each array, with a fixed grid of
//              `grid` blocks.
//
// Buffers: A, B, C of 1 GiB each, B and C refilled before every check
// (B = 1.0, C = 2.0); OUT 4 MiB.

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

static const uint64_t MiB = 1ull << 20;
static const uint64_t ARR = 1024 * MiB;
static const unsigned BLOCK = 256;

__global__ void k_triad(float *a, const float *b, const float *c, float s) {
    unsigned i = blockDim.x * blockIdx.x + threadIdx.x;
    a[i] = b[i] + s * c[i];
}

__global__ void k_reduce(const float *in, float *out) {
    __shared__ float sdata[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    sdata[tid] = in[i] + in[i + blockDim.x];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The reduction split in two: its loads and first step alone (one barrier,
// then thread 0 writes sdata[0] + sdata[255]), and its tree alone over
// values set in shared memory (no global load).
__global__ void k_reduce_ld(const float *in, float *out) {
    __shared__ float sdata[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    sdata[tid] = in[i] + in[i + blockDim.x];
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = sdata[0] + sdata[BLOCK - 1];
}

__global__ void k_reduce_tree(float *out) {
    __shared__ float sdata[BLOCK];
    unsigned tid = threadIdx.x;
    sdata[tid] = (float)tid;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// What a shared load costs the SM when its predicate holds on no lane:
// every warp runs LDS_TRIPS trips of 16 loads (inline PTX, `@p
// ld.shared.f32`, p from a runtime flag: 0, no lane loads; 1, every lane
// loads a word of its own, one wavefront), each added into a sum; k_padd is
// the same with `@p add.f32` in place of the load (the loop without it).
static const int LDS_TRIPS = 512;

__global__ void k_plds(float *out, unsigned flag) {
    __shared__ float s[1024];
    for (unsigned j = threadIdx.x; j < 1024; j += blockDim.x) s[j] = 1.0f;
    __syncthreads();
    unsigned base = (unsigned)__cvta_generic_to_shared(s) + 4 * (threadIdx.x & 31);
    float acc = 0.0f;
    for (int k = 0; k < LDS_TRIPS; k++) {
#pragma unroll
        for (int j = 0; j < 16; j++) {
            float v = 0.0f;
            asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; @p ld.shared.f32 %0, [%2]; }"
                         : "+f"(v)
                         : "r"(flag), "r"(base + 128 * j));
            acc += v;
        }
    }
    if (acc == -1.0f) out[blockIdx.x] = acc;
}

__global__ void k_padd(float *out, unsigned flag) {
    float acc = 0.0f;
    for (int k = 0; k < LDS_TRIPS; k++) {
#pragma unroll
        for (int j = 0; j < 16; j++) {
            float v = 0.0f;
            asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; @p add.f32 %0, %0, 1.0; }" : "+f"(v) : "r"(flag));
            acc += v;
        }
    }
    if (acc == -1.0f) out[blockIdx.x] = acc;
}

__global__ void k_saxpy(unsigned n, float a, const float *x, float *y) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

static float *A, *B, *C, *OUT;
static int SMS;

struct Case {
    std::string kind;  // triad, reduce, saxpy
    unsigned n_mib;    // MiB of each array (of the input, for reduce)
    unsigned grid;
};

static std::vector<Case> cases() {
    std::vector<Case> v;
    for (unsigned n : {1u, 4u, 16u, 64u, 256u, 1024u}) v.push_back(Case{"triad", n, (unsigned)(n * MiB / 4 / BLOCK)});
    for (unsigned n : {4u, 16u, 64u, 256u, 1024u})
        v.push_back(Case{"reduce", n, (unsigned)(n * MiB / 4 / (2 * BLOCK))});
    for (unsigned g : {1u, 2u, 4u, 8u, 16u}) v.push_back(Case{"saxpy", 256, g * (unsigned)SMS});
    v.push_back(Case{"saxpy", 16, 8 * (unsigned)SMS});
    // Cases 17-20 (run_split.sh): the reduction's parts, grids of 64 MiB
    // and 1 GiB of input.
    for (const char *k : {"reduce_ld", "reduce_tree"})
        for (unsigned n : {64u, 1024u}) v.push_back(Case{k, n, (unsigned)(n * MiB / 4 / (2 * BLOCK))});
    // Cases 21-24 (run_split.sh): predicated shared loads off and on, and
    // the same loop with a predicated add; 8 blocks an SM.
    for (const char *k : {"plds_off", "plds_on", "padd_off", "padd_on"}) v.push_back(Case{k, 0, 8 * (unsigned)SMS});
    return v;
}

static void launch(const Case &c, cudaStream_t s) {
    unsigned n = (unsigned)(c.n_mib * MiB / 4);
    if (c.kind == "triad")
        k_triad<<<c.grid, BLOCK, 0, s>>>(A, B, C, 3.0f);
    else if (c.kind == "reduce")
        k_reduce<<<c.grid, BLOCK, 0, s>>>(B, OUT);
    else if (c.kind == "reduce_ld")
        k_reduce_ld<<<c.grid, BLOCK, 0, s>>>(B, OUT);
    else if (c.kind == "reduce_tree")
        k_reduce_tree<<<c.grid, BLOCK, 0, s>>>(OUT);
    else if (c.kind == "plds_off" || c.kind == "plds_on")
        k_plds<<<c.grid, BLOCK, 0, s>>>(OUT, c.kind == "plds_on");
    else if (c.kind == "padd_off" || c.kind == "padd_on")
        k_padd<<<c.grid, BLOCK, 0, s>>>(OUT, c.kind == "padd_on");
    else
        k_saxpy<<<c.grid, BLOCK, 0, s>>>(n, 3.0f, C, A);
}

__global__ void fill_kernel(float *p, float v, uint64_t n) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)blockDim.x * gridDim.x)
        p[i] = v;
}

static void fill(float *p, float v, uint64_t bytes) {
    fill_kernel<<<4 * SMS, 1024>>>(p, v, bytes / 4);
    CK(cudaGetLastError());
}

static void reset() {
    fill(A, 0.0f, ARR);
    fill(B, 1.0f, ARR);
    fill(C, 2.0f, ARR);
    CK(cudaMemset(OUT, 0, 4 * MiB));
    CK(cudaDeviceSynchronize());
}

// Every output of one launch after reset(): triad 1 + 3 * 2 = 7, a block's
// sum 512, saxpy 3 * 2 + 0 = 6.
static uint64_t check(const Case &c) {
    reset();
    launch(c, 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint64_t bad = 0;
    if (c.kind[0] == 'p') {
        // The sums are never -1: nothing is written.
        std::vector<float> h(c.grid);
        CK(cudaMemcpy(h.data(), OUT, h.size() * 4, cudaMemcpyDeviceToHost));
        for (float x : h) bad += x != 0.0f;
    } else if (c.kind.rfind("reduce", 0) == 0) {
        // A block's sum: 512 ones; its first and last sums of two ones; the
        // thread indices 0..255.
        float want = c.kind == "reduce" ? 512.0f : c.kind == "reduce_ld" ? 4.0f : 32640.0f;
        std::vector<float> h(c.grid);
        CK(cudaMemcpy(h.data(), OUT, h.size() * 4, cudaMemcpyDeviceToHost));
        for (float x : h) bad += x != want;
    } else {
        std::vector<float> h(c.n_mib * MiB / 4);
        CK(cudaMemcpy(h.data(), A, h.size() * 4, cudaMemcpyDeviceToHost));
        float want = c.kind == "triad" ? 7.0f : 6.0f;
        for (float x : h) bad += x != want;
    }
    return bad;
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    SMS = prop.multiProcessorCount;
    std::vector<Case> all = cases();
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++)
            printf("%zu,%s,%u,%u,%u\n", i, all[i].kind.c_str(), all[i].n_mib, all[i].grid, BLOCK);
        return 0;
    }
    printf("# device: %s, %d SMs, L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
    CK(cudaMalloc(&A, ARR));
    CK(cudaMalloc(&B, ARR));
    CK(cudaMalloc(&C, ARR));
    CK(cudaMalloc(&OUT, 4 * MiB));
    reset();
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < std::min(to, all.size()); i++) {
            const Case &c = all[i];
            for (int r = 0; r < reps; r++) {
                printf("CASE,%zu,%s,%u,%u,%d\n", i, c.kind.c_str(), c.n_mib, c.grid, r);
                fflush(stdout);
                launch(c, 0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        }
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: kernels list | time FILE.csv [FROM TO] | ncu [FROM TO [REPS]]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "index,kind,n_mib,grid,block,warm_ns,warm_min_ns,warm_max_ns,launches_per_batch,check_bad\n");
    uint64_t total_bad = 0;
    size_t from = argc > 3 ? strtoull(argv[3], nullptr, 10) : 0;
    size_t to = argc > 4 ? std::min((size_t)strtoull(argv[4], nullptr, 10), all.size()) : all.size();
    for (size_t i = from; i < to; i++) {
        const Case &c = all[i];
        uint64_t bad = check(c);
        total_bad += bad;
        WarmTime w = warm_batches([&] { launch(c, 0); });
        fprintf(f, "%zu,%s,%u,%u,%u,%.1f,%.1f,%.1f,%d,%llu\n", i, c.kind.c_str(), c.n_mib, c.grid, BLOCK,
                w.med_ns, w.min_ns, w.max_ns, w.per_batch, (unsigned long long)bad);
        fflush(f);
        printf("%2zu %-6s n %4u MiB grid %7u  warm %10.1f ns  bad %llu\n", i, c.kind.c_str(), c.n_mib, c.grid,
               w.med_ns, (unsigned long long)bad);
        fflush(stdout);
    }
    fclose(f);
    printf("# check: %llu bad outputs in all (0 expected)\n", (unsigned long long)total_bad);
    return 0;
}
