// Lines in flight over the whole GPU: seed 002's stride kernel at 256 MiB
// with fewer and fewer blocks per SM (unused dynamic shared memory), and
// the latency of one isolated load beside it, so that the question "does a
// DRAM-bound strided kernel go faster or slower with more loads in
// flight, and where do they wait?" is answered by the H200, not assumed.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o inflight inflight.cu
// Run:    ./inflight list             the timed cases, one per line
//         ./inflight time FILE.csv    per case, warm back-to-back batches
//                                     timed with CUDA events
//         ./inflight ncu [FROM TO [REPS]]
//                                     every case (or FROM..TO-1) launched
//                                     once (REPS times), kernels named k_*,
//                                     meant to run under Nsight Compute;
//                                     prints "CASE,<index>,<elem>,<stride>,
//                                     <smem>,<block>,<grid>,<rep>" first
//         ./inflight probe FILE.csv   per probe case, the latency of each
//                                     hop of a pointer chase run by one
//                                     warp alone on its SM while the stride
//                                     kernel runs on the other SMs
//
// k_stride<T>(a, s): seed 002's stride kernel, i = (blockDim.x * blockIdx.x
// + threadIdx.x) * s; a[i] = a[i] + 1, T float or double, over 256 MiB of
// elements (n = 256 MiB / sizeof(T) threads, blocks of 256), the buffer 33 n
// elements as in the seed. The index is computed in 64 bits (float stride
// 32 passes 2^31). Dynamic shared memory it does not use (0, 36, 55, 74,
// 112, 200 KiB) leaves 8, 6, 4, 3, 2, 1 blocks of 256 threads on each SM
// (CC 9.0: 228 KiB an SM, 1 KiB reserved a block; tools/measure/occupancy
// checked this rule against the driver on 592 combinations).
//
// Probe (mode `probe`): k_probe, one warp of which lane 0 chases pointers
// through a 64 MiB buffer whose 128-byte lines are linked in a random order
// (each hop a line not touched since the buffer was written), launched
// first on a stream of its own with 226 KiB of dynamic shared memory, so
// that no block of the stride kernel (1 KiB reserved each) shares its SM.
// It waits for the stride kernel's block 0 to start (k_stride_t<T> is
// k_stride<T> with block 0's thread 0 writing the global timer first, and
// the last block's thread 0 writing it when done), then makes up to HOPS
// hops, writing the global timer after each, and stops early once the
// last block's time is written. Hops timed between the start and that end
// are the loaded latency: the time a load of an SM with nothing else to do
// spends in the queues that the stride kernel's loads fill beyond the SMs
// (crossbar, L2 slices, their miss queues, the DRAM controllers). Case -1
// is the chase alone (the unloaded latency).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../warm.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t N_BYTES = 256 * MiB;
static const uint64_t CHASE_BYTES = 64 * MiB;
static const int HOPS = 6000;

template <typename T>
__global__ void k_stride(T *a, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = a[i] + 1;
}

__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// k_stride with the kernel's start (block 0) and the last block's end
// written to marks[0] and marks[1] (global timer, ns).
template <typename T>
__global__ void k_stride_t(T *a, int s, unsigned long long *marks) {
    if (blockIdx.x == 0 && threadIdx.x == 0) marks[0] = gtimer();
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = a[i] + 1;
    if (blockIdx.x == gridDim.x - 1) {
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            marks[1] = gtimer();
        }
    }
}

// One warp; lane 0 chases from `start` (a word index) until `hops` hops or
// the stride kernel's end mark; ts[h] = global timer after hop h; out[0] =
// hops made, out[1] = the last index (kept so the chase is not removed).
// wait: poll marks[0] (the stride kernel's start) before the first hop,
// giving up after 2 s; 0 for the chase alone.
__global__ void k_probe(const unsigned *chase, unsigned start, int hops, volatile unsigned long long *marks,
                        int wait, unsigned long long *ts, unsigned *out) {
    if (threadIdx.x != 0) return;
    unsigned long long t0 = gtimer();
    if (wait)
        while (marks[0] == 0ull && gtimer() - t0 < 2000000000ull) {
        }
    __shared__ unsigned sink[32];
    unsigned p = start;
    int h = 0;
    ts[0] = gtimer();
    for (; h < hops; h++) {
        // The end mark is read every 16th hop, before the hop's load, so
        // that the two overlap; the data is stored to shared memory before
        // the timer is read, so that the read waits for it.
        unsigned long long m = (wait && (h & 15) == 0) ? marks[1] : 0ull;
        p = __ldcg(chase + p);
        sink[h & 31] = p;
        ts[h + 1] = gtimer();
        if (m != 0ull) break;
    }
    if (p == 0xffffffffu) out[1] = sink[5];
    out[0] = (unsigned)h;
    out[1] = p;
}

struct Case {
    int elem, stride;
    unsigned smem_kib;
};

