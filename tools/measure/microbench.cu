// Memory-subsystem microbenchmarks for a Hopper GPU (H100 / H200).
//
// Build:  nvcc -O3 -arch=sm_90 -o microbench microbench.cu
// Run:    ./microbench        all measurements, CSV lines on stdout
//         ./microbench ncu    a short sequence of launches meant to be run
//                             under Nsight Compute (empty and seed kernels)
//
// Every result line has the form
//   R,<section>,<name>,<value>,<unit>,<detail>
// Lines starting with '#' are comments. tools/measure/README.md says what
// each measurement is.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ck.cuh"

// Check a kernel launch (configuration errors are reported here; faults at
// the next synchronising call, which is also checked).
#define CKL() CK(cudaGetLastError())

typedef unsigned long long u64;

static const size_t KiB = 1024;
static const size_t MiB = 1024 * 1024;
static const size_t GiB = 1024 * 1024 * 1024;

// ---------------------------------------------------------------------------
// device helpers
// ---------------------------------------------------------------------------

__device__ __forceinline__ u64 read_clock64() {
    u64 c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) : : "memory");
    return c;
}

__device__ __forceinline__ u64 read_globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
    return t;
}

// Load through L1 (cache at all levels).
__device__ __forceinline__ u64 ld_ca(u64 addr) {
    u64 v;
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(addr) : "memory");
    return v;
}

// Load cached in L2 only (bypasses L1).
__device__ __forceinline__ u64 ld_cg(u64 addr) {
    u64 v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(addr) : "memory");
    return v;
}

// ---------------------------------------------------------------------------
// kernels
// ---------------------------------------------------------------------------

// Writes the pointer-chase chain: element order[k] points to element
// order[k+1] (and the last to the first). Elements are stride_words apart.
__global__ void build_chain_kernel(u64* buf, const unsigned* order, size_t n,
                                   size_t stride_words) {
    size_t nth = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += nth) {
        size_t cur = order[k];
        size_t nxt = order[(k + 1 == n) ? 0 : k + 1];
        buf[cur * stride_words] = (u64)(buf + nxt * stride_words);
    }
}

// ld.global with no cache operator: the default global load (weak,
// L1-cached), what compiled C++ loads through a global pointer use.
__device__ __forceinline__ u64 ld_plain(u64 addr) {
    u64 v;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(addr) : "memory");
    return v;
}

// MODE 0: ld.global, 1: ld.global.ca, 2: ld.global.cg.
template <int MODE>
__device__ __forceinline__ u64 ld_mode(u64 addr) {
    return MODE == 2 ? ld_cg(addr) : MODE == 1 ? ld_ca(addr) : ld_plain(addr);
}

// Single-thread dependent-load chain. 'warm' untimed loads, then 'timed'
// timed loads. out[0] = SM cycles, out[1] = globaltimer ns, out[2] = final
// pointer (keeps the chain live).
template <int MODE>
__global__ void chase_kernel(u64 start, int warm, int timed, u64* out) {
    u64 p = start;
    for (int i = 0; i < warm; i++) p = ld_mode<MODE>(p);
    u64 c0 = read_clock64();
    u64 g0 = read_globaltimer();
#pragma unroll 8
    for (int i = 0; i < timed; i++) p = ld_mode<MODE>(p);
    u64 c1 = read_clock64();
    u64 g1 = read_globaltimer();
    out[0] = c1 - c0;
    out[1] = g1 - g0;
    out[2] = p;
}

// Single thread spins for 'cycles' SM cycles; records cycles and ns.
__global__ void spin_kernel(long long cycles, u64* out) {
    u64 c0 = read_clock64();
    u64 g0 = read_globaltimer();
    u64 c1 = c0;
    while ((long long)(c1 - c0) < cycles) c1 = read_clock64();
    u64 g1 = read_globaltimer();
    out[0] = c1 - c0;
    out[1] = g1 - g0;
}

__global__ void fill_kernel(float4* a, size_t n4, float v) {
    size_t nth = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += nth)
        a[i] = make_float4(v, v, v, v);
}

__device__ __forceinline__ void acc4(float4& acc, const float4& v) {
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
}

// Read-only streaming: grid-stride, U independent 16-byte loads in flight
// per thread. The conditional store keeps the sum live (data is positive).
template <int U>
__global__ void read_kernel(const float4* __restrict__ a, size_t n4,
                            float* out) {
    size_t nth = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (; i + (U - 1) * nth < n4; i += U * nth) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = a[i + u * nth];
#pragma unroll
        for (int u = 0; u < U; u++) acc4(acc, v[u]);
    }
    for (; i < n4; i += nth) acc4(acc, a[i]);
    float s = acc.x + acc.y + acc.z + acc.w;
    if (s == -1.0f) out[0] = s;
}

template <int U>
__global__ void write_kernel(float4* __restrict__ a, size_t n4, float v) {
    size_t nth = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float4 w = make_float4(v, v, v, v);
    for (; i + (U - 1) * nth < n4; i += U * nth) {
#pragma unroll
        for (int u = 0; u < U; u++) a[i + u * nth] = w;
    }
    for (; i < n4; i += nth) a[i] = w;
}

template <int U>
__global__ void copy_kernel(const float4* __restrict__ a,
                            float4* __restrict__ b, size_t n4) {
    size_t nth = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * nth < n4; i += U * nth) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = a[i + u * nth];
#pragma unroll
        for (int u = 0; u < U; u++) b[i + u * nth] = v[u];
    }
    for (; i < n4; i += nth) b[i] = a[i];
}

