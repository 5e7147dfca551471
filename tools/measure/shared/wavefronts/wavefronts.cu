// Where do the extra shared-memory wavefronts of the tiled transposes come
// from? ../shared.cu's k_transpose_tiled{,_padded} show, under Nsight
// Compute, exactly the wavefronts of their access pattern at n = 1024 (one
// wave of blocks) and 0.03-0.26 more per shared instruction at n >= 2048
// (several waves). This file launches the same kernels and variants of them
// that each remove one suspect:
//   *_cg    the global loads bypass L1 (__ldcg, ld.global.cg): no L1 fills
//   *_nost  the 4 global stores replaced by one store per thread guarded by
//           a comparison with a NaN argument, which is never true: no global
//           store traffic; the 4 shared loads are kept (accumulated)
//   grid (64,16) at n = 2048: only the first 1024 blocks, one wave
//   k_tiled_dyn at n = 1024 with 100 KiB of (unused) dynamic shared memory
//           per block: 2 blocks per SM, so 1024 blocks take 3.9 waves
// The shared accesses of every variant are those of ../shared.cu's kernels:
// 4 STS (rows), BAR, 4 LDS (columns), 32-bit.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o wavefronts wavefronts.cu
// Run:    ./wavefronts list     the cases
//         ./wavefronts check    each case once (kernels named k_*), output
//                               poisoned before, every element checked after
//         ./wavefronts ncu [FROM TO]
//                               each case once, "CASE,<i>,<name>,<kernel>,
//                               <n>,<gx>,<gy>,<dyn>" printed before it; for
//                               Nsight Compute (kernel regex ^k_)
// Buffers: in and out, 4096 x 4096 floats each, in[i] = (float)(i % 1000003).

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../ck.cuh"

