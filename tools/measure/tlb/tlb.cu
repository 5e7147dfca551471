// Address-translation (TLB / page-walk) cost on a Hopper GPU, single thread.
//
// Build:  nvcc -O3 -arch=sm_90 -o tlb tlb.cu
// Run:    ./tlb        pointer-chase measurements, CSV lines on stdout
//         ./tlb ncu    seed and stride kernels, 5 launches each, meant to be
//                      run under Nsight Compute
//
// Result lines:  R,<size>,<case>,<loads>,<cycles/load>,<ns/load>,<detail>
//
// The chase: one thread issues dependent ld.global.cg loads (L2 only), one
// per 2 MiB page. Load k of lap L goes to
//     base + perm(k) * 2 MiB + line(perm(k), L) * 128 B
// perm is a pseudo-random bijection of the page indices, line a hash of the
// page and the lap, so every lap touches every page once, in random page
// order, at a line not touched by the other laps (the data is a DRAM access,
// not an L2 hit). The buffer is zero (cudaMemset), and each address adds the
// value loaded before it, so the loads are serialised: the time per load is
// the latency of one load including its address translation.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../ck.cuh"
#define CKL() CK(cudaGetLastError())

typedef unsigned long long u64;
static const size_t MiB = 1024 * 1024;
static const size_t GiB = 1024 * MiB;
static const int MAXLAPS = 4;

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
__device__ __forceinline__ u64 ld_cg(u64 addr) {
    u64 v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(addr) : "memory");
    return v;
}

// Bijection on [0, 2^bits): odd multiplications and xor-shifts modulo 2^bits.
__device__ __forceinline__ unsigned perm_idx(unsigned k, int bits) {
    unsigned mask = (bits >= 32) ? 0xffffffffu : ((1u << bits) - 1u);
    unsigned s = (unsigned)(bits / 2 + 1);
    unsigned x = k & mask;
    x = (x * 0x9E3779B1u) & mask;
    x ^= x >> s;
    x = (x * 0x85EBCA6Bu) & mask;
    x ^= x >> s;
    x = (x * 0xC2B2AE35u) & mask;
    x ^= 0x5bd1e995u & mask;
    return x;
}

__device__ __forceinline__ unsigned mix32(unsigned h) {
    h ^= h >> 16;
    h *= 0x7feb352dU;
    h ^= h >> 15;
    h *= 0x846ca68bU;
    h ^= h >> 16;
    return h;
}

// n = 2^bits loads per lap, element k at base + (perm(k) << shift) +
// 128 * (hash(perm(k), lap) & ((1 << (shift-7)) - 1)).
// out[2*l] = cycles of lap l, out[2*l+1] = ns of lap l, out[2*MAXLAPS] = v.
__global__ void chase_kernel(u64 base, int bits, int shift, int lap0,
                             int nlaps, u64* out) {
    const unsigned n = 1u << bits;
    const u64 linemask = (shift > 7) ? ((1ull << (shift - 7)) - 1ull) : 0ull;
    u64 v = 0;
    for (int l = 0; l < nlaps; l++) {
        const unsigned lap = (unsigned)(lap0 + l);
        u64 c0 = read_clock64();
        u64 g0 = read_globaltimer();
        for (unsigned k = 0; k < n; k++) {
            unsigned p = perm_idx(k, bits);
            u64 line = (u64)mix32(p * 0x9E3779B9u + lap * 0x7F4A7C15u + 12345u) &
                       linemask;
            u64 addr = base + ((u64)p << shift) + (line << 7);
            v = ld_cg(addr + v);  // v == 0: a real dependency, no offset
        }
        u64 c1 = read_clock64();
        u64 g1 = read_globaltimer();
        out[2 * l] = c1 - c0;
        out[2 * l + 1] = g1 - g0;
    }
    out[2 * MAXLAPS] = v;
}

// Flush: write every byte of a 512 MiB buffer (evicts the 50 MiB L2).
__global__ void fill_kernel(float4* a, size_t n4, float v) {
    size_t nth = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += nth)
        a[i] = make_float4(v, v, v, v);
}

__global__ void seed_kernel(float* a, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) a[i] = a[i] + 1.0f;
}

__global__ void stride_kernel(float* a, int n) {
    int i = (blockDim.x * blockIdx.x + threadIdx.x) * 32;
    if (i < n) a[i] = a[i] + 1.0f;
}

static float* g_flush = nullptr;
static const size_t FLUSH_BYTES = 512 * MiB;
static u64* g_out = nullptr;

static void flush_l2() {
    fill_kernel<<<1056, 256>>>((float4*)g_flush, FLUSH_BYTES / 16, 2.0f);
    CKL();
    CK(cudaDeviceSynchronize());
}

