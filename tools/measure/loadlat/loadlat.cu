// The latency of a load under load: seed 002's kernels on the H200, with
// each warp's load timed by the SM's cycle counter.
//
// Build:  nvcc -O3 -arch=sm_90 -o loadlat loadlat.cu
// Run:    ./loadlat            one CSV line per case (header first)
//         ./loadlat once       each case's plain kernel launched once, in the
//                              order above (to run under Nsight Compute)
//         ./loadlat spread     call 2: the stride kernel at large strides,
//                              its load alone (ro) and whole (rw), 4 and
//                              256 MiB, 8 and 2 blocks an SM: the spread of
//                              each warp's load latency (below)
//         ./loadlat window     call 3: call 2's cases at 256 MiB beside the
//                              same loads storing into an 8 MiB window the
//                              L2 keeps (no DRAM writes): is the tail the
//                              DRAM's writes or the L2's stores?
//         ./loadlat trace DIR [more]
//                              calls 4 and 5: the stride kernel at 256 MiB,
//                              each warp's load recorded with its SM and
//                              both clocks, summarised into four CSVs in
//                              DIR (`trace_case` says what each holds)
//         ./loadlat mid DIR [occ]
//                              call 6: the stride kernel's load and store
//                              timed apart (`mid_case`); with `occ`, call
//                              8: then at 1 to 8 blocks an SM
//         ./loadlat stcost     call 7: a store's cost with its line in the
//                              L2 and without (`st_case`)
//         ./loadlat role       call 9: half the SMs storing into the lines
//                              they load, half into a second buffer
//                              (`role_case`)
//         ./loadlat hit DIR    call 10: each warp's L2 hit beside the
//                              load and the store (`hit_case`)
//         ./loadlat life       per case (and the offsets at 4 MiB), after
//                              one plain launch: the mean cycles from a
//                              warp's entry to its load and to its store's
//                              issue, a block's life (first entry to last
//                              store issue), the SMs used, their mean span
//                              (first entry to last store issue) and the
//                              mean number of blocks resident on an SM
//                              (sum of block lives over the span)
//
// Kernels (as workloads/offset.ron and workloads/stride.ron):
//     offset: a[t + k] = a[t + k] + 1        stride: a[t * k] = a[t * k] + 1
// with t the global thread index, 256 threads per block, nMB MiB of
// elements (float or double, one per thread). Each case is timed twice:
//   plain_us  the kernel as is: median of 7 launches (CUDA events), after
//             two warm-up launches;
//   timed_us  the same kernel with lane 0 of each warp reading clock64
//             before the load and after the store that uses the loaded
//             value (so the second read waits for the data), writing the
//             difference to lat[warp]: median of 3 launches.
// lat_* are over every warp of the last timed launch, in SM cycles: the
// load's issue to its data (plus the add and the store's issue, a few
// cycles), the quantity gpusim reports as load_latency_cycles.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"

template <typename T>
__global__ void fill(T* a, uint64_t n, T v) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        a[i] = v;
}

template <typename T, bool STRIDE>
__global__ void plain(T* a, uint64_t k) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = STRIDE ? t * k : t + k;
    a[i] = a[i] + (T)1;
}

template <typename T, bool STRIDE>
__global__ void timed(T* a, uint64_t k, uint32_t* lat) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = STRIDE ? t * k : t + k;
    long long t0 = clock64();
    T v = a[i] + (T)1;
    a[i] = v;
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) lat[t >> 5] = (uint32_t)(t1 - t0);
}

// The life of warps and blocks: lane 0 of each warp reads clock64 at entry
// (before its indices are read), before the load and after the store;
// warp 0 of each block records the SM it runs on. clock64 is the SM's own
// counter, so times compare within an SM.
template <typename T, bool STRIDE>
__global__ void life(T* a, uint64_t k, long long* ts, uint32_t* sm) {
    long long t_s = clock64();
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = STRIDE ? t * k : t + k;
    long long t0 = clock64();
    T v = a[i] + (T)1;
    a[i] = v;
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) {
        uint64_t w = t >> 5;
        ts[3 * w] = t_s;
        ts[3 * w + 1] = t0;
        ts[3 * w + 2] = t1;
        if (threadIdx.x == 0) {
            uint32_t id;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
            sm[blockIdx.x] = id;
        }
    }
}

// Call 2: the stride kernel's load timed as in `timed`, with the store
// (RW) or without it (the value compared instead, so that the second clock
// read still waits for it), and `extern` shared memory the kernel does not
// use, sized at launch to leave 8 or 2 blocks an SM.
template <typename T, bool RW>
__global__ void timed_s(T* a, uint64_t k, uint32_t* lat) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = t * k;
    long long t0 = clock64();
    T v = a[i];
    if (RW)
        a[i] = v + (T)1;
    else if (v == (T)-7)
        a[i] = v;  // never: every element is 1 or more
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) lat[t >> 5] = (uint32_t)(t1 - t0);
}

// Call 3: the stride kernel's load timed as in `timed_s`, its value stored
// not back but into a window of `w` elements (8 MiB) at `b`, at the same
// stride: the same store requests into the L2, a line a lane, into lines
// that stay there (the window is touched as often as the stream moves 8 MiB
// on), so that the stores cost the DRAM no writes.
template <typename T>
__global__ void timed_w(const T* a, T* b, uint64_t k, uint64_t w, uint32_t* lat) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = t * k;
    long long t0 = clock64();
    T v = a[i];
    b[i % w] = v + (T)1;
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) lat[t >> 5] = (uint32_t)(t1 - t0);
}