// L2 read bandwidth: all threads read a buffer of n4 float4 (n4 a power of
// two) 'passes' times with L1-bypassing loads. Each pass starts at a
// different offset (a multiple of 512 B) so that an SM does not read the
// same addresses in every pass. Block 0 records SM clock and globaltimer at
// its start and end: clk[0..3].
__global__ void l2_read_kernel(const float4* __restrict__ a, unsigned n4,
                               int passes, float* out, u64* clk) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clk[0] = read_clock64();
        clk[1] = read_globaltimer();
    }
    unsigned nth = gridDim.x * blockDim.x;
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = n4 - 1;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int p = 0; p < passes; p++) {
        unsigned rot = ((unsigned)p * 40503u << 5) & mask;
        for (unsigned base = tid; base < n4; base += 4 * nth) {
            float4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                unsigned j = base + u * nth;
                if (j < n4)
                    v[u] = __ldcg(a + ((j + rot) & mask));
                else
                    v[u] = make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < 4; u++) acc4(acc, v[u]);
        }
    }
    float s = acc.x + acc.y + acc.z + acc.w;
    if (s == -1.0f) out[0] = s;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clk[2] = read_clock64();
        clk[3] = read_globaltimer();
    }
}

// L2 write bandwidth: the same pattern with 16-byte stores.
__global__ void l2_write_kernel(float4* __restrict__ a, unsigned n4,
                                int passes, float v, u64* clk) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clk[0] = read_clock64();
        clk[1] = read_globaltimer();
    }
    unsigned nth = gridDim.x * blockDim.x;
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = n4 - 1;
    float4 w = make_float4(v, v, v, v);
    for (int p = 0; p < passes; p++) {
        unsigned rot = ((unsigned)p * 40503u << 5) & mask;
        for (unsigned j = tid; j < n4; j += nth) a[(j + rot) & mask] = w;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clk[2] = read_clock64();
        clk[3] = read_globaltimer();
    }
}

__global__ void empty_kernel() {}

// The simulator's seed kernel, unchanged.
__global__ void seed_kernel(float* a, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) a[i] = a[i] + 1.0f;
}

// ---------------------------------------------------------------------------
// host helpers
// ---------------------------------------------------------------------------

static void result(const char* section, const char* name, double value,
                   const char* unit, const char* detail) {
    printf("R,%s,%s,%.6g,%s,%s\n", section, name, value, unit, detail);
    fflush(stdout);
}

