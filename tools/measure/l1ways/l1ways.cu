// The L1's sets and ways on a Hopper GPU: one thread chases pointers through
// N lines spaced S bytes apart, cycling through them, its loads cached in
// the L1 (ld.global.ca).
//
// Build:  nvcc -O3 -arch=sm_90 -o l1ways l1ways.cu
// Run:    ./l1ways     CSV on stdout: R,<op>,<smem>,<stride_bytes>,<n>,<cycles_per_load>,<chain_ok>
//
// A cache of W ways whose set is (address / 128) mod sets puts N lines
// spaced sets x 128 bytes (or a multiple) into one set: they all hit while
// N <= W and, under least recently used replacement, all miss once N > W
// (a cyclic walk evicts each line just before it comes round again). With
// a hashed set index no power-of-two stride puts more lines in one set than
// the hash spreads, and misses begin only as N nears the capacity.
//
// Each point: a set-up kernel writes the chain (line i holds the address of
// line (i + 1) mod N), then one thread of one block walks it 2 laps to warm
// the L1 and 4 laps timed with clock64 (each load's address is the value
// the load before it returned, so the loads are serialised). `ca` is the
// L1-cached walk; `cg` the same walk past the L1 (ld.global.cg), the L2's
// latency for reference.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "../ck.cuh"
#include "../clock.cuh"

typedef unsigned long long u64;

__device__ __forceinline__ u64 ld_ca64(u64 a) {
    u64 v;
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(a) : "memory");
    return v;
}
__device__ __forceinline__ u64 ld_cg64(u64 a) {
    u64 v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(a) : "memory");
    return v;
}

__global__ void setup(u64 base, u64 stride, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        *(u64*)(base + (u64)i * stride) = base + (u64)((i + 1) % n) * stride;
    }
}

static const int WARM = 2, LAPS = 4;

template <bool CA>
__global__ void chase(u64 base, int n, u64* out) {
    extern __shared__ int smem[];  // unused: a smaller L1 when launched with some
    if (n < 0) smem[0] = n;
    u64 x = base;
    for (int i = 0; i < WARM * n; i++) x = CA ? ld_ca64(x) : ld_cg64(x);
    long long t0 = clk();
    for (int i = 0; i < LAPS * n; i++) x = CA ? ld_ca64(x) : ld_cg64(x);
    long long t1 = clk();
    out[0] = (u64)(t1 - t0);
    out[1] = x;  // keeps the chain live
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("# %s, %d SMs, L2 %d B, shared per SM %zu B\n", p.name,
           p.multiProcessorCount, p.l2CacheSize, p.sharedMemPerMultiprocessor);
    // All the L1 the driver gives a kernel without shared memory; with
    // dynamic shared memory (the second sweep), what is left beside it.
    CK(cudaFuncSetAttribute(chase<true>,
                            cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    CK(cudaFuncSetAttribute(chase<true>,
                            cudaFuncAttributeMaxDynamicSharedMemorySize, 101376));
    const size_t bytes = 512ull << 20;
    char* buf;
    CK(cudaMalloc(&buf, bytes));
    CK(cudaMemset(buf, 0, bytes));
    u64* out;
    CK(cudaMalloc(&out, 2 * sizeof(u64)));
    const u64 base = (u64)buf;
    printf("# base %llx\n", base);

    // Strides in lines: powers of two, and multiples of what a 248 KiB L1
    // of 4 ways indexed modulo its sets would have (496 sets).
    const u64 lines[] = {1,    2,    4,    8,    16,   32,   64,   128,  256,
                         512,  1024, 2048, 4096, 8192, 16384, 3,    5,    31,
                         62,   124,  248,  496,  992,  1984, 2048 + 1};
    const int small_n = 64;
    const int big_n[] = {80, 96, 128, 160, 192, 256, 384, 512};
    printf("R,op,smem,stride_bytes,n,cycles_per_load,chain_ok\n");
    u64 res[2];
    for (int smem : {0, 101376})
    for (u64 l : lines) {
        if (smem && (l & (l - 1))) continue;  // powers of two only
        const u64 stride = l * 128;
        for (int k = 0; k < small_n + 8; k++) {
            int n = k < small_n ? k + 1 : big_n[k - small_n];
            if ((u64)n * stride > bytes) break;
            setup<<<(n + 255) / 256, 256>>>(base, stride, n);
            CK(cudaGetLastError());
            chase<true><<<1, 1, smem>>>(base, n, out);
            CK(cudaGetLastError());
            CK(cudaMemcpy(res, out, sizeof res, cudaMemcpyDeviceToHost));
            // After whole laps the walk is back at line 0.
            printf("R,ca,%d,%llu,%d,%.2f,%d\n", smem, stride, n,
                   (double)res[0] / (LAPS * n), res[1] == base);
            if (l == 16384 && n <= 8 && !smem) {
                chase<false><<<1, 1>>>(base, n, out);
                CK(cudaGetLastError());
                CK(cudaMemcpy(res, out, sizeof res, cudaMemcpyDeviceToHost));
                printf("R,cg,%d,%llu,%d,%.2f,%d\n", smem, stride, n,
                       (double)res[0] / (LAPS * n), res[1] == base);
            }
        }
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