// Call 4: each warp's load as in `timed_s` (MODE 0: no store, 1: stored
// back, 2: stored into the 8 MiB window of `timed_w`), with where and when:
// the SM, clock64 before and after (that SM's cycles), and %globaltimer
// before and after (nanoseconds, one clock for the whole GPU), so that the
// latencies can be placed in the SM's order of issue and in the kernel's
// time.
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    return g;
}
template <typename T, int MODE>
__global__ void traced(T* a, T* b, uint64_t k, uint64_t w, uint32_t* sm, long long* c,
                       unsigned long long* g) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = t * k;
    unsigned long long g0 = global_ns();
    long long t0 = clock64();
    T v = a[i];
    if (MODE == 1)
        a[i] = v + (T)1;
    else if (MODE == 2)
        b[i % w] = v + (T)1;
    else if (v == (T)-7)
        a[i] = v;  // never: every element is 1 or more
    long long t1 = clock64();
    unsigned long long g1 = global_ns();
    if ((threadIdx.x & 31) == 0) {
        uint64_t x = t >> 5;
        uint32_t id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        sm[x] = id;
        c[2 * x] = t0;
        c[2 * x + 1] = t1;
        g[2 * x] = g0;
        g[2 * x + 1] = g1;
    }
}
// Call 6: the load and the store of `traced`'s rw apart. `mid` is read
// once the loaded value has been used (an add in volatile asm, which the
// warp cannot issue before the data is in, and which the clock read after
// it cannot pass), so t_mid - t0 is the load's latency and t1 - t_mid the
// store's wait to issue. WO: no load (the value is the thread's index),
// t_mid = t0: the store alone.
template <typename T>
__device__ __forceinline__ T add_one(T v);
template <>
__device__ __forceinline__ float add_one<float>(float v) {
    float r;
    asm volatile("add.f32 %0, %1, 0f3F800000;" : "=f"(r) : "f"(v));
    return r;
}
template <>
__device__ __forceinline__ double add_one<double>(double v) {
    double r;
    asm volatile("add.f64 %0, %1, 0d3FF0000000000000;" : "=d"(r) : "d"(v));
    return r;
}
template <typename T, bool WO>
__global__ void traced_mid(T* a, uint64_t k, uint32_t* sm, long long* c) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = t * k;
    long long t0 = clock64();
    T v = WO ? (T)threadIdx.x : a[i];
    T u = add_one(v);
    long long tm = clock64();
    a[i] = u;
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) {
        uint64_t x = t >> 5;
        uint32_t id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        sm[x] = id;
        c[3 * x] = t0;
        c[3 * x + 1] = tm;
        c[3 * x + 2] = t1;
    }
}
// Call 10: a warp's L2 hit beside the stride kernel's load and store.
// Each warp first reads one line of a small buffer that every warp reads
// (`PROBE_LINES` lines, far fewer than the L2 holds, past the L1 with
// ld.global.cg: an L2 hit), timed as `traced_mid` times the load; then
// the kernel's load and store as there. Where a slow SM's hit is slow too,
// its requests wait on their way to the L2 or back (its own path, or its
// partition's); where its hit is as quick as a fast SM's, they wait
// beyond the slices that answer hits.
static const uint64_t PROBE_LINES = 2048;
template <typename T>
__global__ void traced_hit(T* a, uint64_t k, const float* probe, uint32_t* sm, long long* c) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = t * k;
    uint64_t x = t >> 5;
    long long t0 = clock64();
    float p = __ldcg(probe + (x % PROBE_LINES) * 32 + (threadIdx.x & 31));
    float q = add_one(p);
    long long tp = clock64();
    T v = a[i];
    T u = add_one(v);
    long long tm = clock64();
    a[i] = u + (T)(q * 0.0f);
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) {
        uint32_t id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        sm[x] = id;
        c[4 * x] = t0;
        c[4 * x + 1] = tp;
        c[4 * x + 2] = tm;
        c[4 * x + 3] = t1;
    }
}
// Call 7: what a store costs when its line is in the L2 and when it is
// not. Each thread stores into its own line (stride 32 floats, the stride
// kernel's store), 4 bytes of one sector (W = 1) or the whole sector (W =
// 8 floats, two 16-byte stores); lane 0 times the store's issue. `touch`
// loads the same sectors first (the lines then in the L2, clean); `sweep`
// reads another buffer through the L2 (the lines gone).
template <int W>
__global__ void st_timed(float* a, uint32_t* sm, long long* c) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    float* p = a + t * 32;
    long long t0 = clock64();
    if (W == 1) {
        p[0] = 1.0f;
    } else {
        float4 v = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
        reinterpret_cast<float4*>(p)[0] = v;
        reinterpret_cast<float4*>(p)[1] = v;
    }
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) {
        uint64_t x = t >> 5;
        uint32_t id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        sm[x] = id;
        c[2 * x] = t0;
        c[2 * x + 1] = t1;
    }
}
__global__ void touch(const float* a, float* sink) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    float v = a[t * 32];
    if (v == -7.0f) sink[0] = v;
}
__global__ void sweep(const float4* b, uint64_t n, float* sink) {
    float s = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        s += b[i].x;
    if (s == -7.0f) sink[0] = s;
}
// Call 9: the SMs split by role within one kernel. Every thread loads
// a[i] (i = t * k) and stores the value plus one either back into a[i]
// (rw: the line just loaded) or into b[i] (cp: a line the L2 does not
// hold), as its SM's number says (`flip` swaps the halves); the three
// clock reads of `traced_mid`.
template <typename T>
__global__ void traced_role(T* a, T* b, uint64_t k, uint32_t flip, uint32_t* sm, long long* c) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t i = t * k;
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    T* dst = ((id ^ flip) & 1) ? a : b;
    long long t0 = clock64();
    T v = a[i];
    T u = add_one(v);
    long long tm = clock64();
    dst[i] = u;
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) {
        uint64_t x = t >> 5;
        sm[x] = id;
        c[3 * x] = t0;
        c[3 * x + 1] = tm;
        c[3 * x + 2] = t1;
    }
}
// The times of `reps` launches (CUDA events around `launch` alone, each
// after its own `setup`), us, sorted.
template <typename S, typename L>
static std::vector<double> times_us(S setup, L launch, int reps) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> us;
    for (int r = 0; r < reps; r++) {
        setup();
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float x;
        CK(cudaEventElapsedTime(&x, e0, e1));
        us.push_back(1000.0 * x);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(us.begin(), us.end());
    return us;
}
// The median time of `reps` launches (CUDA events), us.
template <typename L>
static double median_us(L launch, int reps) {
    return times_us([] {}, launch, reps)[reps / 2];
}