// W: the tile's row length in floats (32, or 33 padded). CG: L1-bypassing
// loads. NOST: no global stores (the guarded one never fires).
template <int W, bool CG, bool NOST>
__device__ __forceinline__ void body(float *o, const float *in, int n, float never) {
    __shared__ float tile[32][W];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        const float *p = &in[(y + j) * n + x];
        tile[threadIdx.y + j][threadIdx.x] = CG ? __ldcg(p) : *p;
    }
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (NOST) {
        float acc = 0.f;
        for (int j = 0; j < 32; j += 8) acc += tile[threadIdx.x][threadIdx.y + j];
        if (acc == never) o[y * n + x] = acc;  // never is NaN: no store
    } else {
        for (int j = 0; j < 32; j += 8) o[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

#define KERNEL(name, W, CG, NOST) \
    __global__ void name(float *o, const float *in, int n, float never) { body<W, CG, NOST>(o, in, n, never); }
KERNEL(k_tiled, 32, false, false)
KERNEL(k_padded, 33, false, false)
KERNEL(k_tiled_cg, 32, true, false)
KERNEL(k_padded_cg, 33, true, false)
KERNEL(k_tiled_nost, 32, false, true)
KERNEL(k_padded_nost, 33, false, true)
KERNEL(k_tiled_cg_nost, 32, true, true)
KERNEL(k_tiled_dyn, 32, false, false)  // k_tiled, launched with dynamic smem

typedef void (*Kern)(float *, const float *, int, float);
struct Case {
    const char *name;  // what it tests
    const char *kname;
    Kern k;
    int n, gx, gy, dyn;  // dyn: dynamic shared memory per block, bytes
    bool stores;
};
static const int DYN = 100 * 1024;
static const std::vector<Case> CASES = {
    {"ref", "k_tiled", k_tiled, 1024, 32, 32, 0, true},
    {"ref", "k_tiled", k_tiled, 2048, 64, 64, 0, true},
    {"ref", "k_tiled", k_tiled, 4096, 128, 128, 0, true},
    {"ref", "k_padded", k_padded, 2048, 64, 64, 0, true},
    {"ref", "k_padded", k_padded, 4096, 128, 128, 0, true},
    {"H1_cg", "k_tiled_cg", k_tiled_cg, 2048, 64, 64, 0, true},
    {"H1_cg", "k_tiled_cg", k_tiled_cg, 4096, 128, 128, 0, true},
    {"H1_cg", "k_padded_cg", k_padded_cg, 2048, 64, 64, 0, true},
    {"H1_cg", "k_padded_cg", k_padded_cg, 4096, 128, 128, 0, true},
    {"H2_onewave", "k_tiled", k_tiled, 2048, 64, 16, 0, true},
    {"H2_onewave", "k_padded", k_padded, 2048, 64, 16, 0, true},
    {"H2_dyn100k", "k_tiled_dyn", k_tiled_dyn, 1024, 32, 32, DYN, true},
    {"H3_nost", "k_tiled_nost", k_tiled_nost, 2048, 64, 64, 0, false},
    {"H3_nost", "k_padded_nost", k_padded_nost, 2048, 64, 64, 0, false},
    {"H1H3_cg_nost", "k_tiled_cg_nost", k_tiled_cg_nost, 2048, 64, 64, 0, false},
};
static const int NMAX = 4096;

static void launch(const Case &c, float *o, const float *in) {
    c.k<<<dim3(c.gx, c.gy), dim3(32, 8), c.dyn>>>(o, in, c.n, NAN);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "list") {
        for (size_t i = 0; i < CASES.size(); i++) {
            const Case &c = CASES[i];
            printf("%zu %s %s n=%d grid=(%d,%d) dyn=%d\n", i, c.name, c.kname, c.n, c.gx, c.gy, c.dyn);
        }
        return 0;
    }
    if (mode != "check" && mode != "ncu") {
        fprintf(stderr, "usage: wavefronts list | check | ncu [FROM TO]\n");
        return 2;
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("# device: %s, %d SMs, %zu bytes smem/SM, %zu smem/block optin\n", p.name,
           p.multiProcessorCount, p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin);
    CK(cudaFuncSetAttribute(k_tiled_dyn, cudaFuncAttributeMaxDynamicSharedMemorySize, DYN));
    for (const Case &c : CASES) {
        int nb = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, c.k, 256, c.dyn));
        if (mode == "check")
            printf("# %s %s n=%d: %d blocks per SM, %d blocks, %.2f waves\n", c.name, c.kname, c.n, nb,
                   c.gx * c.gy, (double)c.gx * c.gy / (nb * p.multiProcessorCount));
    }
    size_t N = (size_t)NMAX * NMAX;
    std::vector<float> h(N), r(N);
    for (size_t i = 0; i < N; i++) h[i] = (float)(i % 1000003);
    float *in, *o;
    CK(cudaMalloc(&in, N * 4));
    CK(cudaMalloc(&o, N * 4));
    CK(cudaMemcpy(in, h.data(), N * 4, cudaMemcpyHostToDevice));
    size_t from = 0, to = CASES.size();
    if (argc > 3) from = atoi(argv[2]), to = atoi(argv[3]);
    long bad_total = 0;
    for (size_t i = from; i < to && i < CASES.size(); i++) {
        const Case &c = CASES[i];
        if (mode == "ncu") {
            printf("CASE,%zu,%s,%s,%d,%d,%d,%d\n", i, c.name, c.kname, c.n, c.gx, c.gy, c.dyn);
            fflush(stdout);
            launch(c, o, in);
            continue;
        }
        CK(cudaMemset(o, 0xff, N * 4));
        launch(c, o, in);
        CK(cudaMemcpy(r.data(), o, N * 4, cudaMemcpyDeviceToHost));
        // out[row][col] = in[col][row] where block (row/32, col/32) ran
        long bad = 0, written = 0;
        for (int row = 0; row < c.n; row++)
            for (int col = 0; col < c.n; col++) {
                float got = r[(size_t)row * c.n + col];
                bool ran = c.stores && row / 32 < c.gx && col / 32 < c.gy;
                uint32_t bits;
                memcpy(&bits, &got, 4);
                if (ran) {
                    written++;
                    if (got != h[(size_t)col * c.n + row]) bad++;
                } else if (bits != 0xffffffffu) {
                    bad++;
                }
            }
        // beyond n*n nothing may be written
        for (size_t k = (size_t)c.n * c.n; k < N; k += 4099) {
            uint32_t bits;
            memcpy(&bits, &r[k], 4);
            if (bits != 0xffffffffu) bad++;
        }
        printf("check %zu %s %s n=%d grid=(%d,%d) dyn=%d: %ld elements written, %ld bad\n", i, c.name,
               c.kname, c.n, c.gx, c.gy, c.dyn, written, bad);
        bad_total += bad;
    }
    if (mode == "check") printf("check total bad: %ld\n", bad_total);
    CK(cudaFree(in));
    CK(cudaFree(o));
    return bad_total ? 1 : 0;
}
