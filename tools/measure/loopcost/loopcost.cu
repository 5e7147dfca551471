// What a loop trip costs one warp alone on the H200, and what nvcc makes of
// the loops: the grid-stride store loop of tools/measure/wmerge (m_run<K>,
// the corpus family store_merge) with its inner loop of K stores unrolled,
// as nvcc compiles it by default, and kept a loop (#pragma unroll 1), as
// gpusim's kernel IR runs a `For`; and a loop of N dependent integer
// multiply-adds a trip.
//
// Build:  nvcc -O3 -arch=sm_90 -o loopcost loopcost.cu
// Run:    ./loopcost   one block of one warp per kernel; prints a CSV line
//                      per kernel: the SM cycles from the warp's first
//                      clock read to its last (clock64, median of 5 warm
//                      launches) over its trips
//
// m_run<K, U> (grid 1, block 32, 16 MiB): thread t of the grid-stride loop
//   writes floats t*K .. t*K+K-1 with K 4-byte stores (inline PTX
//   st.global.f32, volatile), U = 1 unrolled, U = 0 `#pragma unroll 1`.
// m_mad<N> (grid 1, block 32, trips T): each trip runs N dependent
//   x = x * x + t (IMAD, not foldable) and stores x once (so the chain is
//   kept).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../ck.cuh"

static const size_t BYTES = 16u << 20;
static const int T = 65536;  // m_mad's trips

__device__ __forceinline__ void st(float *p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

template <int K, int U>
__global__ void m_run(float *v, size_t nthr, long long *cyc) {
    long long t0 = clock64();
    for (size_t t = blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += gridDim.x * blockDim.x) {
        if (U) {
#pragma unroll
            for (int j = 0; j < K; j++) st(v + t * K + j, 1.5f);
        } else {
#pragma unroll 1
            for (int j = 0; j < K; j++) st(v + t * K + j, 1.5f);
        }
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

template <int N>
__global__ void m_mad(float *v, int trips, long long *cyc) {
    long long t0 = clock64();
    unsigned x = threadIdx.x;
    for (int t = 0; t < trips; t++) {
#pragma unroll
        for (int i = 0; i < N; i++) x = x * x + (unsigned)t;
        st(v + (size_t)(t % 1024) * 32 + threadIdx.x, (float)x);
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

typedef void (*launch_fn)(float *, long long *);

struct Case {
    const char *kernel;
    int k, u, n;
    long long trips;
    launch_fn f;
};

template <int K, int U>
void run_k(float *v, long long *c) {
    m_run<K, U><<<1, 32>>>(v, BYTES / 4 / K, c);
}
template <int N>
void mad_k(float *v, long long *c) {
    m_mad<N><<<1, 32>>>(v, T, c);
}

int main() {
    float *v;
    long long *c;
    CK(cudaMalloc(&v, BYTES));
    CK(cudaMalloc(&c, sizeof(long long)));
    CK(cudaMemset(v, 0, BYTES));
    const long long run_trips = BYTES / 4 / 32;  // floats / lanes, over K below
    std::vector<Case> cases = {
        {"m_run", 1, 1, 0, run_trips / 1, run_k<1, 1>}, {"m_run", 2, 1, 0, run_trips / 2, run_k<2, 1>},
        {"m_run", 4, 1, 0, run_trips / 4, run_k<4, 1>}, {"m_run", 8, 1, 0, run_trips / 8, run_k<8, 1>},
        {"m_run", 2, 0, 0, run_trips / 2, run_k<2, 0>}, {"m_run", 4, 0, 0, run_trips / 4, run_k<4, 0>},
        {"m_run", 8, 0, 0, run_trips / 8, run_k<8, 0>}, {"m_mad", 0, 1, 0, T, mad_k<0>},
        {"m_mad", 0, 1, 4, T, mad_k<4>},                {"m_mad", 0, 1, 16, T, mad_k<16>},
        {"m_mad", 0, 1, 64, T, mad_k<64>},
    };
    printf("kernel,K,unrolled,N,trips,cycles,cycles_per_trip\n");
    for (const Case &k : cases) {
        k.f(v, c);  // warm
        CK(cudaDeviceSynchronize());
        std::vector<long long> r;
        for (int i = 0; i < 5; i++) {
            k.f(v, c);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            long long h;
            CK(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
            r.push_back(h);
        }
        std::sort(r.begin(), r.end());
        printf("%s,%d,%d,%d,%lld,%lld,%.2f\n", k.kernel, k.k, k.u, k.n, k.trips, r[2],
               (double)r[2] / k.trips);
    }
    return 0;
}