// Prints the latencies of the last timed launch (`lat`, one per warp):
// ",warps,mean,p10,p50,p90,p99" and, with `max`, ",max"; ends the line.
static void print_latencies(const uint32_t* lat, uint64_t warps, std::vector<uint32_t>& h, bool max) {
    h.resize(warps);
    CK(cudaMemcpy(h.data(), lat, warps * 4, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (uint32_t x : h) sum += x;
    std::sort(h.begin(), h.end());
    auto pc = [&](double f) { return h[std::min<uint64_t>(warps - 1, (uint64_t)(f * warps))]; };
    printf(",%llu,%.1f,%u,%u,%u,%u", (unsigned long long)warps, sum / warps, pc(0.1), pc(0.5), pc(0.9),
           pc(0.99));
    if (max) printf(",%u", h[warps - 1]);
    printf("\n");
    fflush(stdout);
}

// One case of calls 2 and 3: `kernel` (its name in the CSV `name`) over
// nMB MiB of `elem`-byte elements at stride k, with `smem` bytes of dynamic
// shared memory, launched by `launch(blocks)`: two warm-up launches, the
// median of three, and the last one's latencies.
template <typename K, typename L>
static void spread_case(const char* name, int elem, uint64_t nMB, uint64_t k, int smem, K kernel,
                        L launch, const uint32_t* lat, std::vector<uint32_t>& h) {
    uint64_t n = nMB * (1ull << 20) / elem;
    uint64_t blocks = n / 256;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
    auto go = [&] { launch(blocks); };
    median_us(go, 2);
    double us = median_us(go, 3);
    printf("%s,%d,%llu,%llu,%d,%d,%.2f", name, elem, (unsigned long long)nMB, (unsigned long long)k, smem,
           per_sm, us);
    print_latencies(lat, n / 32, h, true);
}

// Call 2's case: `timed_s`, with its store (RW) or without.
template <typename T, bool RW>
static void run_spread(int elem, uint64_t nMB, uint64_t k, int smem, T* a, uint32_t* lat,
                       std::vector<uint32_t>& h) {
    spread_case(RW ? "rw" : "ro", elem, nMB, k, smem, timed_s<T, RW>,
                [&](uint64_t blocks) { timed_s<T, RW><<<blocks, 256, smem>>>(a, k, lat); }, lat, h);
}

// Call 3's case: `timed_w`, storing into the 8 MiB window at `b`.
template <typename T>
static void run_window(int elem, uint64_t nMB, uint64_t k, int smem, T* a, T* b, uint32_t* lat,
                       std::vector<uint32_t>& h) {
    uint64_t w = (8ull << 20) / sizeof(T);
    spread_case("win", elem, nMB, k, smem, timed_w<T>,
                [&](uint64_t blocks) { timed_w<T><<<blocks, 256, smem>>>(a, b, k, w, lat); }, lat, h);
}

// The share of the variance of `v` that lies between the groups
// `group[i]` (0 to n - 1): 1 when the values within each group are alike,
// 0 when every group's mean is the overall mean.
static double between_share(const std::vector<double>& v, const std::vector<uint32_t>& group, size_t n) {
    std::vector<double> sum(n, 0), cnt(n, 0);
    double mean = 0, ss = 0, between = 0;
    for (size_t i = 0; i < v.size(); i++) {
        sum[group[i]] += v[i];
        cnt[group[i]] += 1;
        mean += v[i];
    }
    mean /= v.size();
    for (double x : v) ss += (x - mean) * (x - mean);
    for (size_t g = 0; g < n; g++)
        if (cnt[g] > 0) between += cnt[g] * (sum[g] / cnt[g] - mean) * (sum[g] / cnt[g] - mean);
    return ss > 0 ? between / ss : 0.0;
}
// Call 4's per-warp records of one launch, and what is made of them.
struct Traces {
    uint32_t* sm;
    long long* c;
    unsigned long long* g;
};
struct TraceOut {
    FILE *summary, *series, *per_sm, *raw;
};
// The value at fraction f of sorted `v`.
template <typename V>
static V at_frac(const std::vector<V>& v, double f) {
    return v[std::min<size_t>(v.size() - 1, (size_t)(f * v.size()))];
}
// One case of call 4: two warm-up launches, the median time of three, and
// the last one's records:
//   summary  percentiles of the latency (issue to data, cycles); the
//            globaltimer's tick; per SM, in its order of issue, how many
//            warps of the same SM issued later completed earlier
//            (overtaken: 0 for every warp where the SM's loads are served
//            first come, first served) and how many were in flight when
//            it issued (ahead), with the mean latency per fifth of ahead;
//            the share of the latency's variance between 2 us bins of the
//            kernel's time and between SMs (1: all of it)
//   series   per 2 us of the kernel (by issue, globaltimer): warps issued,
//            mean, p50, p90 and max latency
//   per_sm   per SM: warps, mean, p50, p99
//   raw      every warp of SMs 0 and 1: issue (cycles from the SM's first),
//            latency, issue and completion (ns from the kernel's first)
template <typename T, int MODE>
static void trace_case(const char* name, int elem, uint64_t k, int smem, T* a, T* b, const Traces& tr,
                       const TraceOut& out) {
    uint64_t n = 256 * (1ull << 20) / elem;
    uint64_t blocks = n / 256, warps = n / 32;
    uint64_t w = (8ull << 20) / sizeof(T);
    auto kernel = traced<T, MODE>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
    auto go = [&] { kernel<<<blocks, 256, smem>>>(a, b, k, w, tr.sm, tr.c, tr.g); };
    median_us(go, 2);
    double us = median_us(go, 3);
    std::vector<uint32_t> sm(warps);
    std::vector<long long> c(2 * warps);
    std::vector<unsigned long long> g(2 * warps);
    CK(cudaMemcpy(sm.data(), tr.sm, warps * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c.data(), tr.c, warps * 16, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g.data(), tr.g, warps * 16, cudaMemcpyDeviceToHost));
    std::vector<double> lat(warps);
    unsigned long long gmin = ~0ull;
    for (uint64_t x = 0; x < warps; x++) {
        lat[x] = (double)(c[2 * x + 1] - c[2 * x]);
        gmin = std::min(gmin, g[2 * x]);
    }
    std::vector<double> sorted = lat;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double x : lat) mean += x;
    mean /= warps;
    // The globaltimer's tick: the smallest step between distinct readings.
    std::vector<unsigned long long> gs(g);
    std::sort(gs.begin(), gs.end());
    unsigned long long tick = ~0ull;
    for (size_t j = 1; j < gs.size(); j++)
        if (gs[j] != gs[j - 1]) tick = std::min(tick, gs[j] - gs[j - 1]);
    // Per SM, in its order of issue.
    std::vector<std::vector<uint64_t>> by_sm(1024);
    for (uint64_t x = 0; x < warps; x++) by_sm[sm[x] & 1023].push_back(x);
    std::vector<double> overtaken(warps, 0), ahead(warps, 0);
    for (int m = 0; m < 1024; m++) {
        auto& v = by_sm[m];
        if (v.empty()) continue;
        std::sort(v.begin(), v.end(), [&](uint64_t p, uint64_t q) { return c[2 * p] < c[2 * q]; });
        std::vector<long long> t1s;
        for (uint64_t x : v) t1s.push_back(c[2 * x + 1]);
        std::sort(t1s.begin(), t1s.end());
        // ahead: issued earlier and not yet complete (a warp completes after it issues).
        for (size_t r = 0; r < v.size(); r++) {
            long long t0 = c[2 * v[r]];
            size_t before = std::lower_bound(v.begin(), v.end(), t0,
                                             [&](uint64_t p, long long t) { return c[2 * p] < t; }) -
                            v.begin();
            size_t done = std::upper_bound(t1s.begin(), t1s.end(), t0) - t1s.begin();
            ahead[v[r]] = (double)before - (double)done;
        }
        // overtaken: issued later, completed earlier (a Fenwick tree over
        // completion ranks, filled from the last issued back).
        std::vector<uint32_t> fen(v.size() + 1, 0);
        for (size_t r = v.size(); r-- > 0;) {
            long long t1 = c[2 * v[r] + 1];
            size_t rank = std::lower_bound(t1s.begin(), t1s.end(), t1) - t1s.begin();
            uint64_t cnt = 0;
            for (size_t j = rank; j > 0; j -= j & (~j + 1)) cnt += fen[j];
            overtaken[v[r]] = (double)cnt;
            for (size_t j = rank + 1; j <= v.size(); j += j & (~j + 1)) fen[j]++;
        }
        std::vector<double> l;
        double s = 0;
        for (uint64_t x : v) {
            l.push_back(lat[x]);
            s += lat[x];
        }
        std::sort(l.begin(), l.end());
        double mm = s / v.size();
        fprintf(out.per_sm, "%s,%d,%llu,%d,%d,%zu,%.1f,%.0f,%.0f\n", name, elem, (unsigned long long)k,
                per_sm, m, v.size(), mm, at_frac(l, 0.5), at_frac(l, 0.99));
        if (m < 2 && out.raw)
            for (uint64_t x : v)
                fprintf(out.raw, "%s,%d,%llu,%d,%d,%lld,%.0f,%llu,%llu\n", name, elem, (unsigned long long)k,
                        per_sm, m, c[2 * x] - c[2 * v[0]], lat[x], g[2 * x] - gmin, g[2 * x + 1] - gmin);
    }
    // The kernel's time in 2 us bins, by issue.
    std::vector<std::vector<double>> bins;
    std::vector<uint32_t> bin_of(warps), sm_of(warps);
    for (uint64_t x = 0; x < warps; x++) {
        size_t bi = (g[2 * x] - gmin) / 2000;
        if (bi >= bins.size()) bins.resize(bi + 1);
        bins[bi].push_back(lat[x]);
        bin_of[x] = (uint32_t)bi;
        sm_of[x] = sm[x] & 1023;
    }
    for (size_t bi = 0; bi < bins.size(); bi++) {
        auto& l = bins[bi];
        if (l.empty()) continue;
        double s = 0;
        for (double x : l) s += x;
        double mm = s / l.size();
        std::sort(l.begin(), l.end());
        fprintf(out.series, "%s,%d,%llu,%d,%zu,%zu,%.1f,%.0f,%.0f,%.0f\n", name, elem, (unsigned long long)k,
                per_sm, bi * 2, l.size(), mm, at_frac(l, 0.5), at_frac(l, 0.9), l.back());
    }
    // Mean latency per fifth of `ahead`.
    std::vector<uint64_t> order(warps);
    for (uint64_t x = 0; x < warps; x++) order[x] = x;
    std::sort(order.begin(), order.end(), [&](uint64_t p, uint64_t q) { return ahead[p] < ahead[q]; });
    double q[5] = {0, 0, 0, 0, 0}, qa[5] = {0, 0, 0, 0, 0};
    for (uint64_t r = 0; r < warps; r++) {
        int f = (int)(r * 5 / warps);
        q[f] += lat[order[r]];
        qa[f] += ahead[order[r]];
    }
    std::vector<double> ov(overtaken), ah(ahead);
    std::sort(ov.begin(), ov.end());
    std::sort(ah.begin(), ah.end());
    double zero = (double)(std::upper_bound(ov.begin(), ov.end(), 0.0) - ov.begin()) / warps;
    double ovm = 0;
    for (double x : ov) ovm += x;
    fprintf(out.summary, "%s,%d,%llu,%d,%d,%.2f,%llu,%.1f,%.0f,%.0f,%.0f,%.0f,%.0f,%llu,%.2f,%.0f,%.0f,%.0f,%.3f,%.1f,%.0f",
            name, elem, (unsigned long long)k, smem, per_sm, us, (unsigned long long)warps, mean,
            at_frac(sorted, 0.1), at_frac(sorted, 0.5), at_frac(sorted, 0.9), at_frac(sorted, 0.99), sorted.back(),
            tick, ovm / warps, at_frac(ov, 0.5), at_frac(ov, 0.9), at_frac(ov, 0.99), zero,
            [&] { double s = 0; for (double x : ah) s += x; return s / warps; }(), at_frac(ah, 0.5));
    for (int f = 0; f < 5; f++) fprintf(out.summary, ",%.0f,%.1f", q[f] / (warps / 5), qa[f] / (warps / 5));
    fprintf(out.summary, ",%.3f,%.3f\n", between_share(lat, bin_of, bins.size()), between_share(lat, sm_of, 1024));
    for (FILE* f : {out.summary, out.series, out.per_sm, out.raw})
        if (f) fflush(f);
}
// One case of call 6: two warm-up launches, the median of three, and the
// last one's records: per SM (`out`) the warps it ran and the mean and
// p90 of the load's latency (t_mid - t0) and of the store's wait to issue
// (t1 - t_mid); on stdout the same over all warps, and the share of each
// part's variance between SMs.
template <typename T, bool WO>
static void mid_case(const char* name, int elem, uint64_t k, int smem, T* a, uint32_t* smb, long long* cb,
                     FILE* out) {
    uint64_t n = 256 * (1ull << 20) / elem;
    uint64_t blocks = n / 256, warps = n / 32;
    auto kernel = traced_mid<T, WO>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
    auto go = [&] { kernel<<<blocks, 256, smem>>>(a, k, smb, cb); };
    median_us(go, 2);
    double us = median_us(go, 3);
    std::vector<uint32_t> sm(warps);
    std::vector<long long> c(3 * warps);
    CK(cudaMemcpy(sm.data(), smb, warps * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c.data(), cb, warps * 24, cudaMemcpyDeviceToHost));
    std::vector<std::vector<double>> ld(1024), st(1024);
    std::vector<double> all_ld, all_st;
    std::vector<uint32_t> sm_of(warps);
    for (uint64_t x = 0; x < warps; x++) {
        double l = (double)(c[3 * x + 1] - c[3 * x]), s = (double)(c[3 * x + 2] - c[3 * x + 1]);
        sm_of[x] = sm[x] & 1023;
        ld[sm_of[x]].push_back(l);
        st[sm_of[x]].push_back(s);
        all_ld.push_back(l);
        all_st.push_back(s);
    }
    double bl = between_share(all_ld, sm_of, 1024), bs = between_share(all_st, sm_of, 1024);
    auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 0.0 : s / v.size();
    };
    double ml = mean(all_ld), ms = mean(all_st);
    for (int m = 0; m < 1024; m++) {
        if (ld[m].empty()) continue;
        double a1 = mean(ld[m]), a2 = mean(st[m]);
        std::sort(ld[m].begin(), ld[m].end());
        std::sort(st[m].begin(), st[m].end());
        fprintf(out, "%s,%d,%llu,%d,%d,%zu,%.1f,%.0f,%.1f,%.0f\n", name, elem, (unsigned long long)k, per_sm, m,
                ld[m].size(), a1, at_frac(ld[m], 0.9), a2, at_frac(st[m], 0.9));
    }
    fflush(out);
    std::sort(all_ld.begin(), all_ld.end());
    std::sort(all_st.begin(), all_st.end());
    printf("%s,%d,%llu,%d,%d,%.2f,%llu,%.1f,%.0f,%.0f,%.0f,%.0f,%.1f,%.0f,%.0f,%.0f,%.0f,%.3f,%.3f\n", name, elem,
           (unsigned long long)k, smem, per_sm, us, (unsigned long long)warps, ml, at_frac(all_ld, 0.1),
           at_frac(all_ld, 0.5), at_frac(all_ld, 0.9), at_frac(all_ld, 0.99), ms, at_frac(all_st, 0.1),
           at_frac(all_st, 0.5), at_frac(all_st, 0.9), at_frac(all_st, 0.99), bl, bs);
    fflush(stdout);
}
// One case of call 7: `reps` times, the L2 swept (512 MiB read), the lines
// touched where `present`, then the store kernel timed alone (CUDA
// events); prints the median time and the last launch's store waits (issue
// of the store to issue of the next instruction, per warp, cycles) and
// their share of variance between SMs.
template <int W>
static void st_case(uint64_t mb, bool present, float* a, const float4* sweep_buf, float* sink, uint32_t* smb,
                    long long* cb, int reps) {
    uint64_t lines = mb * (1ull << 20) / 128, blocks = lines / 256, warps = lines / 32;
    std::vector<double> us = times_us(
        [&] {
            sweep<<<132 * 8, 256>>>(sweep_buf, (512ull << 20) / 16, sink);
            if (present) touch<<<blocks, 256>>>(a, sink);
        },
        [&] { st_timed<W><<<blocks, 256>>>(a, smb, cb); }, reps);
    std::vector<uint32_t> sm(warps);
    std::vector<long long> c(2 * warps);
    CK(cudaMemcpy(sm.data(), smb, warps * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c.data(), cb, warps * 16, cudaMemcpyDeviceToHost));
    std::vector<double> w(warps);
    std::vector<uint32_t> sm_of(warps);
    double mean = 0;
    for (uint64_t x = 0; x < warps; x++) {
        w[x] = (double)(c[2 * x + 1] - c[2 * x]);
        mean += w[x];
        sm_of[x] = sm[x] & 1023;
    }
    mean /= warps;
    double between = between_share(w, sm_of, 1024);
    std::sort(w.begin(), w.end());
    printf("%s,%d,%llu,%llu,%.2f,%.2f,%.1f,%.0f,%.0f,%.0f,%.0f,%.3f\n", present ? "present" : "absent", W == 1 ? 4 : 32,
           (unsigned long long)mb, (unsigned long long)lines, us[us.size() / 2], us[0], mean, at_frac(w, 0.1),
           at_frac(w, 0.5), at_frac(w, 0.9), at_frac(w, 0.99), between);
    fflush(stdout);
}
// One case of call 10: two warm-up launches, the median of three, and
// over the last launch, per SM (hit_per_sm.csv) and over all warps
// (stdout): the hit's, the load's and the store's wait to issue, mean
// and p90, and each one's share of variance between SMs.
template <typename T>
static void hit_case(int elem, uint64_t k, int smem, T* a, const float* probe, uint32_t* smb, long long* cb,
                     FILE* out) {
    uint64_t n = 256 * (1ull << 20) / elem;
    uint64_t blocks = n / 256, warps = n / 32;
    auto kernel = traced_hit<T>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
    auto go = [&] { kernel<<<blocks, 256, smem>>>(a, k, probe, smb, cb); };
    median_us(go, 2);
    double us = median_us(go, 3);
    std::vector<uint32_t> sm(warps);
    std::vector<long long> c(4 * warps);
    CK(cudaMemcpy(sm.data(), smb, warps * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c.data(), cb, warps * 32, cudaMemcpyDeviceToHost));
    std::vector<std::vector<double>> part[3];
    std::vector<double> all[3];
    for (auto& p : part) p.resize(1024);
    std::vector<uint32_t> sm_of(warps);
    for (uint64_t x = 0; x < warps; x++) {
        sm_of[x] = sm[x] & 1023;
        for (int j = 0; j < 3; j++) {
            double d = (double)(c[4 * x + j + 1] - c[4 * x + j]);
            part[j][sm_of[x]].push_back(d);
            all[j].push_back(d);
        }
    }
    double between[3];
    for (int j = 0; j < 3; j++) between[j] = between_share(all[j], sm_of, 1024);
    auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 0.0 : s / v.size();
    };
    for (int m = 0; m < 1024; m++) {
        if (part[0][m].empty()) continue;
        fprintf(out, "%d,%llu,%d,%d,%zu", elem, (unsigned long long)k, per_sm, m, part[0][m].size());
        for (int j = 0; j < 3; j++) {
            double a1 = mean(part[j][m]);
            std::sort(part[j][m].begin(), part[j][m].end());
            fprintf(out, ",%.1f,%.0f", a1, at_frac(part[j][m], 0.9));
        }
        fprintf(out, "\n");
    }
    fflush(out);
    printf("%d,%llu,%d,%d,%.2f,%llu", elem, (unsigned long long)k, smem, per_sm, us, (unsigned long long)warps);
    for (int j = 0; j < 3; j++) {
        double a1 = mean(all[j]);
        std::sort(all[j].begin(), all[j].end());
        printf(",%.1f,%.0f,%.0f,%.3f", a1, at_frac(all[j], 0.5), at_frac(all[j], 0.9), between[j]);
    }
    printf("\n");
    fflush(stdout);
}
// One case of call 9: two warm-up launches, the median of three, and per
// role (rw: SMs storing into the lines they loaded; cp: SMs storing into
// lines the L2 does not hold) over the last launch: SMs, warps per SM,
// the load's mean and p90, the store's wait to issue, mean and p90.
template <typename T>
static void role_case(int elem, uint64_t k, int smem, uint32_t flip, T* a, T* b, uint32_t* smb, long long* cb) {
    uint64_t n = 256 * (1ull << 20) / elem;
    uint64_t blocks = n / 256, warps = n / 32;
    auto kernel = traced_role<T>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
    auto go = [&] { kernel<<<blocks, 256, smem>>>(a, b, k, flip, smb, cb); };
    median_us(go, 2);
    double us = median_us(go, 3);
    std::vector<uint32_t> sm(warps);
    std::vector<long long> c(3 * warps);
    CK(cudaMemcpy(sm.data(), smb, warps * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c.data(), cb, warps * 24, cudaMemcpyDeviceToHost));
    for (uint32_t role : {1u, 0u}) {
        std::vector<double> ld, st;
        std::vector<int> sms(1024, 0);
        for (uint64_t x = 0; x < warps; x++) {
            if (((sm[x] ^ flip) & 1) != role) continue;
            ld.push_back((double)(c[3 * x + 1] - c[3 * x]));
            st.push_back((double)(c[3 * x + 2] - c[3 * x + 1]));
            sms[sm[x] & 1023] = 1;
        }
        int nsm = 0;
        for (int m : sms) nsm += m;
        double ml = 0, ms = 0;
        for (double x : ld) ml += x;
        for (double x : st) ms += x;
        ml /= ld.size();
        ms /= st.size();
        std::sort(ld.begin(), ld.end());
        std::sort(st.begin(), st.end());
        printf("%s,%d,%llu,%d,%d,%u,%.2f,%d,%.0f,%.1f,%.0f,%.1f,%.0f\n", role ? "rw" : "cp", elem, (unsigned long long)k,
               smem, per_sm, flip, us, nsm, (double)ld.size() / nsm, ml, at_frac(ld, 0.9), ms, at_frac(st, 0.9));
    }
    fflush(stdout);
}
struct Case {
    bool stride;
    int elem;
    uint64_t nMB, k;
};

