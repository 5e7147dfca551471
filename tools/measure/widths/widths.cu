// Element width and block size: seed 002's offset kernel (offset 0) and its
// read-only and write-only halves, with 4-, 8- and 16-byte elements (float,
// double, float4) over 4 and 32 MiB, blocks of 32 .. 1024 threads; and an
// empty kernel over a grid of blocks x block sizes, to separate a per-block
// launch cost from a per-warp one.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o widths widths.cu
// Run:    ./widths list             the cases, one per line
//         ./widths time FILE.csv    per case: a correctness check, warm
//                                   back-to-back batches timed with CUDA
//                                   events, and single launches each after
//                                   an L2 flush, timed with CUDA events
//         ./widths ncu [FROM TO [REPS]]
//                                   every case (or cases FROM..TO-1)
//                                   launched once (REPS times); kernels are
//                                   named k_*; meant to run under Nsight
//                                   Compute. Prints
//                                   "CASE,<index>,<kind>,<elem_bytes>,<size_mib>,<block>,<grid>,<rep>"
//                                   before each launch.
//
// Buffers: A, 32 MiB + 1 MiB (the array of every case; it starts at A),
// filled with the byte 0x3f before every case (float 0.746, double 4.8e-4);
// S, 256 MiB, the scratch that cudaMemset writes to push A out of the L2
// before a "cold" event-timed launch; OUT, 256 bytes, zero, that only a
// never-true branch would write.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t A_BYTES = 33 * MiB;
static const uint64_t S_BYTES = 256 * MiB;
// A value no element ever holds (0.746, 4.8e-4, 1.5 or those plus a few
// thousand launches' increments, each +1 from x.746 or x.00048): the read
// kernels compare with it so that the compiler keeps their loads.
#define NEVER 12345.0f
// A thread index no thread has, passed at run time so that the compiler
// cannot prove the empty kernel's branch dead (it knows threadIdx.x < 1024).
static const unsigned NEVER_TID = 1234567u;

// ---- element operations, one overload per width
__device__ __forceinline__ float plus1(float x) { return x + 1.0f; }
__device__ __forceinline__ double plus1(double x) { return x + 1.0; }
__device__ __forceinline__ float4 plus1(float4 x) { return make_float4(x.x + 1.0f, x.y + 1.0f, x.z + 1.0f, x.w + 1.0f); }
__device__ __forceinline__ float total(float x) { return x; }
__device__ __forceinline__ double total(double x) { return x; }
__device__ __forceinline__ float total(float4 x) { return x.x + x.y + x.z + x.w; }
template <typename T>
__device__ __forceinline__ T fill();
template <>
__device__ __forceinline__ float fill<float>() { return 1.5f; }
template <>
__device__ __forceinline__ double fill<double>() { return 1.5; }
template <>
__device__ __forceinline__ float4 fill<float4>() { return make_float4(1.5f, 1.5f, 1.5f, 1.5f); }

// ---- seed 002's offset kernel (workloads/offset.ron), s = 0: one element
// per thread, 32-bit index exactly as the seed, no bounds test (the grid is
// n / block exactly).
template <typename T>
__global__ void k_rw(T *a, int s) {
    int i = blockDim.x * blockIdx.x + threadIdx.x + s;
    a[i] = plus1(a[i]);
}
// Its load alone.
template <typename T>
__global__ void k_ro(const T *a, float *out, int s) {
    int i = blockDim.x * blockIdx.x + threadIdx.x + s;
    T v = a[i];
    if (total(v) == NEVER) out[0] = (float)total(v);
}
// Its store alone.
template <typename T>
__global__ void k_wo(T *a, int s) {
    int i = blockDim.x * blockIdx.x + threadIdx.x + s;
    a[i] = fill<T>();
}
// No memory access: only the launch, the blocks and the warps.
__global__ void k_empty(float *out, unsigned never) {
    if (threadIdx.x == never) out[0] = 1.0f;
}

