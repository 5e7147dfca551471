// How widely the latencies of a load spread in a DRAM-bound kernel on the
// H200, with and without stores beside it, and where one warp's store
// lands on another warp's load (DEVIATIONS.md 1 and 23).
//
// One element a thread, 256 threads a block, 256 MiB buffers, k elements
// past the start (as tools/measure/misalign):
//   ro  v = a[t + k]                (a store that never happens keeps it)
//   rw  a[t + k] = a[t + k] + 1     (seed 002's offset kernel)
//   cp  b[t + k] = a[t + k]
//   ws  a[t + k] = a[t] + 1         (a warp stores onto sectors the next loads)
//   rs  a[t] = a[t + k] + 1
// Each case is timed twice, as tools/measure/loadlat does:
//   plain_us  the kernel as is: median of 7 launches (CUDA events) after
//             two warm-up launches;
//   timed_us  the same kernel with lane 0 of each warp reading clock64
//             before the load and after the first use of the loaded
//             value (the store's issue, or ro's compare), writing the
//             difference to lat[warp]: median of 3 launches.
// lat_* are over every warp of the last timed launch, SM cycles.
//
// `./latspread mix` asks whether the stores' effect on the loads is the
// DRAM's: every even block loads (as ro, timed) and every odd block
//   V = 0  does nothing
//   V = 1  stores one element a thread into a second 256 MiB buffer (as
//          many bytes written to DRAM as read)
//   V = 2  stores as much into 8 MiB of it, over and over (the L2 keeps
//          the lines: little reaches the DRAM)
// and, with the even blocks' loads made L2 hits (they read 8 MiB of `a`
// over and over, which the L2 keeps), whether the widening is in the L2
// and the crossbar or in the DRAM: every odd block
//   V = 3  stores as V = 1 (to DRAM)
//   V = 4  does nothing
//   V = 5  loads one element a thread of a second 256 MiB buffer (DRAM
//          reads instead of writes; untimed)
// and, with the even blocks' loads from DRAM again (`./latspread frac`),
// how the widening grows with the stores: the odd blocks store as V = 1
// where their number is a multiple of 8 (V = 6), of 4 (V = 7), of 2
// (V = 8), the others doing nothing: an eighth, a quarter and half of V = 1's
// DRAM writes.
// And whether the widening comes from where the stores land beside the
// loads (`./latspread shift`): the odd blocks store as V = 1, as many
// bytes, but
//   V = 9   half the buffer away: b[(t + n/2) mod n] (the write stream in
//           other rows than the read stream at the same time)
//   V = 10  each warp's run of 32 elements to a scattered run:
//           b[((w * 40503) mod (n/32)) * 32 + lane], w = t / 32 (whole
//           lines, in no order)
// (grid twice the loads'; lat_* over the timed loading warps). `./latspread
// mixncu` launches each once, for Nsight Compute.
//
// `./latspread ack` times, in rw, cp, ws and rs (double, k = 0 and 8), each
// warp's load (as above) and then its store's acknowledgement: lane 0
// reads clock64 after the store's issue and again after a __threadfence()
// that waits for the store to be acknowledged (the fence holds each warp
// until then, so fewer stores are in flight than in the plain kernels).
//
// Build:  nvcc -O3 -arch=sm_90 -o latspread latspread.cu
// Run:    ./latspread       one CSV line per case (header first)
//         ./latspread mix   the mixed kernels (below), likewise
//         ./latspread mixncu  each mixed kernel launched once (Nsight Compute)
//         ./latspread hits, hitsncu   the same for V = 3, 4, 5
//         ./latspread frac, fracncu   the same for V = 6, 7, 8
//         ./latspread shift, shiftncu the same for V = 9, 10
//         ./latspread ack   loads and store acknowledgements (below)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t BYTES = 256ull << 20;
static const uint64_t PAD = 4096;

// The mean and the 10th, 50th, 90th and 99th percentiles of n per-warp
// cycle counts in device memory.
struct Spread {
    double mean;
    uint32_t p10, p50, p90, p99;
};