// Per case: warps' entry-to-load and entry-to-store-issue times, blocks'
// lives (first warp's entry to last warp's store issue) and, per SM, how
// many blocks were resident on average: the sum of its blocks' lives over
// the span from its first entry to its last store issue.
template <typename T, bool S>
static void run_life(const Case& c, T* a, long long* ts, uint32_t* sm) {
    uint64_t n = c.nMB * (1ull << 20) / sizeof(T);
    uint64_t blocks = n / 256, warps = n / 32;
    plain<T, S><<<blocks, 256>>>(a, c.k);
    life<T, S><<<blocks, 256>>>(a, c.k, ts, sm);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<long long> h(3 * warps);
    std::vector<uint32_t> hs(blocks);
    CK(cudaMemcpy(h.data(), ts, 3 * warps * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hs.data(), sm, blocks * 4, cudaMemcpyDeviceToHost));
    double pro = 0, wl = 0, bl = 0;
    std::vector<long long> lo(1024, -1), hi(1024, -1);
    std::vector<double> life_sum(1024, 0);
    std::vector<uint64_t> count(1024, 0);
    for (uint64_t b = 0; b < blocks; b++) {
        long long s0 = h[3 * (b * 8)], e1 = h[3 * (b * 8) + 2];
        for (int w = 0; w < 8; w++) {
            uint64_t x = b * 8 + w;
            pro += h[3 * x + 1] - h[3 * x];
            wl += h[3 * x + 2] - h[3 * x];
            s0 = std::min(s0, h[3 * x]);
            e1 = std::max(e1, h[3 * x + 2]);
        }
        bl += e1 - s0;
        uint32_t m = hs[b] & 1023;
        if (lo[m] < 0 || s0 < lo[m]) lo[m] = s0;
        if (hi[m] < 0 || e1 > hi[m]) hi[m] = e1;
        life_sum[m] += e1 - s0;
        count[m]++;
    }
    double resident = 0, span = 0;
    int sms = 0;
    for (int m = 0; m < 1024; m++)
        if (count[m]) {
            sms++;
            resident += life_sum[m] / (double)(hi[m] - lo[m]);
            span += hi[m] - lo[m];
        }
    printf("%s,%d,%llu,%llu,%.1f,%.1f,%.1f,%d,%.1f,%.2f\n", c.stride ? "stride" : "offset", c.elem,
           (unsigned long long)c.nMB, (unsigned long long)c.k, pro / warps, wl / warps, bl / blocks,
           sms, span / sms, resident / sms);
    fflush(stdout);
}

