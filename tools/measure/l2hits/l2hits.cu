// Where the seed's large strides and large blocks lose time on the H200:
//  - seed 002's stride kernel (workloads/stride.ron) at 4 MiB, float and
//    double, strides 1, 8, 16, 20, 24, 28, 32: whether its stores find in
//    the L2 the sectors its own loads brought there (the L2's write lookups
//    that hit and miss), and where its DRAM reads beyond the loads' fetches
//    come from;
//  - seed 002's offset kernel (workloads/offset.ron, offset 0) at 256 MiB,
//    float, blocks of 128, 256, 512 and 1024 threads: the achieved
//    occupancy that a block of many warps leaves while its last warps
//    finish;
//  - stores into k = 1, 2 or 4 whole sectors of each of 262,144 lines
//    (workloads/dirty_lines.ron, g = 8), each thread first waiting D = 0,
//    4,000 or 16,000 cycles: whether the dirty lines the L2 keeps (1,600,
//    2,000 and 2,200 per slice for k = 1, 2, 4 in the corpus) fall when
//    the DRAM has idle time (lines written back early, while the DRAM has
//    nothing else to do) or stay (a limit set by the lines' sectors).
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o l2hits l2hits.cu
// Run:    ./l2hits list           the cases, one per line
//         ./l2hits big            the 256 MiB stride cases (below), each once,
//                                 under Nsight Compute like ncu
//         ./l2hits ncu [REPS]     every case launched REPS (1) times, each
//                                 after its buffer is reset; kernels are
//                                 named k_*; meant to run under Nsight
//                                 Compute. Prints
//                                 "CASE,<index>,<kind>,<elem_bytes>,<size_mib>,<param>,<block>,<grid>,<rep>,<delay>"
//                                 before each launch.
//
// param: the stride, the offset, or k; delay: D (0 but for dirty).
//
// Buffer: A, 256 MiB + 1 MiB, set to zero before every launch (a stride
// case at 4 MiB and stride 32 spans 128 MiB); for `big`, 33 x 256 MiB as
// the seed's stride buffer.
//
// big: seed 002's stride kernel at 256 MiB (the timed seed curves that
// gpusim runs 15-30% fast), float strides 1, 4, 8, 12, 16, 19, 24, 32 and
// double strides 2, 4, 8, 9, 16, 32, blocks of 256: whether the write
// lookups that miss and the fills beyond the loads' misses seen at 4 MiB
// grow where the whole footprint is far beyond the L2.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t A_BYTES = 257 * MiB;

// Seed 002's stride kernel: one element per thread at thread index x s,
// 32-bit index as the seed, no bounds test (the grid is n / block).
template <typename T>
__global__ void k_stride(T *a, int s) {
    int i = (blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
}
// Seed 002's offset kernel, offset 0.
__global__ void k_offset(float *a, int s) {
    int i = blockDim.x * blockIdx.x + threadIdx.x + s;
    a[i] = a[i] + 1.0f;
}

// workloads/dirty_lines.ron with g = 8 (whole sectors), each thread first
// spinning `delay` SM cycles.
__global__ void k_dirty(float *a, unsigned k, long long delay) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (delay > 0) {
        long long s = clock64();
        while (clock64() - s < delay) {
        }
    }
    const unsigned g = 8;
    a[(t / (g * k)) * 32 + ((t / g) % k) * 8 + t % g] = 1.5f;
}

struct Case {
    std::string kind;  // stride, offset, dirty
    int elem_bytes, size_mib, param;
    unsigned block, grid;
    std::function<void()> launch;
    long long delay = 0;
};

static void *A;

static std::vector<Case> big_cases() {
    std::vector<Case> v;
    for (int s : {1, 4, 8, 12, 16, 19, 24, 32}) {
        unsigned bs = 256, grid = (unsigned)(256 * MiB / 4 / bs);
        v.push_back({"stride", 4, 256, s, bs, grid, [=]() { k_stride<float><<<grid, bs>>>((float *)A, s); }});
    }
    for (int s : {2, 4, 8, 9, 16, 32}) {
        unsigned bs = 256, grid = (unsigned)(256 * MiB / 8 / bs);
        v.push_back({"stride", 8, 256, s, bs, grid, [=]() { k_stride<double><<<grid, bs>>>((double *)A, s); }});
    }
    return v;
}

static std::vector<Case> cases() {
    std::vector<Case> v;
    for (int eb : {4, 8})
        for (int s : {1, 8, 16, 20, 24, 28, 32}) {
            unsigned bs = 256, grid = (unsigned)(4 * MiB / eb / bs);
            if (eb == 4)
                v.push_back({"stride", eb, 4, s, bs, grid, [=]() { k_stride<float><<<grid, bs>>>((float *)A, s); }});
            else
                v.push_back({"stride", eb, 4, s, bs, grid, [=]() { k_stride<double><<<grid, bs>>>((double *)A, s); }});
        }
    for (unsigned bs : {128u, 256u, 512u, 1024u}) {
        unsigned grid = (unsigned)(256 * MiB / 4 / bs);
        v.push_back({"offset", 4, 256, 0, bs, grid, [=]() { k_offset<<<grid, bs>>>((float *)A, 0); }});
    }
    const unsigned lines = 262144;
    for (long long d : {0ll, 4000ll, 16000ll})
        for (unsigned k : {1u, 2u, 4u}) {
            unsigned bs = 256, grid = lines * k * 8 / bs;
            v.push_back({"dirty", 4, (int)(lines * 128ull / MiB), (int)k, bs, grid,
                         [=]() { k_dirty<<<grid, bs>>>((float *)A, k, d); }, d});
        }
    return v;
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    bool big = mode == "big";
    std::vector<Case> all = big ? big_cases() : cases();
    uint64_t a_bytes = big ? 33 * 256 * MiB : A_BYTES;
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++)
            printf("%zu,%s,%d,%d,%d,%u,%u,%lld\n", i, all[i].kind.c_str(), all[i].elem_bytes, all[i].size_mib,
                   all[i].param, all[i].block, all[i].grid, all[i].delay);
        return 0;
    }
    if (mode != "ncu" && !big) {
        fprintf(stderr, "usage: l2hits list | big | ncu [REPS]\n");
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# device: %s, compute capability %d.%d, %d SMs, L2 %d bytes\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize);
    CK(cudaMalloc(&A, a_bytes));
    int reps = !big && argc > 2 ? atoi(argv[2]) : 1;
    for (size_t i = 0; i < all.size(); i++) {
        const Case &c = all[i];
        for (int r = 0; r < reps; r++) {
            CK(cudaMemset(A, 0, a_bytes));
            CK(cudaDeviceSynchronize());
            printf("CASE,%zu,%s,%d,%d,%d,%u,%u,%d,%lld\n", i, c.kind.c_str(), c.elem_bytes, c.size_mib, c.param,
                   c.block, c.grid, r, c.delay);
            fflush(stdout);
            c.launch();
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
        }
    }
    return 0;
}