static Spread spread_of(const uint32_t *dev, uint64_t n) {
    std::vector<uint32_t> h(n);
    CK(cudaMemcpy(h.data(), dev, n * 4, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (uint32_t x : h) sum += x;
    std::sort(h.begin(), h.end());
    auto q = [&](double f) { return h[std::min<uint64_t>(n - 1, (uint64_t)(f * n))]; };
    return {sum / n, q(0.1), q(0.5), q(0.9), q(0.99)};
}

template <typename T, int MODE>
__device__ __forceinline__ void body(T *a, T *b, uint64_t t, uint64_t k, T *sink) {
    if (MODE == 0) {
        T v = a[t + k];
        if (v == (T)12345) sink[0] = v;
    } else if (MODE == 1) {
        a[t + k] = a[t + k] + (T)1;
    } else if (MODE == 2) {
        b[t + k] = a[t + k];
    } else if (MODE == 3) {
        a[t + k] = a[t] + (T)1;
    } else {
        a[t] = a[t + k] + (T)1;
    }
}

template <typename T, int MODE>
__global__ void k_plain(T *a, T *b, uint64_t k, T *sink) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    body<T, MODE>(a, b, t, k, sink);
}

template <typename T, int MODE>
__global__ void k_timed(T *a, T *b, uint64_t k, T *sink, uint32_t *lat) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    long long t0 = clock64();
    body<T, MODE>(a, b, t, k, sink);
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) lat[t >> 5] = (uint32_t)(t1 - t0);
}

template <typename T, int V>
__global__ void k_mix(T *a, T *b, T *sink, uint32_t *lat, bool timed) {
    uint64_t half = blockIdx.x >> 1;
    uint64_t t = half * blockDim.x + threadIdx.x;
    const uint64_t kept = (8ull << 20) / sizeof(T) - 1;
    if (blockIdx.x & 1) {
        if (V == 1 || V == 3) b[t] = (T)1;
        if (V >= 6 && V <= 8 && half % (V == 6 ? 8 : V == 7 ? 4 : 2) == 0) b[t] = (T)1;
        if (V == 2) b[t & kept] = (T)1;
        if (V == 9 || V == 10) {
            const uint64_t n = BYTES / sizeof(T);
            if (V == 9) b[(t + n / 2) % n] = (T)1;
            else b[(((t >> 5) * 40503ull) % (n >> 5)) * 32 + (t & 31)] = (T)1;
        }
        if (V == 5) {
            T w = b[t];
            if (w == (T)12345) sink[1] = w;
        }
        return;
    }
    long long t0 = clock64();
    T v = a[V >= 3 && V <= 5 ? t & kept : t];
    if (v == (T)12345) sink[0] = v;
    long long t1 = clock64();
    if (timed && (threadIdx.x & 31) == 0) lat[t >> 5] = (uint32_t)(t1 - t0);
}

template <typename T>
static void mix(int v, char *a, char *b, uint32_t *lat, bool timed) {
    uint64_t blocks = 2 * (BYTES / sizeof(T) / 256);
    T *sink = (T *)(a + BYTES + PAD / 2);
    if (v == 0) k_mix<T, 0><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 1) k_mix<T, 1><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 2) k_mix<T, 2><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 3) k_mix<T, 3><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 4) k_mix<T, 4><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 5) k_mix<T, 5><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 6) k_mix<T, 6><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 7) k_mix<T, 7><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 8) k_mix<T, 8><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else if (v == 9) k_mix<T, 9><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
    else k_mix<T, 10><<<blocks, 256>>>((T *)a, (T *)b, sink, lat, timed);
}

template <typename T, int MODE>
__global__ void k_ack(T *a, T *b, uint64_t k, uint32_t *lat, uint32_t *ack) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    long long t0 = clock64();
    T v = MODE == 3 ? a[t] : a[t + k];
    v += (T)1;
    uint64_t dst = MODE == 4 ? t : t + k;
    T *out = MODE == 2 ? b : a;
    out[dst] = v;
    long long t1 = clock64();
    __threadfence();
    long long t2 = clock64();
    if ((threadIdx.x & 31) == 0) {
        lat[t >> 5] = (uint32_t)(t1 - t0);
        ack[t >> 5] = (uint32_t)(t2 - t1);
    }
}

