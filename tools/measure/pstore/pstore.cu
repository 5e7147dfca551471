// What a store of part of a sector costs on the H200, and which unit pays it.
//
// Build:  nvcc -O3 -arch=sm_90 -o pstore pstore.cu
// Run:    ./pstore check     stores every case on a poisoned buffer, counts
//                            wrong words
//         ./pstore list      the measured launches in order, one line each:
//                            family,params
//         ./pstore cold      the measured launches alone (run under Nsight
//                            Compute with --cache-control all)
//         ./pstore spread    family spread, below (run under Nsight Compute
//                            with --cache-control all); list-spread lists it
//         ./pstore dirty     family dirty, below (--cache-control all);
//                            list-dirty lists it
//         ./pstore warm      each measured store after a flush and a load of
//                            the same sectors (run under Nsight Compute with
//                            --cache-control none and application replay,
//                            --kernel-name regex:^m_)
//
// Family `pst` (params N=sectors;g=G;d=D): G consecutive lanes store one
// float each into one 32-byte sector, so a sector receives 4G bytes; the
// sectors are D bytes apart; N sectors in all (N x G threads, 256 per block):
//     t = blockIdx.x * 256 + threadIdx.x;  a[(t / G) * (D / 4) + t % G] = 1.5f;
// D = 32 is a contiguous stream of partial sectors; D >= 128 puts one sector in
// each line, as seed 002's double stride kernel does from stride 16 up.
// Family `pst_warm`: the same store after `p_load` has read the same sectors
// (the L2 then holds them whole and clean, where they fit).
// Family `prw`: seed 002's a[i] = a[i] + 1 on the same addresses (the store
// finds its sector in the L2, fetched by the load just before).

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
#define NEVER 12345.0f

// G (lanes per sector) and K (sectors per line) are template parameters, so
// that the index arithmetic is shifts and masks, as the workloads' one
// instruction per operation assumes (a 64-bit division by a value known only
// at run time is a long instruction sequence).
template <int G>
__device__ __forceinline__ uint64_t at(uint64_t t, uint64_t dw) {
    return (t / G) * dw + t % G;
}
template <int G>
__global__ void m_pst(float *a, uint64_t dw, uint64_t n) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) a[at<G>(t, dw)] = 1.5f;
}
template <int G>
__global__ void m_prw(float *a, uint64_t dw, uint64_t n) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        uint64_t i = at<G>(t, dw);
        a[i] = a[i] + 1.0f;
    }
}
template <int G>
__global__ void m_pld(const float *a, float *out, uint64_t dw, uint64_t n) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n && a[at<G>(t, dw)] == NEVER) out[0] = 1;
}
// k sectors of each 128-byte line, G lanes (4 bytes each) per sector.
template <int G, int K>
__global__ void m_lk(float *a, uint64_t n) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) a[(t / (G * K)) * 32 + ((t / G) % K) * 8 + t % G] = 1.5f;
}
template <int G>
__global__ void p_load(const float *a, float *out, uint64_t dw, uint64_t n) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n && a[at<G>(t, dw)] == NEVER) out[0] = 1;
}
__global__ void f_flush(const float4 *a, float *out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = a[i];
    if (v.x + v.y + v.z + v.w == NEVER) out[0] = 1;
}

struct Case {
    const char *fam;
    uint64_t sectors;
    int g, d;
};
static std::vector<Case> cases() {
    std::vector<Case> v;
    const int G[] = {1, 2, 8};
    const int D[] = {32, 64, 128, 192, 256, 1024};
    for (uint64_t n : {128ull * 1024, 512ull * 1024})
        for (int g : G)
            for (int d : D) v.push_back({"pst", n, g, d});
    for (int g : {1, 2})
        for (int d : D) v.push_back({"prw", 512ull * 1024, g, d});
    return v;
}

// Family spread (`./pstore spread`): the load alone (pld), the store alone
// (pst) and both (prw), one float per sector, 256 Ki sectors, at spacings
// from 32 bytes to 64 KiB: how the DRAM's rows and banks take accesses
// spread ever wider, at equal traffic.
static std::vector<Case> spread_cases() {
    std::vector<Case> v;
    const int D[] = {32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192, 16384, 24064, 32768, 65536};
    for (const char *f : {"pld", "pst", "prw"})
        for (int d : D) v.push_back({f, 256ull * 1024, 1, d});
    return v;
}

// Family dirty (`./pstore dirty`): stores into k = 1, 2 or 4 sectors of
// each of L consecutive lines, whole (G = 8) or 4 bytes of each (G = 1):
// what the L2 writes back during the kernel, and so what it keeps dirty,
// by sectors per line, sector fill and footprint.
struct Dirty {
    int g, k;
    uint64_t lines;
};
static std::vector<Dirty> dirty_cases() {
    std::vector<Dirty> v;
    for (uint64_t l : {65536ull, 262144ull, 1048576ull})
        for (int g : {1, 8})
            for (int k : {1, 2, 4}) v.push_back({g, k, l});
    return v;
}