// One thread waits until ns nanoseconds of the global timer have passed: put
// before a batch so that the host has queued all of the batch's launches
// before the GPU reaches the batch's first event (the batch then measures
// the GPU's back-to-back rate, not the host's launch rate).
__global__ void spin_wait(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

static float *A, *S, *OUT;

// Host-side copies of the element operations, for the checks.
static float h_plus1(float x) { return x + 1.0f; }
static double h_plus1(double x) { return x + 1.0; }
static float4 h_plus1(float4 x) { return make_float4(x.x + 1.0f, x.y + 1.0f, x.z + 1.0f, x.w + 1.0f); }
static bool h_eq(float a, float b) { return memcmp(&a, &b, 4) == 0; }
static bool h_eq(double a, double b) { return memcmp(&a, &b, 8) == 0; }
static bool h_eq(float4 a, float4 b) { return memcmp(&a, &b, 16) == 0; }
template <typename T>
static T h_fill();
template <>
float h_fill<float>() { return 1.5f; }
template <>
double h_fill<double>() { return 1.5; }
template <>
float4 h_fill<float4>() { return make_float4(1.5f, 1.5f, 1.5f, 1.5f); }

struct Case {
    std::string kind;  // rw, ro, wo, empty
    int elem_bytes;    // 4, 8, 16; 0 for empty
    int size_mib;      // 4, 32; 0 for empty
    unsigned block, grid;
    std::function<void(cudaStream_t)> launch;
    // Runs one launch on A (filled with 0x3f) and returns the number of
    // wrong elements: every one must be old + 1 (rw) or 1.5 (wo).
    std::function<uint64_t()> check;
};

// One launch of the case on A as it is now, then compares every element.
template <typename T>
static uint64_t check_elems(const Case &c, bool rw) {
    uint64_t n = (uint64_t)c.size_mib * MiB / sizeof(T);
    std::vector<T> before(n), after(n);
    CK(cudaMemcpy(before.data(), A, n * sizeof(T), cudaMemcpyDeviceToHost));
    if (!rw) CK(cudaMemset(A, 0xff, n * sizeof(T)));  // poison: NaNs
    CK(cudaDeviceSynchronize());
    c.launch(0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(after.data(), A, n * sizeof(T), cudaMemcpyDeviceToHost));
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++) bad += !h_eq(after[i], rw ? h_plus1(before[i]) : h_fill<T>());
    // The element just past the array must be untouched (0x3f bytes).
    unsigned char past[16];
    CK(cudaMemcpy(past, (char *)A + n * sizeof(T), 16, cudaMemcpyDeviceToHost));
    for (int j = 0; j < 16; j++) bad += past[j] != 0x3f;
    return bad;
}

template <typename T>
static void add_mem_cases(std::vector<Case> &v, int eb) {
    for (int mib : {4, 32}) {
        for (unsigned bs : {32u, 64u, 128u, 256u, 512u, 1024u}) {
            uint64_t n = (uint64_t)mib * MiB / sizeof(T);
            unsigned grid = (unsigned)(n / bs);
            Case rw{"rw", eb, mib, bs, grid, [grid, bs](cudaStream_t s) { k_rw<T><<<grid, bs, 0, s>>>((T *)A, 0); }, nullptr};
            rw.check = [rw]() { return check_elems<T>(rw, true); };
            Case ro{"ro", eb, mib, bs, grid, [grid, bs](cudaStream_t s) { k_ro<T><<<grid, bs, 0, s>>>((const T *)A, OUT, 0); }, nullptr};
            ro.check = []() { return (uint64_t)0; };
            Case wo{"wo", eb, mib, bs, grid, [grid, bs](cudaStream_t s) { k_wo<T><<<grid, bs, 0, s>>>((T *)A, 0); }, nullptr};
            wo.check = [wo]() { return check_elems<T>(wo, false); };
            v.push_back(rw);
            v.push_back(ro);
            v.push_back(wo);
        }
    }
}

static std::vector<Case> cases() {
    std::vector<Case> v;
    add_mem_cases<float>(v, 4);
    add_mem_cases<double>(v, 8);
    add_mem_cases<float4>(v, 16);
    for (unsigned bs : {32u, 64u, 128u, 256u, 512u, 1024u}) {
        for (unsigned g : {1024u, 2048u, 4096u, 8192u, 16384u, 32768u}) {
            Case e{"empty", 0, 0, bs, g, [g, bs](cudaStream_t s) { k_empty<<<g, bs, 0, s>>>(OUT, NEVER_TID); }, nullptr};
            e.check = []() { return (uint64_t)0; };
            v.push_back(e);
        }
    }
    return v;
}

static void reset_a() {
    CK(cudaMemset(A, 0x3f, A_BYTES));
    CK(cudaDeviceSynchronize());
}