template <typename T>
static void ack_launch(int m, char *a, char *b, uint64_t k, uint32_t *lat, uint32_t *ack) {
    uint64_t blocks = BYTES / sizeof(T) / 256;
    if (m == 1) k_ack<T, 1><<<blocks, 256>>>((T *)a, (T *)b, k, lat, ack);
    else if (m == 2) k_ack<T, 2><<<blocks, 256>>>((T *)a, (T *)b, k, lat, ack);
    else if (m == 3) k_ack<T, 3><<<blocks, 256>>>((T *)a, (T *)b, k, lat, ack);
    else k_ack<T, 4><<<blocks, 256>>>((T *)a, (T *)b, k, lat, ack);
}

static void run_ack(char *a, char *b, uint32_t *lat) {
    uint32_t *ack;
    CK(cudaMalloc(&ack, BYTES / 8 / 32 * 4));
    printf("mode,elem,k,us,warps,lat_p10,lat_p50,lat_p90,lat_p99,ack_p10,ack_p50,ack_p90,ack_p99\n");
    const char *names[] = {"", "rw", "cp", "ws", "rs"};
    for (int m = 1; m <= 4; m++) {
        for (uint64_t k : {0ull, 8ull}) {
            CK(cudaMemset(a, 0, BYTES + PAD));
            CK(cudaMemset(b, 0, BYTES + PAD));
            ack_launch<double>(m, a, b, k, lat, ack);
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            CK(cudaEventRecord(e0));
            ack_launch<double>(m, a, b, k, lat, ack);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            uint64_t warps = BYTES / 8 / 32;
            Spread h = spread_of(lat, warps), g = spread_of(ack, warps);
            printf("%s,8,%llu,%.2f,%llu,%u,%u,%u,%u,%u,%u,%u,%u\n", names[m], (unsigned long long)k, ms * 1e3,
                   (unsigned long long)warps, h.p10, h.p50, h.p90, h.p99, g.p10, g.p50, g.p90, g.p99);
            fflush(stdout);
        }
    }
}

struct Case {
    const char *mode;
    int m, elem;
    uint64_t k;
};

template <typename T, int MODE>
static void launch(bool timed, char *a, char *b, uint64_t k, uint32_t *lat) {
    uint64_t blocks = BYTES / sizeof(T) / 256;
    T *sink = (T *)(a + BYTES + PAD / 2);
    if (timed) k_timed<T, MODE><<<blocks, 256>>>((T *)a, (T *)b, k, sink, lat);
    else k_plain<T, MODE><<<blocks, 256>>>((T *)a, (T *)b, k, sink);
}

template <typename T>
static void launch_m(int m, bool timed, char *a, char *b, uint64_t k, uint32_t *lat) {
    switch (m) {
    case 0: launch<T, 0>(timed, a, b, k, lat); break;
    case 1: launch<T, 1>(timed, a, b, k, lat); break;
    case 2: launch<T, 2>(timed, a, b, k, lat); break;
    case 3: launch<T, 3>(timed, a, b, k, lat); break;
    default: launch<T, 4>(timed, a, b, k, lat); break;
    }
}

static void go(const Case &c, bool timed, char *a, char *b, uint32_t *lat) {
    if (c.elem == 4) launch_m<float>(c.m, timed, a, b, c.k, lat);
    else launch_m<double>(c.m, timed, a, b, c.k, lat);
}