static std::vector<Case> cases() {
    std::vector<Case> v;
    const unsigned smems[] = {0, 36, 55, 74, 112, 200};  // 8, 6, 4, 3, 2, 1 blocks per SM
    const int d_strides[] = {1, 8, 16, 20, 24, 28, 32};
    const int f_strides[] = {1, 16, 24, 32};
    for (unsigned sm : smems) {
        for (int s : d_strides) v.push_back(Case{8, s, sm});
        for (int s : f_strides) v.push_back(Case{4, s, sm});
    }
    return v;
}

// The probe cases: indices into cases() (-1: the chase alone).
static std::vector<int> probe_cases(const std::vector<Case> &all) {
    std::vector<int> v = {-1};
    for (size_t i = 0; i < all.size(); i++) {
        const Case &c = all[i];
        bool occ = c.smem_kib == 0 || c.smem_kib == 55 || c.smem_kib == 112 || c.smem_kib == 200;
        bool d = c.elem == 8 && (c.stride == 1 || c.stride == 8 || c.stride == 16 || c.stride == 24 || c.stride == 32);
        bool f = c.elem == 4 && (c.stride == 1 || c.stride == 24) && (c.smem_kib == 0 || c.smem_kib == 112);
        if ((occ && d) || f) v.push_back((int)i);
    }
    v.push_back(-1);
    return v;
}

static void *A;
static unsigned *CH;
static unsigned long long *MARKS, *TS;
static unsigned *POUT;