template <typename T, bool S>
static void run(const Case& c, T* a, uint32_t* lat, std::vector<uint32_t>& h, bool once) {
    uint64_t n = c.nMB * (1ull << 20) / sizeof(T);
    uint64_t blocks = n / 256;
    if (once) {
        plain<T, S><<<blocks, 256>>>(a, c.k);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        return;
    }
    auto p = [&] { plain<T, S><<<blocks, 256>>>(a, c.k); };
    auto q = [&] { timed<T, S><<<blocks, 256>>>(a, c.k, lat); };
    median_us(p, 2);
    double plain_us = median_us(p, 7);
    double timed_us = median_us(q, 3);
    printf("%s,%d,%llu,%llu,%.2f,%.2f", c.stride ? "stride" : "offset", c.elem, (unsigned long long)c.nMB,
           (unsigned long long)c.k, plain_us, timed_us);
    print_latencies(lat, n / 32, h, false);
}

// Device buffers for `warps` warps' records: each warp's SM, and `stamps`
// clock reads a warp (calls 6-10).
static void alloc_records(uint64_t warps, int stamps, uint32_t** smb, long long** cb) {
    CK(cudaMalloc(smb, warps * 4));
    CK(cudaMalloc(cb, warps * 8 * stamps));
}
// DIR/NAME opened for writing, with HEADER as its first line; null (and a
// message) if it cannot be.
static FILE* open_csv(const std::string& dir, const char* name, const char* header) {
    FILE* f = fopen((dir + "/" + name).c_str(), "w");
    if (!f) {
        fprintf(stderr, "cannot write into %s\n", dir.c_str());
        return nullptr;
    }
    fputs(header, f);
    return f;
}
int main(int argc, char** argv) {
    bool once = argc > 1 && std::string(argv[1]) == "once";
    bool lives = argc > 1 && std::string(argv[1]) == "life";
    std::vector<Case> cases;
    for (int elem : {4, 8}) {
        for (uint64_t k : {0, 16}) cases.push_back({false, elem, 256, k});
        for (uint64_t k : {1, 2, 4, 8, 16, 32}) cases.push_back({true, elem, 256, k});
    }
    // The largest footprint: 256 MiB x 32 (+ one stride), and the offsets' 32 extra elements.
    uint64_t bytes = 33ull * 256 * (1ull << 20);
    void* buf;
    CK(cudaMalloc(&buf, bytes));
    uint32_t* lat;
    CK(cudaMalloc(&lat, (256ull << 20) / 4 / 32 * 4));
    fill<float><<<4096, 256>>>((float*)buf, bytes / 4, 1.0f);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    // Check: one plain launch of the float offset kernel adds 1 to exactly
    // the elements it covers (not under `once`, whose launches are the cases).
    if (!once) {
        uint64_t n = 256 * (1ull << 20) / 4;
        plain<float, false><<<n / 256, 256>>>((float*)buf, 16);
        CK(cudaGetLastError());
        std::vector<float> h(64);
        CK(cudaMemcpy(h.data(), (float*)buf, 64 * 4, cudaMemcpyDeviceToHost));
        float last[64];
        CK(cudaMemcpy(last, (float*)buf + n - 16, 64 * 4, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < 64; i++) bad += h[i] != (i < 16 ? 1.0f : 2.0f);
        for (int i = 0; i < 64; i++) bad += last[i] != (i < 32 ? 2.0f : 1.0f);
        fprintf(stderr, "check: %d wrong of 128\n", bad);
        if (bad) return 1;
    }
    if (argc > 1 && std::string(argv[1]) == "role") {
        // Call 9: half the SMs store into the lines they load, half into
        // a second buffer (`role_case`).
        printf("role,elem,k,smem,blocks_per_sm,flip,timed_us,sms,warps_per_sm,load_mean,load_p90,store_wait_mean,"
               "store_wait_p90\n");
        uint64_t warps = (256ull << 20) / 4 / 32;
        uint32_t* smb;
        long long* cb;
        void* second;
        alloc_records(warps, 3, &smb, &cb);
        CK(cudaMalloc(&second, bytes));
        for (int smem : {0, 36864, 114688})
            for (uint32_t flip : {0u, 1u}) {
                role_case<float>(4, 32, smem, flip, (float*)buf, (float*)second, smb, cb);
                role_case<double>(8, 24, smem, flip, (double*)buf, (double*)second, smb, cb);
            }
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "stcost") {
        // Call 7: stores into lines the L2 holds (clean, just loaded) and
        // into lines it does not (`st_case`), 4 bytes of a sector or all
        // 32, 8 to 64 MiB of lines (one store a line).
        printf("lines_before,bytes_per_sector,mb_of_lines,lines,us_median,us_min,store_wait_mean,store_wait_p10,"
               "store_wait_p50,store_wait_p90,store_wait_p99,store_wait_var_between_sms\n");
        uint64_t warps = (64ull << 20) / 128 / 32;
        uint32_t* smb;
        long long* cb;
        float* sink;
        alloc_records(warps, 2, &smb, &cb);
        CK(cudaMalloc(&sink, 64));
        float* a = (float*)buf;
        const float4* sw = (const float4*)((char*)buf + (4ull << 30));
        for (uint64_t mb : {8, 16, 32, 64})
            for (bool present : {false, true}) {
                st_case<1>(mb, present, a, sw, sink, smb, cb, 7);
                st_case<8>(mb, present, a, sw, sink, smb, cb, 7);
            }
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "hit") {
        // Call 10: an L2 hit beside the load and the store (`hit_case`);
        // argv[2]: the folder for the per-SM CSV.
        std::string dir = argc > 2 ? argv[2] : ".";
        FILE* out = open_csv(dir, "hit_per_sm.csv",
                             "elem,k,blocks_per_sm,sm,warps,hit_mean,hit_p90,load_mean,load_p90,store_wait_mean,"
                             "store_wait_p90\n");
        if (!out) return 1;
        printf("elem,k,smem,blocks_per_sm,timed_us,warps,hit_mean,hit_p50,hit_p90,hit_var_between_sms,load_mean,"
               "load_p50,load_p90,load_var_between_sms,store_wait_mean,store_wait_p50,store_wait_p90,"
               "store_wait_var_between_sms\n");
        uint64_t warps = (256ull << 20) / 4 / 32;
        uint32_t* smb;
        long long* cb;
        float* probe;
        alloc_records(warps, 4, &smb, &cb);
        CK(cudaMalloc(&probe, PROBE_LINES * 128));
        CK(cudaMemset(probe, 0, PROBE_LINES * 128));
        float* f = (float*)buf;
        double* d = (double*)buf;
        for (int rep = 0; rep < 3; rep++) {
            hit_case<float>(4, 32, 0, f, probe, smb, cb, out);
            hit_case<double>(8, 24, 0, d, probe, smb, cb, out);
        }
        hit_case<float>(4, 32, 114688, f, probe, smb, cb, out);
        hit_case<float>(4, 1, 0, f, probe, smb, cb, out);
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "mid") {
        // Call 6: the load and the store apart (`mid_case`); argv[2]: the
        // folder for the per-SM CSV.
        std::string dir = argc > 2 ? argv[2] : ".";
        FILE* out = open_csv(dir, "mid_per_sm.csv",
                             "kernel,elem,k,blocks_per_sm,sm,warps,load_mean,load_p90,store_wait_mean,store_wait_p90\n");
        if (!out) return 1;
        printf("kernel,elem,k,smem,blocks_per_sm,timed_us,warps,load_mean,load_p10,load_p50,load_p90,load_p99,"
               "store_wait_mean,store_wait_p10,store_wait_p50,store_wait_p90,store_wait_p99,load_var_between_sms,"
               "store_wait_var_between_sms\n");
        uint64_t warps = (256ull << 20) / 4 / 32;
        uint32_t* smb;
        long long* cb;
        alloc_records(warps, 3, &smb, &cb);
        float* f = (float*)buf;
        double* d = (double*)buf;
        for (int rep = 0; rep < 3; rep++) {
            mid_case<float, false>("rw", 4, 32, 0, f, smb, cb, out);
            mid_case<double, false>("rw", 8, 24, 0, d, smb, cb, out);
        }
        mid_case<float, true>("wo", 4, 32, 0, f, smb, cb, out);
        mid_case<double, true>("wo", 8, 24, 0, d, smb, cb, out);
        mid_case<float, false>("rw", 4, 32, 114688, f, smb, cb, out);
        mid_case<float, false>("rw", 4, 16, 0, f, smb, cb, out);
        mid_case<float, false>("rw", 4, 8, 0, f, smb, cb, out);
        if (argc > 3 && std::string(argv[3]) == "occ") {
            // Call 8: the store alone (wo) and the whole kernel (rw) at 1
            // to 8 blocks an SM (dynamic shared memory the kernel does not
            // use): from how many store lines an SM asks for does a store
            // wait to issue?
            for (int smem : {0, 30720, 36864, 44032, 55296, 73728, 114688, 200000}) {
                mid_case<float, true>("wo", 4, 32, smem, f, smb, cb, out);
                mid_case<double, true>("wo", 8, 24, smem, d, smb, cb, out);
                mid_case<float, false>("rw", 4, 32, smem, f, smb, cb, out);
            }
        }
        fclose(out);
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "trace") {
        // Call 4: the stride kernel at 256 MiB, its loads traced (above);
        // argv[2]: the folder for the four CSVs.
        std::string dir = argc > 2 ? argv[2] : ".";
        TraceOut out{fopen((dir + "/trace_summary.csv").c_str(), "w"),
                     fopen((dir + "/trace_series.csv").c_str(), "w"),
                     fopen((dir + "/trace_per_sm.csv").c_str(), "w"), fopen((dir + "/trace_raw.csv").c_str(), "w")};
        if (!out.summary || !out.series || !out.per_sm || !out.raw) {
            fprintf(stderr, "cannot write into %s\n", dir.c_str());
            return 1;
        }
        fprintf(out.summary,
                "kernel,elem,k,smem,blocks_per_sm,timed_us,warps,lat_mean,lat_p10,lat_p50,lat_p90,lat_p99,lat_max,"
                "globaltimer_tick_ns,overtaken_mean,overtaken_p50,overtaken_p90,overtaken_p99,overtaken_none,"
                "ahead_mean,ahead_p50,lat_ahead_q1,ahead_q1,lat_ahead_q2,ahead_q2,lat_ahead_q3,ahead_q3,"
                "lat_ahead_q4,ahead_q4,lat_ahead_q5,ahead_q5,var_between_2us,var_between_sms\n");
        fprintf(out.series, "kernel,elem,k,blocks_per_sm,t_us,warps,lat_mean,lat_p50,lat_p90,lat_max\n");
        fprintf(out.per_sm, "kernel,elem,k,blocks_per_sm,sm,warps,lat_mean,lat_p50,lat_p99\n");
        fprintf(out.raw, "kernel,elem,k,blocks_per_sm,sm,issue_cycles,lat_cycles,issue_ns,done_ns\n");
        uint64_t warps = (256ull << 20) / 4 / 32;
        Traces tr;
        CK(cudaMalloc(&tr.sm, warps * 4));
        CK(cudaMalloc(&tr.c, warps * 16));
        CK(cudaMalloc(&tr.g, warps * 16));
        float* f = (float*)buf;
        double* d = (double*)buf;
        char* end = (char*)buf + bytes - (8ull << 20);
        trace_case<float, 0>("ro", 4, 32, 0, f, (float*)end, tr, out);
        trace_case<float, 1>("rw", 4, 32, 0, f, (float*)end, tr, out);
        trace_case<float, 2>("win", 4, 32, 0, f, (float*)end, tr, out);
        trace_case<double, 0>("ro", 8, 24, 0, d, (double*)end, tr, out);
        trace_case<double, 1>("rw", 8, 24, 0, d, (double*)end, tr, out);
        trace_case<float, 1>("rw", 4, 32, 114688, f, (float*)end, tr, out);
        trace_case<float, 1>("rw", 4, 8, 0, f, (float*)end, tr, out);
        if (argc > 3 && std::string(argv[3]) == "more") {
            // Call 5: which SMs are slow, and from which stride on. The
            // float rw case again (is the set the same launch after
            // launch?), with the array moved by 1 MiB and by 96 KiB + 128 B
            // (is the set the SMs' or the data's?), and float strides
            // 12-28 (named rw1m, rw96k; the raw file only for the first
            // three).
            fclose(out.raw);
            out.raw = nullptr;
            trace_case<float, 1>("rw", 4, 32, 0, f, (float*)end, tr, out);
            trace_case<float, 1>("rw1m", 4, 32, 0, f + (1 << 18), (float*)end, tr, out);
            trace_case<float, 1>("rw96k", 4, 32, 0, f + (96 << 8) + 32, (float*)end, tr, out);
            for (uint64_t k : {12, 16, 20, 24, 28}) trace_case<float, 1>("rw", 4, k, 0, f, (float*)end, tr, out);
            for (uint64_t k : {12, 16, 20, 32}) trace_case<double, 1>("rw", 8, k, 0, d, (double*)end, tr, out);
        }
        for (FILE* x : {out.summary, out.series, out.per_sm, out.raw})
            if (x) fclose(x);
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "window") {
        // Call 3: call 2's rw and ro cases at 256 MiB beside the same loads
        // with their stores moved into an 8 MiB window at the buffer's end
        // (past every line the loads touch).
        printf("kernel,elem,nMB,k,smem,blocks_per_sm,timed_us,warps,lat_mean,lat_p10,lat_p50,lat_p90,lat_p99,lat_max\n");
        std::vector<uint32_t> h;
        char* end = (char*)buf + bytes - (8ull << 20);
        for (int smem : {0, 114688}) {
            for (uint64_t k : {16, 32}) {
                run_spread<float, false>(4, 256, k, smem, (float*)buf, lat, h);
                run_spread<float, true>(4, 256, k, smem, (float*)buf, lat, h);
                run_window<float>(4, 256, k, smem, (float*)buf, (float*)end, lat, h);
            }
            for (uint64_t k : {16, 24, 32}) {
                run_spread<double, false>(8, 256, k, smem, (double*)buf, lat, h);
                run_spread<double, true>(8, 256, k, smem, (double*)buf, lat, h);
                run_window<double>(8, 256, k, smem, (double*)buf, (double*)end, lat, h);
            }
        }
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "spread") {
        // timed_us: the median of the last three of five launches (the
        // first two warm the caches as the others find them); the
        // latencies are the last launch's.
        printf("kernel,elem,nMB,k,smem,blocks_per_sm,timed_us,warps,lat_mean,lat_p10,lat_p50,lat_p90,lat_p99,lat_max\n");
        std::vector<uint32_t> h;
        for (uint64_t nMB : {4, 256})
            for (int smem : {0, 114688})
                for (int rw : {0, 1}) {
                    for (uint64_t k : {8, 16, 24, 32}) {
                        if (rw)
                            run_spread<float, true>(4, nMB, k, smem, (float*)buf, lat, h);
                        else
                            run_spread<float, false>(4, nMB, k, smem, (float*)buf, lat, h);
                    }
                    for (uint64_t k : {4, 8, 16, 24, 32}) {
                        if (rw)
                            run_spread<double, true>(8, nMB, k, smem, (double*)buf, lat, h);
                        else
                            run_spread<double, false>(8, nMB, k, smem, (double*)buf, lat, h);
                    }
                }
        return 0;
    }
    if (lives) {
        long long* ts;
        uint32_t* sm;
        CK(cudaMalloc(&ts, (256ull << 20) / 4 / 32 * 24));
        CK(cudaMalloc(&sm, (256ull << 20) / 4 / 256 * 4));
        printf("kernel,elem,nMB,k,entry_to_load,entry_to_store,block_life,sms,sm_span,resident_blocks\n");
        std::vector<Case> more = cases;
        for (int elem : {4, 8}) more.push_back({false, elem, 4, 0});
        for (const Case& c : more) {
            if (c.elem == 4)
                c.stride ? run_life<float, true>(c, (float*)buf, ts, sm)
                         : run_life<float, false>(c, (float*)buf, ts, sm);
            else
                c.stride ? run_life<double, true>(c, (double*)buf, ts, sm)
                         : run_life<double, false>(c, (double*)buf, ts, sm);
        }
        return 0;
    }
    if (!once)
        printf("kernel,elem,nMB,k,plain_us,timed_us,warps,lat_mean,lat_p10,lat_p50,lat_p90,lat_p99\n");
    std::vector<uint32_t> h;
    for (const Case& c : cases) {
        if (c.elem == 4)
            c.stride ? run<float, true>(c, (float*)buf, lat, h, once)
                     : run<float, false>(c, (float*)buf, lat, h, once);
        else
            c.stride ? run<double, true>(c, (double*)buf, lat, h, once)
                     : run<double, false>(c, (double*)buf, lat, h, once);
    }
    return 0;
}