static double median_ms(const Case &c, bool timed, int n, char *a, char *b, uint32_t *lat) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> v;
    for (int i = 0; i < n; i++) {
        CK(cudaEventRecord(e0));
        go(c, timed, a, b, lat);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        v.push_back(ms);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void run_mix(bool for_ncu, char *a, char *b, uint32_t *lat, int first_v, int last_v) {
    if (!for_ncu) printf("mix,elem,V,plain_us,timed_us,warps,lat_mean,lat_p10,lat_p50,lat_p90,lat_p99\n");
    for (int elem : {4, 8}) {
        for (int v = first_v; v <= last_v; v++) {
            CK(cudaMemset(a, 0, BYTES + PAD));
            CK(cudaMemset(b, 0, BYTES + PAD));
            auto go_mix = [&](bool timed) {
                if (elem == 4) mix<float>(v, a, b, lat, timed);
                else mix<double>(v, a, b, lat, timed);
            };
            if (for_ncu) {
                CK(cudaDeviceSynchronize());
                printf("CASE,mix,%d,%d\n", elem, v);
                fflush(stdout);
                go_mix(false);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                continue;
            }
            for (int i = 0; i < 2; i++) go_mix(false);
            CK(cudaDeviceSynchronize());
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            double med[2];
            for (int timed = 0; timed < 2; timed++) {
                std::vector<float> ms;
                for (int i = 0; i < (timed ? 3 : 7); i++) {
                    CK(cudaEventRecord(e0));
                    go_mix(timed);
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    CK(cudaGetLastError());
                    float x;
                    CK(cudaEventElapsedTime(&x, e0, e1));
                    ms.push_back(x);
                }
                std::sort(ms.begin(), ms.end());
                med[timed] = ms[ms.size() / 2];
            }
            uint64_t warps = BYTES / elem / 32;
            Spread h = spread_of(lat, warps);
            printf("mix,%d,%d,%.2f,%.2f,%llu,%.1f,%u,%u,%u,%u\n", elem, v, med[0] * 1e3, med[1] * 1e3,
                   (unsigned long long)warps, h.mean, h.p10, h.p50, h.p90, h.p99);
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    std::vector<Case> cases = {
        {"ro", 0, 4, 0},  {"ro", 0, 8, 0},  {"ro", 0, 8, 8},  {"rw", 1, 4, 0},  {"rw", 1, 4, 16},
        {"rw", 1, 8, 0},  {"rw", 1, 8, 8},  {"cp", 2, 8, 0},  {"cp", 2, 8, 8},  {"ws", 3, 4, 16},
        {"ws", 3, 8, 0},  {"ws", 3, 8, 8},  {"rs", 4, 8, 8},
    };
    char *a, *b;
    uint32_t *lat;
    CK(cudaMalloc(&a, BYTES + PAD));
    CK(cudaMalloc(&b, BYTES + PAD));
    CK(cudaMalloc(&lat, BYTES / 4 / 32 * 4));
    if (mode == "ack") {
        run_ack(a, b, lat);
        return 0;
    }
    if (mode == "mix" || mode == "mixncu" || mode == "hits" || mode == "hitsncu" || mode == "frac" ||
        mode == "fracncu" || mode == "shift" || mode == "shiftncu") {
        bool hits = mode == "hits" || mode == "hitsncu", frac = mode == "frac" || mode == "fracncu";
        bool shift = mode == "shift" || mode == "shiftncu";
        bool for_ncu = mode == "mixncu" || mode == "hitsncu" || mode == "fracncu" || mode == "shiftncu";
        run_mix(for_ncu, a, b, lat, hits ? 3 : frac ? 6 : shift ? 9 : 0, hits ? 5 : frac ? 8 : shift ? 10 : 2);
        return 0;
    }
    printf("mode,elem,k,plain_us,timed_us,warps,lat_mean,lat_p10,lat_p50,lat_p90,lat_p99\n");
    for (const Case &c : cases) {
        CK(cudaMemset(a, 0, BYTES + PAD));
        CK(cudaMemset(b, 0, BYTES + PAD));
        for (int i = 0; i < 2; i++) go(c, false, a, b, lat);
        CK(cudaDeviceSynchronize());
        double plain = median_ms(c, false, 7, a, b, lat);
        double timed = median_ms(c, true, 3, a, b, lat);
        uint64_t warps = BYTES / c.elem / 32;
        Spread h = spread_of(lat, warps);
        printf("%s,%d,%llu,%.2f,%.2f,%llu,%.1f,%u,%u,%u,%u\n", c.mode, c.elem, (unsigned long long)c.k,
               plain * 1e3, timed * 1e3, (unsigned long long)warps, h.mean, h.p10, h.p50, h.p90, h.p99);
        fflush(stdout);
    }
    return 0;
}