static double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double vmin(const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

static u64 rng_state = 0x243F6A8885A308D3ull;
static u64 rng_next() {  // splitmix64
    u64 z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
// Uniform in [0, n), n < 2^32.
static unsigned rng_below(unsigned n) {
    return (unsigned)(((rng_next() >> 32) * (u64)n) >> 32);
}
static void shuffle(unsigned* v, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = rng_below((unsigned)i);
        unsigned t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

struct Timer {
    cudaEvent_t a, b;
    Timer() {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    ~Timer() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    void start(cudaStream_t s = 0) { CK(cudaEventRecord(a, s)); }
    // milliseconds
    double stop(cudaStream_t s = 0) {
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms = 0.f;
        CK(cudaEventElapsedTime(&ms, a, b));
        return (double)ms;
    }
};

static int g_sms = 0;
static float* g_sink = nullptr;  // 4 bytes, never written in practice
static u64* g_out = nullptr;     // small device result buffer

// Values kept for the closing summary.
struct Summary {
    double spin_mhz_start = 0, spin_mhz_end = 0;
    double lat_l1 = 0, lat_l2_cg = 0, lat_l2_ca = 0, lat_dram = 0,
           lat_dram_page = 0, lat_dram_4g = 0;
    double lat_l1_ns = 0, lat_l2_cg_ns = 0, lat_dram_ns = 0,
           lat_dram_page_ns = 0;
    double lat_mhz = 0;
    double lat_l1_ld = 0, lat_l2_ld = 0, lat_dram_ld = 0;
    double bw_read = 0, bw_write = 0, bw_copy = 0, bw_memcpy = 0;
    double l2_read = 0, l2_read_bpc = 0, l2_read_mhz = 0, l2_write = 0;
    double ov_1x32_single = 0, ov_4096_single = 0, ov_65536_single = 0;
    double ov_1x32_graph = 0, ov_4096_graph = 0, ov_65536_graph = 0;
    double seed_big_us = 0, seed_big_gbs = 0, seed_small_warm_us = 0,
           seed_small_cold_us = 0;
};
static Summary S;

// Reads 512 MiB through L2 to evict whatever an earlier step left there.
static float4* g_flush = nullptr;
static const size_t FLUSH_BYTES = 512 * MiB;
static void flush_l2() {
    read_kernel<4><<<g_sms * 8, 256>>>(g_flush, FLUSH_BYTES / 16, g_sink);
    CKL();
    CK(cudaDeviceSynchronize());
}

// ---------------------------------------------------------------------------
// 6. device properties
// ---------------------------------------------------------------------------

static int attr(cudaDeviceAttr a, int dev) {
    int v = 0;
    CK(cudaDeviceGetAttribute(&v, a, dev));
    return v;
}

static void device_properties(int dev) {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    size_t mfree = 0, mtotal = 0;
    CK(cudaMemGetInfo(&mfree, &mtotal));
    int cc_major = attr(cudaDevAttrComputeCapabilityMajor, dev);
    int cc_minor = attr(cudaDevAttrComputeCapabilityMinor, dev);
    int sms = attr(cudaDevAttrMultiProcessorCount, dev);
    int clk = attr(cudaDevAttrClockRate, dev);
    int mclk = attr(cudaDevAttrMemoryClockRate, dev);
    int bus = attr(cudaDevAttrGlobalMemoryBusWidth, dev);
    int l2 = attr(cudaDevAttrL2CacheSize, dev);
    int l2p = attr(cudaDevAttrMaxPersistingL2CacheSize, dev);
    int apw = attr(cudaDevAttrMaxAccessPolicyWindowSize, dev);
    int thr = attr(cudaDevAttrMaxThreadsPerMultiProcessor, dev);
    int blk = attr(cudaDevAttrMaxBlocksPerMultiprocessor, dev);
    int regs = attr(cudaDevAttrMaxRegistersPerMultiprocessor, dev);
    int smem = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    int smemb = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    int smemr = attr(cudaDevAttrReservedSharedMemoryPerBlock, dev);
    int warp = attr(cudaDevAttrWarpSize, dev);

    printf("# device: %s, compute capability %d.%d, runtime %d, driver %d\n",
           p.name, cc_major, cc_minor, rt, drv);
    const char* sec = "device";
    printf("R,%s,name,0,text,%s\n", sec, p.name);
    result(sec, "compute_capability", cc_major + 0.1 * cc_minor, "", "");
    result(sec, "cuda_runtime_version", rt, "", "");
    result(sec, "cuda_driver_version", drv, "", "");
    result(sec, "sm_count", sms, "SMs", "");
    result(sec, "sm_clock_max", clk / 1000.0, "MHz", "cudaDevAttrClockRate");
    result(sec, "mem_clock", mclk / 1000.0, "MHz", "cudaDevAttrMemoryClockRate");
    result(sec, "mem_bus_width", bus, "bit", "");
    result(sec, "mem_peak_bw_derived", 2.0 * mclk * 1e3 * (bus / 8) / 1e9,
           "GB/s", "2 x mem_clock x bus_width/8");
    result(sec, "global_mem_total", (double)p.totalGlobalMem / GiB, "GiB", "");
    result(sec, "global_mem_free", (double)mfree / GiB, "GiB", "cudaMemGetInfo");
    result(sec, "l2_size", (double)l2 / MiB, "MiB", "");
    result(sec, "l2_size_bytes", l2, "B", "");
    result(sec, "persisting_l2_max", (double)l2p / MiB, "MiB", "");
    result(sec, "access_policy_window_max", (double)apw / MiB, "MiB", "");
    result(sec, "max_threads_per_sm", thr, "threads", "");
    result(sec, "max_blocks_per_sm", blk, "blocks", "");
    result(sec, "regs_per_sm", regs, "32-bit regs", "");
    result(sec, "shared_per_sm", smem / 1024.0, "KiB", "");
    result(sec, "shared_per_block_optin", smemb / 1024.0, "KiB", "");
    result(sec, "shared_reserved_per_block", smemr, "B", "");
    result(sec, "warp_size", warp, "threads", "");
    g_sms = sms;
}

// ---------------------------------------------------------------------------
// SM clock: spin kernel, clock64 delta against event time and globaltimer
// ---------------------------------------------------------------------------

static double spin_clock(const char* name) {
    const long long cycles = 200000000LL;  // about 0.1 s at 2 GHz
    Timer t;
    spin_kernel<<<1, 1>>>(1000000LL, g_out);  // warm-up
    CKL();
    CK(cudaDeviceSynchronize());
    t.start();
    spin_kernel<<<1, 1>>>(cycles, g_out);
    CKL();
    double ms = t.stop();
    u64 h[2];
    CK(cudaMemcpy(h, g_out, sizeof(h), cudaMemcpyDeviceToHost));
    double mhz_ev = (double)h[0] / (ms * 1e3);
    double mhz_gt = (double)h[0] * 1e3 / (double)h[1];
    char d[160];
    snprintf(d, sizeof d, "%llu cycles in %.3f ms (event) / %.3f ms (globaltimer)",
             h[0], ms, h[1] / 1e6);
    char n[64];
    snprintf(n, sizeof n, "%s_event", name);
    result("clock", n, mhz_ev, "MHz", d);
    snprintf(n, sizeof n, "%s_globaltimer", name);
    result("clock", n, mhz_gt, "MHz", d);
    return mhz_ev;
}

// ---------------------------------------------------------------------------
// 1. pointer-chase latency
// ---------------------------------------------------------------------------

enum Layout { RANDOM = 0, PAGE_FRIENDLY = 1, SEQUENTIAL = 2 };

struct LatCase {
    const char* level;  // expected level, for the reader
    int mode;           // 0: ld.global, 1: ld.global.ca, 2: ld.global.cg
    size_t bytes;       // working set
    size_t stride;      // bytes between elements
    Layout layout;
};

static const char* MODE_NAME[3] = {"ld", "ca", "cg"};
static u64* g_chase = nullptr;
static unsigned* g_order_dev = nullptr;
static const size_t CHASE_MAX = 4 * GiB;
static const size_t ORDER_MAX = 32 * MiB;  // elements

// Returns cycles per load; fills ns per load and MHz.
static double run_chase(const LatCase& c, double* ns_out, double* mhz_out) {
    size_t n = c.bytes / c.stride;
    if (n > ORDER_MAX || c.bytes > CHASE_MAX) {
        fprintf(stderr, "chase case too large\n");
        exit(1);
    }
    std::vector<unsigned> order(n);
    if (c.layout == PAGE_FRIENDLY) {
        // 2 MiB pages in random order; inside a page, elements in random order.
        size_t per_page = (2 * MiB) / c.stride;
        size_t pages = n / per_page;
        std::vector<unsigned> pg(pages);
        for (size_t i = 0; i < pages; i++) pg[i] = (unsigned)i;
        shuffle(pg.data(), pages);
        for (size_t k = 0; k < pages; k++) {
            unsigned* o = order.data() + k * per_page;
            for (size_t i = 0; i < per_page; i++)
                o[i] = (unsigned)(pg[k] * per_page + i);
            shuffle(o, per_page);
        }
    } else {
        for (size_t i = 0; i < n; i++) order[i] = (unsigned)i;
        if (c.layout == RANDOM) shuffle(order.data(), n);
    }
    CK(cudaMemcpy(g_order_dev, order.data(), n * sizeof(unsigned),
                  cudaMemcpyHostToDevice));
    size_t sw = c.stride / 8;
    build_chain_kernel<<<g_sms * 8, 256>>>(g_chase, g_order_dev, n, sw);
    CKL();
    CK(cudaDeviceSynchronize());
    u64 start = (u64)(g_chase + (size_t)order[0] * sw);

    // Sets up to 128 MiB get one full untimed pass over the chain first, so
    // the timed loads revisit lines (cache hits where the set fits); larger
    // sets are timed cold, right after an L2 flush (first touches: DRAM).
    int warm = (c.bytes <= 128 * MiB) ? (int)n : 0;
    const int timed = 1 << 16;
    std::vector<double> cyc, ns, mhz;
    for (int rep = 0; rep < 3; rep++) {
        flush_l2();
        if (c.mode == 2)
            chase_kernel<2><<<1, 1>>>(start, warm, timed, g_out);
        else if (c.mode == 1)
            chase_kernel<1><<<1, 1>>>(start, warm, timed, g_out);
        else
            chase_kernel<0><<<1, 1>>>(start, warm, timed, g_out);
        CKL();
        CK(cudaDeviceSynchronize());
        u64 h[3];
        CK(cudaMemcpy(h, g_out, sizeof(h), cudaMemcpyDeviceToHost));
        cyc.push_back((double)h[0] / timed);
        ns.push_back((double)h[1] / timed);
        mhz.push_back((double)h[0] * 1e3 / (double)h[1]);
    }
    double cm = median(cyc);
    *ns_out = median(ns);
    *mhz_out = median(mhz);
    char name[96], det[256];
    const char* lay = c.layout == RANDOM          ? "random"
                      : c.layout == PAGE_FRIENDLY ? "page2M"
                                                  : "sequential";
    if (c.bytes >= GiB)
        snprintf(name, sizeof name, "%s_%s_%zuGiB_stride%zu", MODE_NAME[c.mode],
                 lay, c.bytes / GiB, c.stride);
    else if (c.bytes >= MiB)
        snprintf(name, sizeof name, "%s_%s_%zuMiB_stride%zu", MODE_NAME[c.mode],
                 lay, c.bytes / MiB, c.stride);
    else
        snprintf(name, sizeof name, "%s_%s_%zuKiB_stride%zu", MODE_NAME[c.mode],
                 lay, c.bytes / KiB, c.stride);
    snprintf(det,
             sizeof det,
             "level~%s; %.2f ns/load; %.0f MHz in-kernel; %zu elements; warm %d; "
             "timed %d; min %.2f cyc",
             c.level, *ns_out, *mhz_out, n, warm, timed, vmin(cyc));
    result("latency", name, cm, "cycles/load", det);
    return cm;
}

static void latency_section() {
    CK(cudaMalloc(&g_chase, CHASE_MAX));
    CK(cudaMalloc(&g_order_dev, ORDER_MAX * sizeof(unsigned)));
    const size_t L = 128;  // one element per 128-byte line
    const int LD = 0, CA = 1, CG = 2;
    std::vector<LatCase> cases = {
        // ld.global, no cache operator (default, L1-cached)
        {"L1", LD, 16 * KiB, L, RANDOM},
        {"L2", LD, 8 * MiB, L, RANDOM},
        {"DRAM", LD, 1 * GiB, L, RANDOM},
        // ld.global.ca: L1 capacity sweep
        {"L1", CA, 8 * KiB, L, RANDOM},
        {"L1", CA, 16 * KiB, L, RANDOM},
        {"L1", CA, 32 * KiB, L, RANDOM},
        {"L1", CA, 64 * KiB, L, RANDOM},
        {"L1", CA, 128 * KiB, L, RANDOM},
        {"L1", CA, 192 * KiB, L, RANDOM},
        {"L1/L2", CA, 224 * KiB, L, RANDOM},
        {"L1/L2", CA, 256 * KiB, L, RANDOM},
        {"L2", CA, 512 * KiB, L, RANDOM},
        {"L2", CA, 4 * MiB, L, RANDOM},
        {"L2", CA, 8 * MiB, L, RANDOM},
        {"DRAM", CA, 1 * GiB, L, RANDOM},
        // ld.global.cg (L2 only): L2 capacity sweep, then DRAM
        {"L2", CG, 16 * KiB, L, RANDOM},
        {"L2", CG, 1 * MiB, L, RANDOM},
        {"L2", CG, 4 * MiB, L, RANDOM},
        {"L2", CG, 8 * MiB, L, RANDOM},
        {"L2", CG, 16 * MiB, L, RANDOM},
        {"L2", CG, 24 * MiB, L, RANDOM},
        {"L2", CG, 32 * MiB, L, RANDOM},
        {"L2", CG, 40 * MiB, L, RANDOM},
        {"L2", CG, 48 * MiB, L, RANDOM},
        {"L2/DRAM", CG, 56 * MiB, L, RANDOM},
        {"L2/DRAM", CG, 64 * MiB, L, RANDOM},
        {"L2/DRAM", CG, 80 * MiB, L, RANDOM},
        {"L2/DRAM", CG, 128 * MiB, L, RANDOM},
        {"DRAM", CG, 256 * MiB, L, RANDOM},
        {"DRAM", CG, 1 * GiB, L, RANDOM},
        {"DRAM", CG, 4 * GiB, L, RANDOM},
        {"DRAM", CG, 256 * MiB, L, PAGE_FRIENDLY},
        {"DRAM", CG, 1 * GiB, L, PAGE_FRIENDLY},
        {"DRAM", CG, 4 * GiB, L, PAGE_FRIENDLY},
        {"DRAM", CG, 1 * GiB, 4096, SEQUENTIAL},
        {"DRAM", CG, 1 * GiB, 4096, RANDOM},
    };
    for (const LatCase& c : cases) {
        double ns = 0, mhz = 0;
        double cyc = run_chase(c, &ns, &mhz);
        bool rnd128 = c.stride == L && c.layout == RANDOM;
        if (c.mode == LD && c.bytes == 16 * KiB) S.lat_l1_ld = cyc;
        if (c.mode == LD && c.bytes == 8 * MiB) S.lat_l2_ld = cyc;
        if (c.mode == LD && c.bytes == 1 * GiB) S.lat_dram_ld = cyc;
        if (c.mode == CA && c.bytes == 16 * KiB) {
            S.lat_l1 = cyc;
            S.lat_l1_ns = ns;
            S.lat_mhz = mhz;
        }
        if (c.mode == CA && c.bytes == 8 * MiB) S.lat_l2_ca = cyc;
        if (c.mode == CG && c.bytes == 8 * MiB) {
            S.lat_l2_cg = cyc;
            S.lat_l2_cg_ns = ns;
        }
        if (c.mode == CG && c.bytes == 1 * GiB && rnd128) {
            S.lat_dram = cyc;
            S.lat_dram_ns = ns;
        }
        if (c.mode == CG && c.bytes == 4 * GiB && rnd128) S.lat_dram_4g = cyc;
        if (c.mode == CG && c.bytes == 1 * GiB && c.layout == PAGE_FRIENDLY) {
            S.lat_dram_page = cyc;
            S.lat_dram_page_ns = ns;
        }
    }
    CK(cudaFree(g_chase));
    CK(cudaFree(g_order_dev));
    g_chase = nullptr;
    g_order_dev = nullptr;
}

// ---------------------------------------------------------------------------
// 2. DRAM bandwidth
// ---------------------------------------------------------------------------

static void launch_read(int u, int blocks, const float4* a, size_t n4) {
    if (u == 1)
        read_kernel<1><<<blocks, 256>>>(a, n4, g_sink);
    else
        read_kernel<4><<<blocks, 256>>>(a, n4, g_sink);
    CKL();
}
static void launch_write(int u, int blocks, float4* a, size_t n4) {
    if (u == 1)
        write_kernel<1><<<blocks, 256>>>(a, n4, 2.0f);
    else
        write_kernel<4><<<blocks, 256>>>(a, n4, 2.0f);
    CKL();
}
static void launch_copy(int u, int blocks, const float4* a, float4* b,
                        size_t n4) {
    if (u == 1)
        copy_kernel<1><<<blocks, 256>>>(a, b, n4);
    else
        copy_kernel<4><<<blocks, 256>>>(a, b, n4);
    CKL();
}

static void dram_bw_section() {
    const size_t bytes = 2 * GiB;
    const size_t n4 = bytes / 16;
    float4 *a = nullptr, *b = nullptr;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    fill_kernel<<<g_sms * 8, 256>>>(a, n4, 1.0f);
    CKL();
    fill_kernel<<<g_sms * 8, 256>>>(b, n4, 1.0f);
    CKL();
    CK(cudaDeviceSynchronize());

    struct Cfg {
        int bps;  // blocks per SM (256 threads each)
        int u;    // independent accesses per thread per iteration
    };
    const Cfg cfgs[] = {{8, 4}, {8, 1}, {4, 4}, {16, 4}, {32, 1}};
    const int reps = 30;
    Timer t;
    for (int kind = 0; kind < 3; kind++) {
        const char* kname = kind == 0 ? "read" : kind == 1 ? "write" : "copy";
        double moved = kind == 2 ? 2.0 * bytes : (double)bytes;
        double best = 0;
        for (const Cfg& c : cfgs) {
            int blocks = g_sms * c.bps;
            std::vector<double> ms;
            for (int r = 0; r < reps + 2; r++) {
                t.start();
                if (kind == 0) launch_read(c.u, blocks, a, n4);
                if (kind == 1) launch_write(c.u, blocks, b, n4);
                if (kind == 2) launch_copy(c.u, blocks, a, b, n4);
                double m = t.stop();
                if (r >= 2) ms.push_back(m);  // first two are warm-up
            }
            double med = median(ms);
            double gbs = moved / (med * 1e-3) / 1e9;
            best = std::max(best, gbs);
            char name[64], det[200];
            snprintf(name, sizeof name, "%s_%dx256_u%d", kname, blocks, c.u);
            snprintf(det, sizeof det,
                     "2 GiB buffer(s); %.0f bytes moved; median %.4f ms of %d; "
                     "best %.4f ms",
                     moved, med, reps, vmin(ms));
            result("dram_bw", name, gbs, "GB/s", det);
        }
        char name[64];
        snprintf(name, sizeof name, "%s_best", kname);
        result("dram_bw", name, best, "GB/s", "best configuration's median");
        if (kind == 0) S.bw_read = best;
        if (kind == 1) S.bw_write = best;
        if (kind == 2) S.bw_copy = best;
    }
    // cudaMemcpy device to device, 2 GiB, bytes read + written.
    {
        std::vector<double> ms;
        for (int r = 0; r < 12; r++) {
            t.start();
            CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
            double m = t.stop();
            if (r >= 2) ms.push_back(m);
        }
        double med = median(ms);
        S.bw_memcpy = 2.0 * bytes / (med * 1e-3) / 1e9;
        char det[160];
        snprintf(det, sizeof det, "2 GiB; read+write counted; median %.4f ms of 10",
                 med);
        result("dram_bw", "cudaMemcpy_d2d", S.bw_memcpy, "GB/s", det);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
}

// ---------------------------------------------------------------------------
// 3. L2 bandwidth
// ---------------------------------------------------------------------------

static void l2_bw_section() {
    const size_t max_bytes = 128 * MiB;
    float4* a = nullptr;
    u64* clk = nullptr;
    CK(cudaMalloc(&a, max_bytes));
    CK(cudaMalloc(&clk, 4 * sizeof(u64)));
    fill_kernel<<<g_sms * 8, 256>>>(a, max_bytes / 16, 1.0f);
    CKL();
    CK(cudaDeviceSynchronize());
    const size_t sizes[] = {4 * MiB,  8 * MiB,  16 * MiB, 24 * MiB,
                            32 * MiB, 48 * MiB, 64 * MiB, 128 * MiB};
    const int blocks = g_sms * 8;
    const int reps = 10;
    Timer t;
    for (int kind = 0; kind < 2; kind++) {
        for (size_t sz : sizes) {
            if (kind == 1 && sz != 16 * MiB && sz != 32 * MiB) continue;
            unsigned n4 = (unsigned)(sz / 16);
            int passes = (int)((4 * GiB) / sz);  // 4 GiB moved per launch
            std::vector<double> ms, mhz;
            for (int r = 0; r < reps + 2; r++) {
                t.start();
                if (kind == 0)
                    l2_read_kernel<<<blocks, 256>>>(a, n4, passes, g_sink, clk);
                else
                    l2_write_kernel<<<blocks, 256>>>(a, n4, passes, 3.0f, clk);
                CKL();
                double m = t.stop();
                u64 h[4];
                CK(cudaMemcpy(h, clk, sizeof(h), cudaMemcpyDeviceToHost));
                if (r >= 2) {
                    ms.push_back(m);
                    mhz.push_back((double)(h[2] - h[0]) * 1e3 / (double)(h[3] - h[1]));
                }
            }
            double med = median(ms);
            double f = median(mhz);
            double moved = (double)sz * passes;
            double gbs = moved / (med * 1e-3) / 1e9;
            double bpc = gbs * 1e9 / (f * 1e6);  // bytes per SM clock, whole GPU
            char name[64], det[240];
            snprintf(name, sizeof name, "%s_%zuMiB", kind == 0 ? "read" : "write",
                     sz / MiB);
            snprintf(det, sizeof det,
                     "%d passes; %dx256 threads; median %.4f ms of %d; SM clock "
                     "%.0f MHz in-kernel; %.1f B/clk total; %.2f B/clk/SM",
                     passes, blocks, med, reps, f, bpc, bpc / g_sms);
            result("l2_bw", name, gbs, "GB/s", det);
            if (kind == 0 && sz == 16 * MiB) {
                S.l2_read = gbs;
                S.l2_read_bpc = bpc;
                S.l2_read_mhz = f;
                result("l2_bw", "read_16MiB_bytes_per_clk", bpc, "B/clk",
                       "whole GPU, per SM clock");
                result("l2_bw", "read_16MiB_bytes_per_clk_per_sm", bpc / g_sms,
                       "B/clk/SM", "");
            }
            if (kind == 1 && sz == 16 * MiB) S.l2_write = gbs;
        }
    }
    CK(cudaFree(a));
    CK(cudaFree(clk));
}

// ---------------------------------------------------------------------------
// 4. kernel fixed overhead (empty kernel)
// ---------------------------------------------------------------------------

static void launch_empty(int blocks, int threads, cudaStream_t s) {
    empty_kernel<<<blocks, threads, 0, s>>>();
    CKL();
}

static void overhead_section() {
    struct Cfg {
        int blocks, threads;
    };
    const Cfg cfgs[] = {{1, 32},     {1, 256},     {132, 256},  {1024, 256},
                        {4096, 256}, {16384, 256}, {65536, 256}, {262144, 256}};
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Timer t;
    for (const Cfg& c : cfgs) {
        for (int i = 0; i < 20; i++) launch_empty(c.blocks, c.threads, s);
        CK(cudaStreamSynchronize(s));
        // (a) one launch between two events, synchronised each time
        std::vector<double> single;
        for (int r = 0; r < 200; r++) {
            t.start(s);
            launch_empty(c.blocks, c.threads, s);
            single.push_back(t.stop(s) * 1e6);  // ns
        }
        // (b) 1000 launches back to back between two events
        const int nb = 1000;
        t.start(s);
        for (int i = 0; i < nb; i++) launch_empty(c.blocks, c.threads, s);
        double b2b = t.stop(s) * 1e6 / nb;
        // (c) CUDA graph holding 100 launches, replayed
        const int ng = 100;
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < ng; i++) launch_empty(c.blocks, c.threads, s);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        std::vector<double> gr;
        for (int r = 0; r < 20; r++) {
            t.start(s);
            CK(cudaGraphLaunch(ge, s));
            gr.push_back(t.stop(s) * 1e6 / ng);
        }
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
        char name[64], det[160];
        snprintf(name, sizeof name, "empty_%dx%d_single", c.blocks, c.threads);
        snprintf(det, sizeof det, "event pair around one launch; median of 200; min %.0f ns",
                 vmin(single));
        double sm = median(single);
        result("overhead", name, sm, "ns", det);
        snprintf(name, sizeof name, "empty_%dx%d_back_to_back", c.blocks, c.threads);
        result("overhead", name, b2b, "ns", "1000 stream launches / 1000");
        snprintf(name, sizeof name, "empty_%dx%d_graph", c.blocks, c.threads);
        snprintf(det, sizeof det, "graph of 100 launches; median of 20 replays / 100; min %.0f ns",
                 vmin(gr) );
        double gm = median(gr);
        result("overhead", name, gm, "ns", det);
        if (c.blocks == 1 && c.threads == 32) {
            S.ov_1x32_single = sm;
            S.ov_1x32_graph = gm;
        }
        if (c.blocks == 4096) {
            S.ov_4096_single = sm;
            S.ov_4096_graph = gm;
        }
        if (c.blocks == 65536) {
            S.ov_65536_single = sm;
            S.ov_65536_graph = gm;
        }
    }
    CK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------------------
// 5. seed kernel a[i] = a[i] + 1
// ---------------------------------------------------------------------------

static void seed_section() {
    const int n_big = 64 * 1024 * 1024;  // 256 MiB
    const int n_small = 1024 * 1024;     // 4 MiB
    float *big = nullptr, *small = nullptr;
    CK(cudaMalloc(&big, (size_t)n_big * 4));
    CK(cudaMalloc(&small, (size_t)n_small * 4));
    fill_kernel<<<g_sms * 8, 256>>>((float4*)big, (size_t)n_big / 4, 1.0f);
    CKL();
    fill_kernel<<<g_sms * 8, 256>>>((float4*)small, (size_t)n_small / 4, 1.0f);
    CKL();
    CK(cudaDeviceSynchronize());
    int launches_big = 0, launches_small = 0;
    const int blk = 256;
    Timer t;

    // 256 MiB: 3 warm-up launches, then 20 back to back with an event
    // between consecutive launches, then 20 launches each synchronised.
    for (int i = 0; i < 3; i++) {
        seed_kernel<<<n_big / blk, blk>>>(big, n_big);
        CKL();
        launches_big++;
    }
    CK(cudaDeviceSynchronize());
    {
        const int nl = 20;
        std::vector<cudaEvent_t> ev(nl + 1);
        for (auto& e : ev) CK(cudaEventCreate(&e));
        CK(cudaEventRecord(ev[0]));
        for (int i = 0; i < nl; i++) {
            seed_kernel<<<n_big / blk, blk>>>(big, n_big);
            CKL();
            launches_big++;
            CK(cudaEventRecord(ev[i + 1]));
        }
        CK(cudaEventSynchronize(ev[nl]));
        std::vector<double> us;
        for (int i = 0; i < nl; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            us.push_back(ms * 1e3);
        }
        for (auto& e : ev) CK(cudaEventDestroy(e));
        double med = median(us);
        double gbs = 2.0 * n_big * 4 / (med * 1e-6) / 1e9;
        char det[200];
        snprintf(det, sizeof det,
                 "n=64Mi floats, 262144x256; back-to-back, median of %d; min %.2f us; "
                 "%.1f GB/s (read+write)",
                 nl, vmin(us), gbs);
        result("seed", "a_plus_1_256MiB_back_to_back", med, "us", det);
        S.seed_big_us = med;
        S.seed_big_gbs = gbs;
    }
    {
        std::vector<double> us;
        for (int r = 0; r < 20; r++) {
            t.start();
            seed_kernel<<<n_big / blk, blk>>>(big, n_big);
            CKL();
            launches_big++;
            us.push_back(t.stop() * 1e3);
        }
        double med = median(us);
        char det[200];
        snprintf(det, sizeof det,
                 "each launch synchronised; median of 20; min %.2f us; %.1f GB/s",
                 vmin(us), 2.0 * n_big * 4 / (med * 1e-6) / 1e9);
        result("seed", "a_plus_1_256MiB_single", med, "us", det);
    }

    // 4 MiB, L2 warm: one warm-up launch, then 50 back to back.
    seed_kernel<<<n_small / blk, blk>>>(small, n_small);
    CKL();
    launches_small++;
    CK(cudaDeviceSynchronize());
    {
        const int nl = 50;
        std::vector<cudaEvent_t> ev(nl + 1);
        for (auto& e : ev) CK(cudaEventCreate(&e));
        CK(cudaEventRecord(ev[0]));
        for (int i = 0; i < nl; i++) {
            seed_kernel<<<n_small / blk, blk>>>(small, n_small);
            CKL();
            launches_small++;
            CK(cudaEventRecord(ev[i + 1]));
        }
        CK(cudaEventSynchronize(ev[nl]));
        std::vector<double> us;
        for (int i = 0; i < nl; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            us.push_back(ms * 1e3);
        }
        float total = 0;
        CK(cudaEventElapsedTime(&total, ev[0], ev[nl]));
        for (auto& e : ev) CK(cudaEventDestroy(e));
        double med = median(us);
        char det[220];
        snprintf(det, sizeof det,
                 "n=1Mi floats, 4096x256; L2 warm; back-to-back, median of %d; min "
                 "%.2f us; total/%d %.2f us",
                 nl, vmin(us), nl, total * 1e3 / nl);
        result("seed", "a_plus_1_4MiB_l2warm_back_to_back", med, "us", det);
        S.seed_small_warm_us = med;
    }
    // 4 MiB, L2 flushed before each launch.
    {
        std::vector<double> us;
        for (int r = 0; r < 20; r++) {
            flush_l2();
            t.start();
            seed_kernel<<<n_small / blk, blk>>>(small, n_small);
            CKL();
            launches_small++;
            us.push_back(t.stop() * 1e3);
        }
        double med = median(us);
        char det[200];
        snprintf(det, sizeof det, "L2 flushed (512 MiB read) before each; median of 20; min %.2f us",
                 vmin(us));
        result("seed", "a_plus_1_4MiB_cold_single", med, "us", det);
        S.seed_small_cold_us = med;
    }
    // Check: every element equals 1 + number of launches.
    {
        std::vector<float> hb(n_big), hs(n_small);
        CK(cudaMemcpy(hb.data(), big, (size_t)n_big * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hs.data(), small, (size_t)n_small * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (int i = 0; i < n_big; i++) bad += hb[i] != 1.0f + launches_big;
        for (int i = 0; i < n_small; i++) bad += hs[i] != 1.0f + launches_small;
        char det[120];
        snprintf(det, sizeof det, "%d and %d launches; elements differing from 1+launches: %zu",
                 launches_big, launches_small, bad);
        result("seed", "check", bad == 0 ? 1.0 : 0.0, "ok", det);
        if (bad) {
            fprintf(stderr, "seed kernel check failed\n");
            exit(1);
        }
    }
    CK(cudaFree(big));
    CK(cudaFree(small));
}

// ---------------------------------------------------------------------------
// launches for Nsight Compute (./microbench ncu)
// ---------------------------------------------------------------------------

static void ncu_mode() {
    const int n_big = 64 * 1024 * 1024;
    const int n_small = 1024 * 1024;
    float *big = nullptr, *small = nullptr;
    CK(cudaMalloc(&big, (size_t)n_big * 4));
    CK(cudaMalloc(&small, (size_t)n_small * 4));
    fill_kernel<<<1024, 256>>>((float4*)big, (size_t)n_big / 4, 1.0f);
    CKL();
    fill_kernel<<<1024, 256>>>((float4*)small, (size_t)n_small / 4, 1.0f);
    CKL();
    const int cfg[3][2] = {{1, 32}, {4096, 256}, {65536, 256}};
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 5; i++) {
            empty_kernel<<<cfg[c][0], cfg[c][1]>>>();
            CKL();
        }
    for (int i = 0; i < 5; i++) {
        seed_kernel<<<n_big / 256, 256>>>(big, n_big);
        CKL();
    }
    for (int i = 0; i < 8; i++) {
        seed_kernel<<<n_small / 256, 256>>>(small, n_small);
        CKL();
    }
    CK(cudaDeviceSynchronize());
    CK(cudaFree(big));
    CK(cudaFree(small));
    printf("ncu mode done\n");
}

// ---------------------------------------------------------------------------

int main(int argc, char** argv) {
    int dev = 0;
    CK(cudaSetDevice(dev));
    CK(cudaFree(0));
    if (argc > 1 && strcmp(argv[1], "ncu") == 0) {
        ncu_mode();
        return 0;
    }
    printf("# section,name,value,unit,detail  (lines 'R,...')\n");
    device_properties(dev);
    CK(cudaMalloc(&g_sink, 16));
    CK(cudaMalloc(&g_out, 64));
    CK(cudaMalloc(&g_flush, FLUSH_BYTES));
    fill_kernel<<<g_sms * 8, 256>>>(g_flush, FLUSH_BYTES / 16, 1.0f);
    CKL();
    CK(cudaDeviceSynchronize());

    S.spin_mhz_start = spin_clock("spin_start");
    dram_bw_section();
    l2_bw_section();
    latency_section();
    overhead_section();
    seed_section();
    S.spin_mhz_end = spin_clock("spin_end");

    CK(cudaFree(g_flush));
    CK(cudaFree(g_out));
    CK(cudaFree(g_sink));

    printf("\n# ---------------- summary ----------------\n");
    printf("# SM clock, spin kernel (clock64 / event time): %.0f MHz at start, %.0f MHz at end\n",
           S.spin_mhz_start, S.spin_mhz_end);
    printf("# latency (cycles/load; ns/load), in-kernel SM clock %.0f MHz:\n", S.lat_mhz);
    printf("#   L1 hit, ld.ca, 16 KiB random          %7.1f cyc  %6.1f ns\n", S.lat_l1, S.lat_l1_ns);
    printf("#   L2 hit, ld.cg, 8 MiB random           %7.1f cyc  %6.1f ns\n", S.lat_l2_cg, S.lat_l2_cg_ns);
    printf("#   L2 hit, ld.ca (L1 miss), 8 MiB random %7.1f cyc\n", S.lat_l2_ca);
    printf("#   DRAM, ld.cg, 1 GiB random 128 B lines %7.1f cyc  %6.1f ns\n", S.lat_dram, S.lat_dram_ns);
    printf("#   DRAM, ld.cg, 1 GiB 2MiB-page-friendly %7.1f cyc  %6.1f ns\n", S.lat_dram_page, S.lat_dram_page_ns);
    printf("#   DRAM, ld.cg, 4 GiB random             %7.1f cyc\n", S.lat_dram_4g);
    printf("#   ld.global (default): 16 KiB %.1f, 8 MiB %.1f, 1 GiB %.1f cyc\n", S.lat_l1_ld,
           S.lat_l2_ld, S.lat_dram_ld);
    printf("# DRAM bandwidth (GB/s): read %.1f, write %.1f, copy %.1f (r+w), cudaMemcpy %.1f (r+w)\n",
           S.bw_read, S.bw_write, S.bw_copy, S.bw_memcpy);
    printf("# L2 bandwidth, 16 MiB: read %.1f GB/s = %.1f B/clk (%.2f B/clk/SM) at %.0f MHz; write %.1f GB/s\n",
           S.l2_read, S.l2_read_bpc, S.l2_read_bpc / g_sms, S.l2_read_mhz, S.l2_write);
    printf("# empty kernel (ns): single-launch event / graph per launch\n");
    printf("#   1x32       %8.0f / %8.0f\n", S.ov_1x32_single, S.ov_1x32_graph);
    printf("#   4096x256   %8.0f / %8.0f\n", S.ov_4096_single, S.ov_4096_graph);
    printf("#   65536x256  %8.0f / %8.0f\n", S.ov_65536_single, S.ov_65536_graph);
    printf("# seed a[i]+=1: 256 MiB %.1f us (%.1f GB/s); 4 MiB L2-warm %.2f us; 4 MiB cold %.2f us\n",
           S.seed_big_us, S.seed_big_gbs, S.seed_small_warm_us, S.seed_small_cold_us);
    printf("done\n");
    return 0;
}