static void launch(const Case &c, cudaStream_t st, bool marks) {
    unsigned block = 256;
    uint64_t n = N_BYTES / c.elem;
    unsigned grid = (unsigned)(n / block);
    size_t smem = (size_t)c.smem_kib * 1024;
    if (c.elem == 8) {
        if (marks)
            k_stride_t<double><<<grid, block, smem, st>>>((double *)A, c.stride, MARKS);
        else
            k_stride<double><<<grid, block, smem, st>>>((double *)A, c.stride);
    } else {
        if (marks)
            k_stride_t<float><<<grid, block, smem, st>>>((float *)A, c.stride, MARKS);
        else
            k_stride<float><<<grid, block, smem, st>>>((float *)A, c.stride);
    }
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    std::vector<Case> all = cases();
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++)
            printf("%zu,%d,%d,%u,256,%llu\n", i, all[i].elem, all[i].stride, all[i].smem_kib * 1024,
                   (unsigned long long)(N_BYTES / all[i].elem / 256));
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# device: %s, %d SMs, smem/SM %zu, optin %zu, reserved/block %zu\n", prop.name,
           prop.multiProcessorCount, prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin,
           prop.reservedSharedMemPerBlock);
    int optin = (int)prop.sharedMemPerBlockOptin;
    CK(cudaFuncSetAttribute((const void *)k_stride<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    CK(cudaFuncSetAttribute((const void *)k_stride<double>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    CK(cudaFuncSetAttribute((const void *)k_stride_t<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    CK(cudaFuncSetAttribute((const void *)k_stride_t<double>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    CK(cudaFuncSetAttribute((const void *)k_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - 1024));
    for (size_t i = 0; i < all.size(); i++) {
        int nb = -1;
        const void *fn = all[i].elem == 8 ? (const void *)k_stride<double> : (const void *)k_stride<float>;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, 256, all[i].smem_kib * 1024));
        if (i % 11 == 0 || i % 11 == 7)
            printf("# smem %u KiB: %d blocks of 256 per SM (elem %d)\n", all[i].smem_kib, nb, all[i].elem);
    }
    const uint64_t a_bytes = 33 * N_BYTES;  // 33 n elements of either size
    CK(cudaMalloc(&A, a_bytes));
    CK(cudaMemset(A, 0, a_bytes));
    CK(cudaDeviceSynchronize());
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < std::min(to, all.size()); i++)
            for (int r = 0; r < reps; r++) {
                const Case &c = all[i];
                printf("CASE,%zu,%d,%d,%u,256,%llu,%d\n", i, c.elem, c.stride, c.smem_kib * 1024,
                       (unsigned long long)(N_BYTES / c.elem / 256), r);
                fflush(stdout);
                launch(c, 0, false);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        return 0;
    }
    if ((mode != "time" && mode != "probe") || argc < 3) {
        fprintf(stderr, "usage: inflight list | time FILE.csv | ncu [FROM TO [REPS]] | probe FILE.csv\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    if (mode == "time") {
        fprintf(f, "index,elem,stride,smem,block,grid,warm_ns,warm_min_ns,warm_max_ns,launches_per_batch\n");
        for (size_t i = 0; i < all.size(); i++) {
            const Case &c = all[i];
            WarmTime w = warm_batches([&] { launch(c, 0, false); });
            fprintf(f, "%zu,%d,%d,%u,256,%llu,%.1f,%.1f,%.1f,%d\n", i, c.elem, c.stride, c.smem_kib * 1024,
                    (unsigned long long)(N_BYTES / c.elem / 256), w.med_ns, w.min_ns, w.max_ns, w.per_batch);
            fflush(f);
            printf("%2zu elem %d stride %2d smem %3u KiB  warm %10.1f ns\n", i, c.elem, c.stride, c.smem_kib,
                   w.med_ns);
            fflush(stdout);
        }
        fclose(f);
        return 0;
    }
    // probe: the chase buffer, its lines linked in a random cycle (fixed seed).
    const unsigned lines = (unsigned)(CHASE_BYTES / 128), wpl = 32;  // words a line
    std::vector<unsigned> order(lines), h_chase(CHASE_BYTES / 4, 0);
    for (unsigned k = 0; k < lines; k++) order[k] = k;
    std::mt19937_64 rng(12345);
    std::shuffle(order.begin(), order.end(), rng);
    for (unsigned k = 0; k < lines; k++) h_chase[order[k] * wpl] = order[(k + 1) % lines] * wpl;
    CK(cudaMalloc(&CH, CHASE_BYTES));
    CK(cudaMemcpy(CH, h_chase.data(), CHASE_BYTES, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&MARKS, 2 * sizeof(unsigned long long)));
    CK(cudaMalloc(&TS, (HOPS + 1) * sizeof(unsigned long long)));
    CK(cudaMalloc(&POUT, 2 * sizeof(unsigned)));
    cudaStream_t sp, ss;
    CK(cudaStreamCreateWithFlags(&sp, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&ss, cudaStreamNonBlocking));
    fprintf(f, "probe,case,elem,stride,smem,hops,kernel_ns,loaded_hops,median_ns,mean_ns,p10_ns,p90_ns\n");
    std::vector<int> pc = probe_cases(all);
    unsigned pos = order[0] * wpl;
    std::vector<unsigned long long> ts(HOPS + 1);
    for (size_t q = 0; q < pc.size(); q++) {
        int ci = pc[q];
        // A warm launch of the stride kernel first (its buffer's pages mapped, the clocks up).
        if (ci >= 0) {
            launch(all[ci], ss, false);
            CK(cudaStreamSynchronize(ss));
        }
        CK(cudaMemset(MARKS, 0, 2 * sizeof(unsigned long long)));
        CK(cudaDeviceSynchronize());
        int hops = ci >= 0 ? HOPS : 1000;
        k_probe<<<1, 32, (size_t)optin - 1024, sp>>>(CH, pos, hops, MARKS, ci >= 0 ? 1 : 0, TS, POUT);
        CK(cudaGetLastError());
        if (ci >= 0) launch(all[ci], ss, true);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        unsigned out[2];
        unsigned long long marks[2];
        CK(cudaMemcpy(out, POUT, sizeof out, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(marks, MARKS, sizeof marks, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ts.data(), TS, (HOPS + 1) * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        pos = out[1];
        int made = (int)out[0];
        // Hops that began after the stride kernel started and ended before its last block did.
        std::vector<float> lat;
        for (int h = 1; h <= made; h++) {
            bool in = ci < 0 || (ts[h - 1] >= marks[0] && ts[h] <= marks[1]);
            if (in) lat.push_back((float)(ts[h] - ts[h - 1]));
        }
        // The first tenth of the loaded hops is left out (the kernel's first waves).
        size_t skip = ci >= 0 ? lat.size() / 10 : 0;
        std::vector<float> l(lat.begin() + skip, lat.end());
        float med = 0, mean = 0, p10 = 0, p90 = 0;
        if (!l.empty()) {
            for (float x : l) mean += x;
            mean /= l.size();
            std::sort(l.begin(), l.end());
            med = l[l.size() / 2];
            p10 = l[l.size() / 10];
            p90 = l[l.size() * 9 / 10];
        }
        long long kns = ci >= 0 ? (long long)(marks[1] - marks[0]) : 0;
        int e = ci >= 0 ? all[ci].elem : 0, s = ci >= 0 ? all[ci].stride : 0;
        unsigned sm = ci >= 0 ? all[ci].smem_kib * 1024 : 0;
        fprintf(f, "%zu,%d,%d,%d,%u,%d,%lld,%zu,%.1f,%.1f,%.1f,%.1f\n", q, ci, e, s, sm, made, kns, l.size(), med,
                mean, p10, p90);
        fflush(f);
        printf("probe %2zu case %3d elem %d stride %2d smem %6u: %5d hops, kernel %9lld ns, %5zu loaded, median %7.1f "
               "mean %7.1f p10 %7.1f p90 %7.1f ns\n",
               q, ci, e, s, sm, made, kns, l.size(), med, mean, p10, p90);
        fflush(stdout);
    }
    fclose(f);
    return 0;
}
