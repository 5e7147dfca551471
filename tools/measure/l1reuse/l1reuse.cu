// L1 reuse: loads that find their data in the SM's L1, by the footprint a
// block reads again (the L1's capacity) and by a stencil's neighbours.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o l1reuse l1reuse.cu
// Run:    ./l1reuse list            the cases, one per line
//         ./l1reuse time FILE.csv   per case: a correctness check, then
//                                   warm back-to-back batches timed with
//                                   CUDA events
//         ./l1reuse ncu [FROM TO [REPS]]
//                                   every case (or FROM..TO-1) launched once
//                                   (REPS times); kernels are named k_*;
//                                   meant to run under Nsight Compute.
//                                   Prints "CASE,<index>,<kind>,<w_kib>,<n_mib>,<grid>,<rep>"
//                                   before each launch.
//
// Kernels (floats):
//   k_window   one block of 1024 threads per SM (grid = the SMs), block b
//              reads its own window of W KiB (a[b * W/4 + j]) R = 8 times
//              over, one load a thread per trip of an unrolled-once loop,
//              each trip's load summed into the thread's total, written to
//              out[] at the end: the second and later passes hit the L1
//              while W fits it.
//   k_stencil  out[i] = a[i - 1] + a[i] + a[i + 1], i = blockDim.x *
//              blockIdx.x + threadIdx.x + 1, block 256: a warp's three
//              loads share its lines (the outer two hit the L1 where the
//              middle one brought the line).
//
// Buffers: A, 256 MiB + 4 KiB, filled with the float 1.0 before every case
// (every sum is then exact: the check compares each output with its count
// of loads); OUT, 256 MiB.

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
static const uint64_t A_BYTES = 256 * MiB + 4096;
static const int R = 8;

__global__ void k_window(const float *a, float *out, unsigned wfloats, int rounds) {
    const float *w = a + (uint64_t)blockIdx.x * wfloats;
    float sum = 0.0f;
    for (int r = 0; r < rounds; r++) {
#pragma unroll 1
        for (unsigned j = threadIdx.x; j < wfloats; j += blockDim.x) sum += w[j];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void k_stencil(const float *a, float *out) {
    unsigned i = blockDim.x * blockIdx.x + threadIdx.x + 1;
    out[i] = a[i - 1] + a[i] + a[i + 1];
}

static float *A, *OUT;
static int SMS;

struct Case {
    std::string kind;  // window, stencil
    unsigned w_kib;    // window
    unsigned n_mib;    // stencil: array size
    unsigned grid, block;
};

static std::vector<Case> cases() {
    std::vector<Case> v;
    for (unsigned w : {16u, 64u, 128u, 160u, 192u, 208u, 224u, 256u, 320u, 512u})
        v.push_back(Case{"window", w, 0, (unsigned)SMS, 1024});
    for (unsigned n : {16u, 256u}) v.push_back(Case{"stencil", 0, n, (unsigned)(n * MiB / 4 / 256), 256});
    return v;
}

static void launch(const Case &c, cudaStream_t s) {
    if (c.kind == "window")
        k_window<<<c.grid, c.block, 0, s>>>(A, OUT, c.w_kib * 256, R);
    else
        k_stencil<<<c.grid, c.block, 0, s>>>(A, OUT);
}

static void reset() {
    std::vector<float> ones(A_BYTES / 4, 1.0f);
    CK(cudaMemcpy(A, ones.data(), A_BYTES, cudaMemcpyHostToDevice));
    CK(cudaMemset(OUT, 0, 256 * MiB));
    CK(cudaDeviceSynchronize());
}

// Every output the case writes must be its number of loads (all 1.0).
static uint64_t check(const Case &c) {
    reset();
    launch(c, 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint64_t bad = 0;
    if (c.kind == "window") {
        std::vector<float> h((size_t)c.grid * c.block);
        CK(cudaMemcpy(h.data(), OUT, h.size() * 4, cudaMemcpyDeviceToHost));
        unsigned wf = c.w_kib * 256;
        for (size_t t = 0; t < h.size(); t++) {
            unsigned tid = t % c.block;
            float want = (float)(R * ((wf - tid + c.block - 1) / c.block));
            bad += h[t] != want;
        }
    } else {
        uint64_t n = (uint64_t)c.grid * c.block;
        std::vector<float> h(n + 1);
        CK(cudaMemcpy(h.data(), OUT, (n + 1) * 4, cudaMemcpyDeviceToHost));
        for (uint64_t i = 1; i <= n; i++) bad += h[i] != 3.0f;
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
            printf("%zu,%s,%u,%u,%u,%u\n", i, all[i].kind.c_str(), all[i].w_kib, all[i].n_mib, all[i].grid,
                   all[i].block);
        return 0;
    }
    printf("# device: %s, %d SMs, L2 %d bytes, shared/SM %zu\n", prop.name, prop.multiProcessorCount,
           prop.l2CacheSize, prop.sharedMemPerMultiprocessor);
    CK(cudaMalloc(&A, A_BYTES));
    CK(cudaMalloc(&OUT, 256 * MiB + 4096));
    reset();
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < std::min(to, all.size()); i++) {
            const Case &c = all[i];
            for (int r = 0; r < reps; r++) {
                printf("CASE,%zu,%s,%u,%u,%u,%d\n", i, c.kind.c_str(), c.w_kib, c.n_mib, c.grid, r);
                fflush(stdout);
                launch(c, 0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        }
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: l1reuse list | time FILE.csv | ncu [FROM TO [REPS]]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "index,kind,w_kib,n_mib,grid,block,warm_ns,warm_min_ns,warm_max_ns,launches_per_batch,check_bad\n");
    uint64_t total_bad = 0;
    for (size_t i = 0; i < all.size(); i++) {
        const Case &c = all[i];
        uint64_t bad = check(c);
        total_bad += bad;
        WarmTime w = warm_batches([&] { launch(c, 0); });
        fprintf(f, "%zu,%s,%u,%u,%u,%u,%.1f,%.1f,%.1f,%d,%llu\n", i, c.kind.c_str(), c.w_kib, c.n_mib, c.grid,
                c.block, w.med_ns, w.min_ns, w.max_ns, w.per_batch, (unsigned long long)bad);
        fflush(f);
        printf("%2zu %-7s W %3u KiB n %3u MiB grid %7u  warm %10.1f ns  bad %llu\n", i, c.kind.c_str(), c.w_kib,
               c.n_mib, c.grid, w.med_ns, (unsigned long long)bad);
        fflush(stdout);
    }
    fclose(f);
    printf("# check: %llu bad outputs in all (0 expected)\n", (unsigned long long)total_bad);
    return 0;
}
