// Where the H200's L2 writes of its own come from: seed 002's stride kernel
// at 256 MiB split into its load and its store, with 8 and with 2 blocks of
// 256 threads an SM, so that Nsight Compute's L2 counters say which part,
// at which occupancy, makes the L2 look up writes that are neither the
// SMs' nor its fabric's (tools/measure/inflight, calls 3 and 4: 0.2 sectors
// per read sector at 8 blocks an SM, none at 2, each a miss filled from
// DRAM).
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o l2src l2src.cu
// Run:    ./l2src list               the cases, one per line
//         ./l2src time FILE.csv      per case, warm back-to-back batches
//                                    timed with CUDA events
//         ./l2src ncu [FROM TO [REPS]]
//                                    every case (or FROM..TO-1) launched
//                                    once (REPS times), kernels named k_*,
//                                    meant to run under Nsight Compute;
//                                    prints "CASE,<index>,<kind>,<elem>,
//                                    <stride>,<smem>,<block>,<grid>,<rep>"
//
// With i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s over n =
// 256 MiB / sizeof(T) threads, blocks of 256, buffers of 33 n elements
// (zero at the start):
//   rw  a[i] = a[i] + 1          (the seed's kernel)
//   ro  v = a[i]; if (v == -1) a[i] = 0   (the load alone: never stores)
//   wo  a[i] = 1                 (the store alone)
//   cp  b[i] = a[i] + 1          (load and store on different lines)
// Unused dynamic shared memory of 0 or 112 KiB leaves 8 or 2 blocks an SM.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../warm.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t N_BYTES = 256 * MiB;

template <typename T>
__global__ void k_rw(T *a, T *, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = a[i] + 1;
}

template <typename T>
__global__ void k_ro(T *a, T *, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    T v = a[i];
    if (v == (T)-1) a[i] = 0;
}

template <typename T>
__global__ void k_wo(T *a, T *, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = 1;
}

template <typename T>
__global__ void k_cp(T *a, T *b, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    b[i] = a[i] + 1;
}

static const char *KINDS[] = {"rw", "ro", "wo", "cp"};

struct Case {
    int kind, elem, stride;
    unsigned smem_kib;
};

static std::vector<Case> cases() {
    std::vector<Case> v;
    const int es[][2] = {{8, 8}, {8, 24}, {8, 32}, {4, 32}};
    for (unsigned sm : {0u, 112u})
        for (int k = 0; k < 4; k++)
            for (auto &e : es) v.push_back({k, e[0], e[1], sm});
    return v;
}

static void *A, *B;

template <typename T>
static void launch_t(const Case &c) {
    unsigned block = 256;
    unsigned grid = (unsigned)(N_BYTES / sizeof(T) / block);
    size_t smem = (size_t)c.smem_kib * 1024;
    void (*fns[])(T *, T *, int) = {k_rw<T>, k_ro<T>, k_wo<T>, k_cp<T>};
    fns[c.kind]<<<grid, block, smem>>>((T *)A, (T *)B, c.stride);
}

static void launch(const Case &c) {
    if (c.elem == 8)
        launch_t<double>(c);
    else
        launch_t<float>(c);
}

template <typename T>
static void allow_smem(int optin) {
    void (*fns[])(T *, T *, int) = {k_rw<T>, k_ro<T>, k_wo<T>, k_cp<T>};
    for (auto f : fns) CK(cudaFuncSetAttribute((const void *)f, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    std::vector<Case> all = cases();
    auto line = [&](size_t i) {
        const Case &c = all[i];
        return std::to_string(i) + "," + KINDS[c.kind] + "," + std::to_string(c.elem) + "," +
               std::to_string(c.stride) + "," + std::to_string(c.smem_kib * 1024) + ",256," +
               std::to_string(N_BYTES / c.elem / 256);
    };
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++) printf("%s\n", line(i).c_str());
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int optin = (int)prop.sharedMemPerBlockOptin;
    allow_smem<float>(optin);
    allow_smem<double>(optin);
    for (unsigned sm : {0u, 112u}) {
        int nb = -1;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (const void *)k_rw<double>, 256, sm * 1024));
        printf("# %s: smem %u KiB: %d blocks of 256 per SM\n", prop.name, sm, nb);
    }
    const uint64_t bytes = 33 * N_BYTES;
    CK(cudaMalloc(&A, bytes));
    CK(cudaMalloc(&B, bytes));
    CK(cudaMemset(A, 0, bytes));
    CK(cudaMemset(B, 0, bytes));
    CK(cudaDeviceSynchronize());
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < to && i < all.size(); i++)
            for (int r = 0; r < reps; r++) {
                printf("CASE,%s,%d\n", line(i).c_str(), r);
                fflush(stdout);
                launch(all[i]);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: l2src list | time FILE.csv | ncu [FROM TO [REPS]]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "index,kind,elem,stride,smem,block,grid,warm_ns,warm_min_ns,warm_max_ns,launches_per_batch\n");
    for (size_t i = 0; i < all.size(); i++) {
        WarmTime w = warm_batches([&] { launch(all[i]); });
        fprintf(f, "%s,%.1f,%.1f,%.1f,%d\n", line(i).c_str(), w.med_ns, w.min_ns, w.max_ns, w.per_batch);
        fflush(f);
        printf("%s warm %.1f ns\n", line(i).c_str(), w.med_ns);
        fflush(stdout);
    }
    fclose(f);
    return 0;
}
