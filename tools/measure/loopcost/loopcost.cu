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
//         ./loopcost second   the second call's kernels (m_war, m_war2,
//                      m_noreg, m_fixed), the same way
//
// m_run<K, U> (grid 1, block 32, 16 MiB): thread t of the grid-stride loop
//   writes floats t*K .. t*K+K-1 with K 4-byte stores (inline PTX
//   st.global.f32, volatile), U = 1 unrolled, U = 0 `#pragma unroll 1`.
// Second call, each a loop of T trips kept a loop (`#pragma unroll 1`),
// to isolate how long a store holds its source registers:
// m_war: a store through pointer p, then p += 32 floats (the next trip's
//   address rewrites the registers the store reads);
// m_war2: two stores through p (p and p + 1), then p += 32;
// m_noreg: p += 32 alone (kept by an empty asm), p stored once at the end:
//   the same loop without the store;
// m_fixed: a store of a constant to one fixed address each trip: no
//   register of the store is ever rewritten.
// m_mad<N> (grid 1, block 32, trips T): each trip runs N dependent
//   x = x * x + t (IMAD, not foldable) and stores x once (so the chain is
//   kept).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
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

__global__ void m_war(float *v, int trips, long long *cyc) {
    float *p = v + threadIdx.x;
    long long t0 = clock64();
#pragma unroll 1
    for (int t = 0; t < trips; t++) {
        st(p, 1.5f);
        p += 32;
        asm volatile("" : "+l"(p));
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

__global__ void m_war2(float *v, int trips, long long *cyc) {
    float *p = v + 2 * threadIdx.x;
    long long t0 = clock64();
#pragma unroll 1
    for (int t = 0; t < trips; t++) {
        st(p, 1.5f);
        st(p + 1, 1.5f);
        p += 64;
        asm volatile("" : "+l"(p));
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

__global__ void m_noreg(float *v, int trips, long long *cyc) {
    float *p = v + threadIdx.x;
    long long t0 = clock64();
#pragma unroll 1
    for (int t = 0; t < trips; t++) {
        p += 32;
        asm volatile("" : "+l"(p));
    }
    long long t1 = clock64();
    st(p - 32, 1.5f);
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

__global__ void m_fixed(float *v, int trips, long long *cyc) {
    float *p = v + threadIdx.x;
    long long t0 = clock64();
#pragma unroll 1
    for (int t = 0; t < trips; t++) st(p, 1.5f);
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

void war_k(float *v, long long *c) { m_war<<<1, 32>>>(v, T, c); }
void war2_k(float *v, long long *c) { m_war2<<<1, 32>>>(v, T, c); }
void noreg_k(float *v, long long *c) { m_noreg<<<1, 32>>>(v, T, c); }
void fixed_k(float *v, long long *c) { m_fixed<<<1, 32>>>(v, T, c); }

int main(int argc, char **argv) {
    bool second = argc > 1 && std::string(argv[1]) == "second";
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
    if (second)
        cases = {
            {"m_war", 1, 0, 0, T, war_k},
            {"m_war2", 2, 0, 0, T, war2_k},
            {"m_noreg", 0, 0, 0, T, noreg_k},
            {"m_fixed", 1, 0, 0, T, fixed_k},
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