// Runs nlaps laps; prints one line per lap.
static void chase(const char* sizename, const char* casename, u64 base,
                  int bits, int shift, int lap0, int nlaps) {
    CK(cudaMemset(g_out, 0, (2 * MAXLAPS + 1) * sizeof(u64)));
    CK(cudaDeviceSynchronize());
    chase_kernel<<<1, 1>>>(base, bits, shift, lap0, nlaps, g_out);
    CKL();
    CK(cudaDeviceSynchronize());
    u64 h[2 * MAXLAPS + 1];
    CK(cudaMemcpy(h, g_out, sizeof(h), cudaMemcpyDeviceToHost));
    if (h[2 * MAXLAPS] != 0) printf("# WARNING: chase value %llu != 0\n", h[2 * MAXLAPS]);
    double n = (double)(1u << bits);
    for (int l = 0; l < nlaps; l++)
        printf("R,%s,%s,%.0f,%.1f,%.1f,lap %d of %d (bits=%d shift=%d)\n",
               sizename, casename, n, h[2 * l] / n, h[2 * l + 1] / n, l + 1,
               nlaps, bits, shift);
    fflush(stdout);
}

static int log2sz(size_t x) {
    int b = 0;
    while ((1ull << b) < x) b++;
    return b;
}

static void chase_mode() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# device: %s, %d SMs, L2 %d B, mem %.1f GiB\n", prop.name,
           prop.multiProcessorCount, prop.l2CacheSize,
           prop.totalGlobalMem / (double)GiB);
    printf("# R,size,case,loads,cycles_per_load,ns_per_load,detail\n");
    CK(cudaMalloc(&g_out, (2 * MAXLAPS + 1) * sizeof(u64)));
    CK(cudaMalloc(&g_flush, FLUSH_BYTES));
    flush_l2();

    const size_t sizes[] = {256 * MiB, 1 * GiB, 4 * GiB, 16 * GiB, 64 * GiB,
                            128 * GiB};
    const char* names[] = {"256MiB", "1GiB", "4GiB", "16GiB", "64GiB",
                           "128GiB"};
    for (int s = 0; s < 6; s++) {
        size_t S = sizes[s];
        char* buf = nullptr;
        cudaError_t e = cudaMalloc(&buf, S);
        if (e != cudaSuccess) {
            cudaGetLastError();
            printf("# %s: cudaMalloc failed (%s), skipped\n", names[s],
                   cudaGetErrorString(e));
            fflush(stdout);
            continue;
        }
        u64 base = (u64)buf;
        int bits = log2sz(S / (2 * MiB));  // pages
        printf("# %s: base 0x%llx (mod 2 MiB = %llu), %d pages of 2 MiB\n",
               names[s], base, base % (2 * MiB), 1 << bits);
        CK(cudaMemset(buf, 0, S));
        CK(cudaDeviceSynchronize());
        const u64 half = (u64)(S / 2);
        // (c) first touch after cudaMemset, no flush: first half's pages.
        chase(names[s], "first_touch_after_memset", base, bits - 1, 21, 0, 1);
        // (c') first touch after cudaMemset + 512 MiB L2 flush: second half.
        flush_l2();
        chase(names[s], "first_touch_after_memset_flush", base + half,
              bits - 1, 21, 0, 1);
        // whole buffer: lap 1 (half the pages seen before), laps 2-3 warm (a).
        chase(names[s], "warm_laps", base, bits, 21, 1, 3);
        // (b) after flushing L2 (TLB state from the laps above, minus what
        // the flush kernel's own translations displaced).
        flush_l2();
        chase(names[s], "after_l2_flush", base, bits, 21, 4, 1);
        flush_l2();
        chase(names[s], "after_l2_flush", base, bits, 21, 5, 1);
        // control: random lines inside the first 2 MiB page (one
        // translation), after a flush: DRAM latency with TLB hits.
        flush_l2();
        chase(names[s], "ctrl_one_page_after_flush", base, 12, 7, 0, 1);
        CK(cudaFree(buf));
    }
    CK(cudaFree(g_flush));
    CK(cudaFree(g_out));
    printf("# done\n");
}

static void ncu_mode() {
    const int n_seed = (int)(4 * MiB / 4);        // 4 MiB of float
    const int n_stride = (int)(33 * 4 * MiB / 4);  // 33 x 4 MiB of float
    float *a = nullptr, *b = nullptr;
    CK(cudaMalloc(&a, (size_t)n_seed * 4));
    CK(cudaMalloc(&b, (size_t)n_stride * 4));
    CK(cudaMemset(a, 0, (size_t)n_seed * 4));
    CK(cudaMemset(b, 0, (size_t)n_stride * 4));
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 5; i++) {
        seed_kernel<<<n_seed / 256, 256>>>(a, n_seed);
        CKL();
    }
    // 4096 x 256 threads, one float every 128 B: 1 Mi lines over 128 MiB.
    for (int i = 0; i < 5; i++) {
        stride_kernel<<<n_seed / 256, 256>>>(b, n_stride);
        CKL();
    }
    CK(cudaDeviceSynchronize());
    CK(cudaFree(a));
    CK(cudaFree(b));
    printf("ncu mode done\n");
}

int main(int argc, char** argv) {
    CK(cudaSetDevice(0));
    if (argc > 1 && strcmp(argv[1], "ncu") == 0)
        ncu_mode();
    else
        chase_mode();
    return 0;
}