static float median(std::vector<float> x) {
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    std::vector<Case> all = cases();
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++)
            printf("%zu,%s,%d,%d,%u,%u\n", i, all[i].kind.c_str(), all[i].elem_bytes, all[i].size_mib, all[i].block,
                   all[i].grid);
        return 0;
    }
    int dev = 0;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    printf("# device: %s, compute capability %d.%d, runtime %d, driver %d, %d SMs, L2 %d bytes, ECC %d\n", prop.name,
           prop.major, prop.minor, rt, drv, prop.multiProcessorCount, prop.l2CacheSize, prop.ECCEnabled);
    CK(cudaMalloc(&A, A_BYTES));
    CK(cudaMalloc(&S, S_BYTES));
    CK(cudaMalloc(&OUT, 256));
    CK(cudaMemset(S, 0, S_BYTES));
    CK(cudaMemset(OUT, 0, 256));
    reset_a();
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < std::min(to, all.size()); i++) {
            const Case &c = all[i];
            for (int r = 0; r < reps; r++) {
                reset_a();
                printf("CASE,%zu,%s,%d,%d,%u,%u,%d\n", i, c.kind.c_str(), c.elem_bytes, c.size_mib, c.block, c.grid, r);
                fflush(stdout);
                c.launch(0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        }
        float o[64];
        CK(cudaMemcpy(o, OUT, 256, cudaMemcpyDeviceToHost));
        printf("# out[0] = %g (0 expected: no never-true branch was taken)\n", o[0]);
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: widths list | time FILE.csv | ncu [FROM TO [REPS]]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f,
            "index,kind,elem_bytes,size_mib,block,grid,warm_ns,warm_min_ns,warm_max_ns,launches_per_batch,"
            "cold_ns,cold_min_ns,cold_max_ns,cold_launches,check_bad,warm_queued,warm_retries,enqueue_us_max\n");
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    uint64_t total_bad = 0;
    for (size_t i = 0; i < all.size(); i++) {
        const Case &c = all[i];
        reset_a();
        uint64_t bad = c.check();
        total_bad += bad;
        reset_a();
        // Warm: 2 warm-up launches, one launch timed to size the batches,
        // then 5 batches of R back-to-back launches (R: about 1.5 ms a batch,
        // at least 5, at most 2000); the median batch, per launch.
        for (int w = 0; w < 2; w++) c.launch(0);
        CK(cudaGetLastError());
        float one = 1e9f;
        for (int k = 0; k < 3; k++) {
            CK(cudaEventRecord(e0));
            c.launch(0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            one = std::min(one, ms);
        }
        int R = std::max(5, std::min(2000, (int)(1.5f / std::max(one, 1e-4f))));
        // Each batch starts behind a spin_wait of 0.2 ms + 10 us per launch.
        // A batch that the host had not queued whole (e0, the R launches, e1)
        // before the spin ended is measured again, up to 3 more times
        // (retries counts them); queued = 1 when every kept batch was.
        std::vector<float> warm;
        const double spin_us = 200.0 + 10.0 * R;
        int queued = 1, retries = 0;
        double enqueue_us_max = 0;
        for (int b = 0; b < 5; b++) {
            for (int attempt = 0;; attempt++) {
                spin_wait<<<1, 1>>>((unsigned long long)(spin_us * 1e3));
                CK(cudaGetLastError());
                auto h0 = std::chrono::steady_clock::now();
                CK(cudaEventRecord(e0));
                for (int r = 0; r < R; r++) c.launch(0);
                CK(cudaEventRecord(e1));
                double enq = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count();
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                bool ok = enq < spin_us;
                if (!ok && attempt < 3) {
                    retries++;
                    continue;
                }
                if (!ok) queued = 0;
                enqueue_us_max = std::max(enqueue_us_max, enq);
                warm.push_back(ms / R);
                break;
            }
        }
        // Cold: 11 single launches, each after a 256 MiB cudaMemset of S
        // (pushes A out of the 60 MiB L2; leaves the L2 full of S's dirty
        // lines), timed with events around the launch alone.
        const int COLD = 11;
        std::vector<float> cold;
        for (int k = 0; k < COLD; k++) {
            CK(cudaMemsetAsync(S, k & 0xff, S_BYTES, 0));
            CK(cudaEventRecord(e0));
            c.launch(0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            cold.push_back(ms);
        }
        float wmed = median(warm), cmed = median(cold);
        float wmin = *std::min_element(warm.begin(), warm.end()), wmax = *std::max_element(warm.begin(), warm.end());
        float cmin = *std::min_element(cold.begin(), cold.end()), cmax = *std::max_element(cold.begin(), cold.end());
        fprintf(f, "%zu,%s,%d,%d,%u,%u,%.1f,%.1f,%.1f,%d,%.1f,%.1f,%.1f,%d,%llu,%d,%d,%.1f\n", i, c.kind.c_str(),
                c.elem_bytes, c.size_mib, c.block, c.grid, wmed * 1e6, wmin * 1e6, wmax * 1e6, R, cmed * 1e6,
                cmin * 1e6, cmax * 1e6, COLD, (unsigned long long)bad, queued, retries, enqueue_us_max);
        fflush(f);
        printf("%3zu %-5s elem %2d %2d MiB block %4u grid %6u  warm %9.1f ns  cold %9.1f ns  bad %llu\n", i,
               c.kind.c_str(), c.elem_bytes, c.size_mib, c.block, c.grid, wmed * 1e6, cmed * 1e6,
               (unsigned long long)bad);
        fflush(stdout);
    }
    fclose(f);
    float o[64];
    CK(cudaMemcpy(o, OUT, 256, cudaMemcpyDeviceToHost));
    printf("# out[0] = %g (0 expected: no never-true branch was taken)\n", o[0]);
    printf("# check: %llu bad elements in all (0 expected)\n", (unsigned long long)total_bad);
    return 0;
}
