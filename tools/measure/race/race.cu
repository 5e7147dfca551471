// Why, with 8 blocks of 256 threads an SM, the H200's L2 completes about a
// fifth of the sectors seed 002's stride kernel loads and then stores from
// DRAM a second time, though the store finds its line (../inflight calls 3
// and 4, ../l2src; DEVIATIONS.md 36 and 37). Two readings predict opposite
// things when each thread waits between its load and its store:
//   - the line (or its sector) was replaced between the two: a longer wait
//     gives the L2 more time to replace it, and the excess grows;
//   - the store overtook the fill: the L2 hands a fill's data to the SM
//     before it has written it into its own data array, and a store that
//     reaches the slice before that write finds the sector not yet valid,
//     leaves it partly written, and the L2 completes it from DRAM again; a
//     wait lets the write land first, and the excess falls.
// A load that bypasses the L1 (__ldcg) asks whether the L1 (whose lines
// 8 blocks' loads in flight, 2,048 an SM, overfill) takes part.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o race race.cu
// Run:    ./race list               the cases, one per line
//         ./race time FILE.csv      per case, warm back-to-back batches
//                                   timed with CUDA events
//         ./race ncu [FROM TO [REPS]]
//                                   every case (or FROM..TO-1) launched
//                                   once (REPS times), kernels named k_*,
//                                   meant to run under Nsight Compute;
//                                   prints "CASE,<index>,<kind>,<elem>,
//                                   <stride>,<smem>,<block>,<grid>,<rep>"
//         RACE_SWEEP=1 in the environment: call 4's cases instead (rw and
//         rwd4 at 1 to 8 blocks an SM, SWEEP_KIB below)
//
// With i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s over n =
// 256 MiB / sizeof(T) threads, blocks of 256, a buffer of 33 n elements
// (zero at the start):
//   rw    a[i] = a[i] + 1                    (the seed's kernel)
//   rwd0  v = a[i]; a[i] = v + 1, v passed through shared memory and the
//         timer read once (the next two without their wait)
//   rwd1  v = a[i]; wait 2,000 SM cycles; a[i] = v + 1
//   rwd4  v = a[i]; wait 8,000 SM cycles; a[i] = v + 1
//   cg    v = __ldcg(a + i); a[i] = v + 1   (the load past the L1)
// The wait begins once v has arrived (v is stored to shared memory before
// the timer is read, and a warp issues in order) and spins on clock64.
// (Call 1 ran a version whose wait sat behind a branch on v; its 2-block
// times show that the timer was read before v arrived: results/call1.) Unused dynamic shared memory of 0 or 112 KiB leaves 8
// or 2 blocks an SM.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../warm.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t N_BYTES = 256 * MiB;

template <typename T>
__global__ void k_rw(T *a, int s, int) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = a[i] + 1;
}

template <typename T>
__global__ void k_rwd(T *a, int s, int wait) {
    extern __shared__ unsigned char dyn[];  // the unused dynamic shared memory
    T *sink = (T *)dyn;
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    T v = a[i];
    // The store to shared memory waits for v, and a warp issues in order:
    // the timer is read once v has arrived (the "memory" clobber keeps the
    // compiler from moving the read above the store).
    sink[threadIdx.x] = v;
    long long t0;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0)::"memory");
    for (;;) {
        long long t;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
        if (t - t0 >= wait) break;
    }
    a[i] = sink[threadIdx.x] + 1;
}

template <typename T>
__global__ void k_cg(T *a, int s, int) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    T v = __ldcg(a + i);
    a[i] = v + 1;
}

static const char *KINDS[] = {"rw", "rwd0", "rwd1", "rwd4", "cg"};
static const int WAITS[] = {0, 0, 2000, 8000, 0};

struct Case {
    int kind, elem, stride;
    unsigned smem_kib;
};

// With RACE_SWEEP=1 in the environment (call 4), the cases are instead rw
// and rwd4 at 1 to 8 blocks an SM: the unused dynamic shared memory of
// SWEEP_KIB[b - 1] leaves b blocks (228 KiB an SM, 1 KiB reserved a block).
static const unsigned SWEEP_KIB[] = {200, 112, 75, 56, 44, 37, 31, 0};

static bool sweep() {
    const char *e = getenv("RACE_SWEEP");
    return e && e[0] == '1';
}

static std::vector<Case> cases() {
    std::vector<Case> v;
    if (sweep()) {
        const int es[][2] = {{8, 24}, {4, 32}};
        for (unsigned sm : SWEEP_KIB)
            for (int k : {0, 3})
                for (auto &e : es) v.push_back({k, e[0], e[1], sm});
        return v;
    }
    const int es[][2] = {{8, 24}, {4, 32}};
    for (unsigned sm : {0u, 112u})
        for (int k = 0; k < 5; k++)
            for (auto &e : es) v.push_back({k, e[0], e[1], sm});
    return v;
}

static void *A;

template <typename T>
static void launch_t(const Case &c) {
    unsigned block = 256;
    unsigned grid = (unsigned)(N_BYTES / sizeof(T) / block);
    size_t smem = (size_t)c.smem_kib * 1024;
    // k_rwd keeps v in the dynamic shared memory (a block's 256 values).
    if (c.kind >= 1 && c.kind <= 3 && smem < 256 * sizeof(T)) smem = 256 * sizeof(T);
    void (*fns[])(T *, int, int) = {k_rw<T>, k_rwd<T>, k_rwd<T>, k_rwd<T>, k_cg<T>};
    fns[c.kind]<<<grid, block, smem>>>((T *)A, c.stride, WAITS[c.kind]);
}

static void launch(const Case &c) {
    if (c.elem == 8)
        launch_t<double>(c);
    else
        launch_t<float>(c);
}

template <typename T>
static void allow_smem(int optin) {
    void (*fns[])(T *, int, int) = {k_rw<T>, k_rwd<T>, k_cg<T>};
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
    std::vector<unsigned> smems = {0u, 112u};
    if (sweep()) smems.assign(std::begin(SWEEP_KIB), std::end(SWEEP_KIB));
    for (unsigned sm : smems) {
        int nb = -1, nd = -1;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (const void *)k_rw<double>, 256, sm * 1024));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nd, (const void *)k_rwd<double>, 256,
                                                         sm ? sm * 1024 : 256 * sizeof(double)));
        printf("# %s: smem %u KiB: %d blocks of 256 per SM (k_rwd<double>: %d)\n", prop.name, sm, nb, nd);
    }
    const uint64_t bytes = 33 * N_BYTES;
    CK(cudaMalloc(&A, bytes));
    CK(cudaMemset(A, 0, bytes));
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
        fprintf(stderr, "usage: race list | time FILE.csv | ncu [FROM TO [REPS]]\n");
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
