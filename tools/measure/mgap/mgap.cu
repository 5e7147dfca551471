// How long a warp's store run stays open on the H200, and whether a taken
// branch holds only its own warp.
//
// Build:  nvcc -O3 -arch=sm_90 -o mgap mgap.cu
// Run:    ./mgap         every m_gap case once (under Nsight Compute with
//                        --cache-control all; kernels named m_* are
//                        measured), each launch preceded by
//                        "CASE,<kernel>,K=..;N=..;G=..;B=..,<unmerged>", where
//                        <unmerged> is the L1 store sectors the case issues
//                        (the L2's write sectors with no merging)
//         ./mgap clock   every case, warm, timed with clock64: a CSV line per
//                        case with the median over warps of the SM cycles a
//                        trip (median of 3 launches)
//
// m_gap<K, N> (G blocks of B threads, grid-stride over 4 MiB): thread t
//   writes floats t*K .. t*K+K-1 with K 4-byte stores (inline PTX
//   st.global.f32, volatile), as tools/measure/wmerge's m_run<K>, with a
//   chain of N dependent integer multiply-adds (inline PTX mad.lo.u32,
//   volatile) before each store but the first, whose result the store
//   writes: the store cannot issue before the chain's end, so a warp's
//   consecutive stores are about 4 N cycles apart (4 cycles a dependent
//   IMAD, tools/measure/loopcost). No branch between them (the SASS is
//   kept). Each warp instruction writes one word of 4K sectors (K = 2: 8
//   sectors in 2 lines; K = 4: 16 in 4).
// m_loop (G = 1, B threads, T trips a warp): tools/measure/loopcost's
//   m_noreg, a loop of four instructions (IADD3, ISETP, IMAD.X, BRA) kept a
//   loop: the cycles a trip as warps are added to the SM (B / 32 warps,
//   B / 128 a scheduler).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"

static const size_t BYTES = 4u << 20;
static const int T = 65536;  // m_loop's trips

__device__ __forceinline__ void st(float *p, unsigned v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(__uint_as_float(v)) : "memory");
}

template <int K, int N>
__global__ void m_gap(float *v, size_t nthr, long long *cyc) {
    long long t0 = clock64();
    size_t step = (size_t)gridDim.x * blockDim.x;
    size_t trips = 0;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += step, trips++) {
        float *p = v + t * K;
        unsigned x = (unsigned)t;
        st(p, x);
#pragma unroll
        for (int j = 1; j < K; j++) {
#pragma unroll
            for (int i = 0; i < N; i++) asm volatile("mad.lo.u32 %0, %0, %0, %1;" : "+r"(x) : "r"(j));
            st(p + j, x);
        }
    }
    long long t1 = clock64();
    if (threadIdx.x % 32 == 0) {
        int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
        cyc[2 * w] = t1 - t0;
        cyc[2 * w + 1] = (long long)trips;
    }
}

__global__ void m_loop(float *v, int trips, long long *cyc) {
    float *p = v + threadIdx.x;
    long long t0 = clock64();
#pragma unroll 1
    for (int t = 0; t < trips; t++) {
        p += 32;
        asm volatile("" : "+l"(p));
    }
    long long t1 = clock64();
    st(p - 32, 1u);
    if (threadIdx.x % 32 == 0) {
        int w = threadIdx.x / 32;
        cyc[2 * w] = t1 - t0;
        cyc[2 * w + 1] = trips;
    }
}

struct Case {
    std::string kernel;
    int K, N, G, B;
};

static std::vector<Case> cases() {
    std::vector<Case> c;
    for (int K : {2, 4})
        for (int N : {0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48}) c.push_back({"gap", K, N, 1, 32});
    // One SM, 8 and 32 warps: whether the same gaps break their runs alike.
    for (int B : {256, 1024})
        for (int N : {0, 2, 4, 8}) c.push_back({"gap", 4, N, 1, B});
    for (int B : {32, 64, 128, 256, 512, 1024}) c.push_back({"loop", 0, 0, 1, B});
    return c;
}

template <int K>
static void gap_k(const Case &c, float *v, long long *cyc) {
    size_t nthr = BYTES / 4 / K;
    switch (c.N) {
#define G_(n) \
    case n: m_gap<K, n><<<c.G, c.B>>>(v, nthr, cyc); break;
        G_(0) G_(1) G_(2) G_(3) G_(4) G_(5) G_(6) G_(8) G_(10) G_(12) G_(16) G_(24) G_(32) G_(48)
#undef G_
        default: fprintf(stderr, "no N=%d\n", c.N); exit(2);
    }
}

static void launch(const Case &c, float *v, long long *cyc) {
    if (c.kernel == "loop") m_loop<<<1, c.B>>>(v, T, cyc);
    else if (c.K == 2) gap_k<2>(c, v, cyc);
    else gap_k<4>(c, v, cyc);
    CK(cudaGetLastError());
}

static unsigned long long unmerged(const Case &c) {
    if (c.kernel == "loop") return (unsigned long long)c.B / 32;  // one 1-sector store a warp
    // BYTES / (128 K) warp trips of K instructions of 4K sectors.
    return (unsigned long long)(BYTES / (128 * c.K)) * c.K * 4 * c.K;
}

int main(int argc, char **argv) {
    bool clk = argc > 1 && strcmp(argv[1], "clock") == 0;
    std::vector<Case> cs = cases();
    float *v;
    long long *cyc;
    const int maxw = 1024;
    CK(cudaMalloc(&v, BYTES + 32 * T * sizeof(float) + 4096));
    CK(cudaMalloc(&cyc, 2 * maxw * sizeof(long long)));
    CK(cudaMemset(v, 0, BYTES));
    if (clk) printf("kernel,K,N,G,B,warps,trips_per_warp,cycles_per_trip_median,cycles_per_trip_min,cycles_per_trip_max\n");
    for (auto &c : cs) {
        if (!clk) {
            if (c.kernel == "loop") continue;
            printf("CASE,m_%s,K=%d;N=%d;G=%d;B=%d,%llu\n", c.kernel.c_str(), c.K, c.N, c.G, c.B, unmerged(c));
            fflush(stdout);
            launch(c, v, cyc);
            CK(cudaDeviceSynchronize());
            continue;
        }
        int warps = c.G * c.B / 32;
        launch(c, v, cyc);  // warm
        CK(cudaDeviceSynchronize());
        std::vector<double> med;
        double lo = 1e30, hi = 0, trips = 0;
        for (int r = 0; r < 3; r++) {
            CK(cudaMemset(cyc, 0, 2 * maxw * sizeof(long long)));
            launch(c, v, cyc);
            CK(cudaDeviceSynchronize());
            std::vector<long long> h(2 * warps);
            CK(cudaMemcpy(h.data(), cyc, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            std::vector<double> per;
            for (int w = 0; w < warps; w++)
                if (h[2 * w + 1] > 0) per.push_back((double)h[2 * w] / h[2 * w + 1]);
            std::sort(per.begin(), per.end());
            med.push_back(per[per.size() / 2]);
            lo = std::min(lo, per.front());
            hi = std::max(hi, per.back());
            trips = h[1];
        }
        std::sort(med.begin(), med.end());
        printf("m_%s,%d,%d,%d,%d,%d,%.0f,%.2f,%.2f,%.2f\n", c.kernel.c_str(), c.K, c.N, c.G, c.B, warps, trips, med[1],
               lo, hi);
    }
    CK(cudaFree(v));
    CK(cudaFree(cyc));
    return 0;
}