static float *A, *OUT;
static float4 *F;
static uint64_t A_BYTES = 512 * MiB;
static const uint64_t F_BYTES = 512 * MiB;
static void sync() {
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}
static uint32_t blocks(uint64_t threads) { return (uint32_t)((threads + 255) / 256); }
static void launch(const Case &c, bool load_first) {
    uint64_t n = c.sectors * c.g, dw = c.d / 4;
    std::string f = c.fam;
    if (load_first) {
        f_flush<<<blocks(F_BYTES / 16), 256>>>(F, OUT, F_BYTES / 16);
        if (c.g == 1) p_load<1><<<blocks(n), 256>>>(A, OUT, dw, n);
        if (c.g == 2) p_load<2><<<blocks(n), 256>>>(A, OUT, dw, n);
        if (c.g == 8) p_load<8><<<blocks(n), 256>>>(A, OUT, dw, n);
    }
#define BY_G(kernel, ...)                                                    \
    do {                                                                     \
        if (c.g == 1) kernel<1><<<blocks(n), 256>>>(__VA_ARGS__);            \
        if (c.g == 2) kernel<2><<<blocks(n), 256>>>(__VA_ARGS__);            \
        if (c.g == 8) kernel<8><<<blocks(n), 256>>>(__VA_ARGS__);            \
    } while (0)
    if (f == "pst") BY_G(m_pst, A, dw, n);
    if (f == "prw") BY_G(m_prw, A, dw, n);
    if (f == "pld") BY_G(m_pld, A, OUT, dw, n);
    sync();
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    std::vector<Case> cs = cases();
    if (mode == "list-dirty") {
        for (const Dirty &c : dirty_cases())
            printf("dirty,L=%llu;k=%d;g=%d\n", (unsigned long long)c.lines, c.k, c.g);
        return 0;
    }
    if (mode == "list-spread") {
        for (const Case &c : spread_cases())
            printf("%s,N=%llu;g=%d;d=%d\n", c.fam, (unsigned long long)c.sectors, c.g, c.d);
        return 0;
    }
    if (mode == "list") {
        for (const Case &c : cs)
            printf("%s,N=%llu;g=%d;d=%d\n", c.fam, (unsigned long long)c.sectors, c.g, c.d);
        for (const Case &c : cs)
            if (std::string(c.fam) == "pst")
                printf("pst_warm,N=%llu;g=%d;d=%d\n", (unsigned long long)c.sectors, c.g, c.d);
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# device: %s, CC %d.%d, %d SMs, L2 %d bytes\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize);
    if (mode == "spread") A_BYTES = 16384 * MiB;
    CK(cudaMalloc(&A, A_BYTES));
    CK(cudaMalloc(&F, F_BYTES));
    CK(cudaMalloc(&OUT, 256));
    CK(cudaMemset(A, 0, A_BYTES));
    CK(cudaMemset(F, 0, F_BYTES));
    CK(cudaMemset(OUT, 0, 256));
    sync();
    if (mode == "check") {
        std::vector<float> h(A_BYTES / 4);
        for (const Case &c : cs) {
            CK(cudaMemset(A, 0, A_BYTES));
            launch(c, false);
            CK(cudaMemcpy(h.data(), A, A_BYTES, cudaMemcpyDeviceToHost));
            float want = std::string(c.fam) == "pst" ? 1.5f : 1.0f;
            uint64_t bad = 0, set = 0, n = c.sectors * c.g;
            for (uint64_t t = 0; t < n; t++) bad += h[(t / c.g) * (c.d / 4) + t % c.g] != want;
            for (float x : h) set += x != 0.0f;
            printf("check %s N=%llu g=%d d=%d: %llu bad words, %llu words set (want %llu)\n", c.fam,
                   (unsigned long long)c.sectors, c.g, c.d, (unsigned long long)bad,
                   (unsigned long long)set, (unsigned long long)n);
        }
        return 0;
    }
    if (mode == "cold") {
        for (const Case &c : cs) launch(c, false);
        return 0;
    }
    if (mode == "spread") {
        for (const Case &c : spread_cases()) launch(c, false);
        return 0;
    }
    if (mode == "dirty") {
        for (const Dirty &c : dirty_cases()) {
            uint64_t n = c.lines * c.k * c.g;
            int gk = c.g * 10 + c.k;
            if (gk == 11) m_lk<1, 1><<<blocks(n), 256>>>(A, n);
            if (gk == 12) m_lk<1, 2><<<blocks(n), 256>>>(A, n);
            if (gk == 14) m_lk<1, 4><<<blocks(n), 256>>>(A, n);
            if (gk == 81) m_lk<8, 1><<<blocks(n), 256>>>(A, n);
            if (gk == 82) m_lk<8, 2><<<blocks(n), 256>>>(A, n);
            if (gk == 84) m_lk<8, 4><<<blocks(n), 256>>>(A, n);
            sync();
        }
        return 0;
    }
    if (mode == "warm") {
        for (const Case &c : cs)
            if (std::string(c.fam) == "pst") launch(c, true);
        return 0;
    }
    fprintf(stderr, "usage: pstore check | list | cold | warm\n");
    return 2;
}
