// When the H200's SM merges two stores to the same sectors before its L2:
// the load on the store path, and which warps' stores meet.
//
// Build:  nvcc -O3 -arch=sm_90 -o wmerge wmerge.cu
// Run:    ./wmerge check   every case on a zeroed buffer; checks that exactly
//                          the expected sectors were written
//         ./wmerge         every case once (under Nsight Compute with
//                          --cache-control all; kernels named m_* are measured)
// Each launch is preceded by "CASE,<kernel>,<k=v;...>,<unmerged>" where
// <unmerged> is the L1 store sectors the case issues (the L2's write sectors
// with no merging) and the parameters are K, G (blocks), B (threads a block),
// S (active warp set, kernel m_set), n (sectors a set), d (spin cycles).
//
// m_run<K> (G blocks of B threads, grid-stride over 16 MiB): each virtual
//   thread t writes floats t*K .. t*K+K-1 with K back-to-back 4-byte stores,
//   as the corpus's store_run (seed 001's clear_four at K = 4). G from 1
//   block to two waves: how the merging grows with the load on the path.
// m_runspin<K> (as m_run, G = 1056, B = 256): d cycles of clock64 spin
//   between a thread's stores: how long a first store stays joinable.
// m_set (one block of 16 warps): the warps of set S (a bit mask of warp
//   indices) each write one word of every sector of set r (n sectors, four a
//   line), for R rounds; the others exit. Warp w issues from sub-partition
//   w % 4: {0,1} and {0,4} tell stores issued side by side from two
//   sub-partitions from stores of two warps of one.
// m_runv<K>, m_runclk<K>: m_run with each store's own value (register), and
//   with a clock read (one instruction) between a thread's stores.
// m_map<V>: wcomb's `pair` lane map (lane l: word (l/8)%4, then +4, of sector
//   l%8 of a set of 8, four a line), the same value twice (V = 0) or 1.0 then
//   3.0 (V = 1, wcomb's), grid-stride over 16 MiB.
// Every store is an inline-PTX st.global.f32 marked volatile (SASS in env.txt).

#include <cuda_runtime.h>

#include <algorithm>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"

static const size_t BYTES = 16u << 20;  // m_run's footprint
static const int R = 256;               // m_set's rounds

__device__ __forceinline__ void st(float *p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

__device__ __forceinline__ void spin(long long d) {
    if (d <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < d) {
    }
}

template <int K>
__global__ void m_run(float *v, size_t nthr) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += step) {
        float *p = v + t * K;
#pragma unroll
        for (int j = 0; j < K; j++) st(p + j, 1.5f);
    }
}

template <int K>
__global__ void m_runspin(float *v, size_t nthr, long long d) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += step) {
        float *p = v + t * K;
        st(p, 1.5f);
#pragma unroll
        for (int j = 1; j < K; j++) {
            spin(d);
            st(p + j, 1.5f);
        }
    }
}

// m_runv<K> (as m_run): store j writes the value 1.5 + j, from its own
// register: whether the stores' data must be one register.
template <int K>
__global__ void m_runv(float *v, size_t nthr) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += step) {
        float *p = v + t * K;
#pragma unroll
        for (int j = 0; j < K; j++) st(p + j, 1.5f + j);
    }
}

// m_runclk<K> (as m_run): a clock read between a thread's stores (one
// instruction, no branch): whether the stores must be adjacent.
template <int K>
__global__ void m_runclk(float *v, size_t nthr, unsigned *sink) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += step) {
        float *p = v + t * K;
        st(p, 1.5f);
#pragma unroll
        for (int j = 1; j < K; j++) {
            unsigned c;
            asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
            acc += c;
            st(p + j, 1.5f);
        }
    }
    if (acc == 0x12345678u) *sink = acc;
}

// m_map<V> (one warp's sets of 8 sectors, four a line, as wcomb's pair
// with no fresh sets between): lane l writes word (l / 8) % 4 of sector
// l % 8, then word + 4 of the same sector; V = 0 stores 1.5 twice, V = 1
// stores 1.0 then 3.0 (wcomb's values). Grid-stride over 16 MiB of sets.
template <int V>
__global__ void m_map(float *v, size_t sets) {
    int lane = threadIdx.x % 32;
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    int k = lane % 8;
    for (size_t s = warp; s < sets; s += warps) {
        float *p = v + s * 64 + (k / 4) * 32 + (k % 4) * 8 + (lane / 8) % 4;
        st(p, V ? 1.0f : 1.5f);
        st(p + 4, V ? 3.0f : 1.5f);
    }
}

// m_trace<K> (as m_run): lane 0 of each warp records the SM clock before
// its first store and after its last, for the first TRACE_IT iterations,
// into tr[warp][it][2]: how the warps of one SM interleave their runs.
// `./wmerge trace` runs these cases alone and prints the clocks as
// TRACE,K,B,warp,iteration,first,last lines.
static const int TRACE_IT = 64;
template <int K>
__global__ void m_trace(float *v, size_t nthr, long long *tr) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    int gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    int it = 0;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < nthr; t += step, it++) {
        float *p = v + t * K;
        long long a, b;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(a)::"memory");
#pragma unroll
        for (int j = 0; j < K; j++) st(p + j, 1.5f);
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(b)::"memory");
        if (lane == 0 && it < TRACE_IT) {
            tr[((size_t)gw * TRACE_IT + it) * 2] = a;
            tr[((size_t)gw * TRACE_IT + it) * 2 + 1] = b;
        }
    }
}

__global__ void m_set(float *a, unsigned mask, int n) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (!(mask >> warp & 1)) return;
    int rank = __popc(mask & ((1u << warp) - 1));  // this warp's place in the set
    int k = lane % n;
    const int sf = ((n + 3) / 4) * 32;  // floats a set
    for (int r = 0; r < R; r++) st(a + (size_t)r * sf + (k / 4) * 32 + (k % 4) * 8 + rank % 8, 4.0f);
}

struct Case {
    std::string kernel;
    int K, G, B;
    unsigned S;
    int n;
    long long d;
};

static std::vector<Case> cases() {
    std::vector<Case> c;
    for (int K : {2, 4, 8})
        for (int G : {1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2112}) c.push_back({"run", K, G, 256, 0, 0, 0});
    for (int G : {1, 8, 132, 1056, 4224}) c.push_back({"run", 2, G, 32, 0, 0, 0});
    for (int G : {1, 132}) c.push_back({"run", 2, G, 1024, 0, 0, 0});
    for (long long d : {0, 64, 256, 1024, 4096}) c.push_back({"runspin", 2, 1056, 256, 0, 0, d});
    // Second call: the data register, an instruction between, wcomb's lane
    // map, and the warps of one SM.
    for (int K : {2, 4})
        for (int G : {1, 132, 1056}) {
            int B = G == 1 ? 32 : 256;
            c.push_back({"runv", K, G, B, 0, 0, 0});
            c.push_back({"runclk", K, G, B, 0, 0, 0});
        }
    for (int G : {1, 132, 1056})
        for (int V : {0, 1}) c.push_back({"map", 2, G, G == 1 ? 32 : 256, (unsigned)V, 8, 0});
    for (int K : {2, 4})
        for (int B : {64, 128, 512, 768, 1024}) c.push_back({"run", K, 1, B, 0, 0, 0});
    c.push_back({"run", 4, 1, 32, 0, 0, 0});
    // Third call: the runs' clock traces on one SM (m_trace; written to
    // trace_K_B.csv by `./wmerge trace`, and measured like the rest).
    for (int K : {2, 4})
        for (int B : {256, 512, 768, 1024}) c.push_back({"trace", K, 1, B, 0, 0, 0});
    for (int n : {1, 4, 8, 16})
        for (unsigned S : {0x3u, 0x5u, 0x11u, 0x101u, 0xfu, 0x1111u, 0xffu, 0xffffu})
            c.push_back({"set", 0, 1, 512, S, n, 0});
    return c;
}

static size_t floats_needed(const Case &c) {
    if (c.kernel == "set") return (size_t)R * ((c.n + 3) / 4) * 32;
    return BYTES / 4;
}

static uint64_t unmerged(const Case &c) {
    if (c.kernel == "set") return (uint64_t)__builtin_popcount(c.S) * R * c.n;
    // Each warp instruction writes 32 words K apart: 4K sectors; BYTES/(128K)
    // warp-iterations of K instructions.
    return (uint64_t)(BYTES / (128 * c.K)) * c.K * 4 * c.K;
}

static uint64_t distinct(const Case &c) {
    if (c.kernel == "set") return (uint64_t)R * c.n;
    return BYTES / 32;
}

static unsigned *g_sink;
static long long *g_trace;

static void launch(const Case &c, float *a) {
    size_t nthr = c.K > 0 ? BYTES / 4 / c.K : 0;
    if (c.kernel == "run") {
        if (c.K == 2) m_run<2><<<c.G, c.B>>>(a, nthr);
        else if (c.K == 4) m_run<4><<<c.G, c.B>>>(a, nthr);
        else m_run<8><<<c.G, c.B>>>(a, nthr);
    } else if (c.kernel == "runv") {
        if (c.K == 2) m_runv<2><<<c.G, c.B>>>(a, nthr);
        else m_runv<4><<<c.G, c.B>>>(a, nthr);
    } else if (c.kernel == "runclk") {
        if (c.K == 2) m_runclk<2><<<c.G, c.B>>>(a, nthr, g_sink);
        else m_runclk<4><<<c.G, c.B>>>(a, nthr, g_sink);
    } else if (c.kernel == "map") {
        if (c.S) m_map<1><<<c.G, c.B>>>(a, BYTES / 256);
        else m_map<0><<<c.G, c.B>>>(a, BYTES / 256);
    } else if (c.kernel == "trace") {
        if (c.K == 2) m_trace<2><<<c.G, c.B>>>(a, nthr, g_trace);
        else m_trace<4><<<c.G, c.B>>>(a, nthr, g_trace);
    } else if (c.kernel == "runspin") {
        m_runspin<2><<<c.G, c.B>>>(a, nthr, c.d);
    } else {
        m_set<<<1, c.B>>>(a, c.S, c.n);
    }
    CK(cudaGetLastError());
}

int main(int argc, char **argv) {
    bool check = argc > 1 && strcmp(argv[1], "check") == 0;
    std::vector<Case> cs = cases();
    size_t maxf = 0;
    for (auto &c : cs) maxf = std::max(maxf, floats_needed(c));
    float *a;
    CK(cudaMalloc(&a, maxf * sizeof(float)));
    CK(cudaMalloc(&g_sink, sizeof(unsigned)));
    const size_t trace_n = (size_t)32 * TRACE_IT * 2;  // up to 32 warps
    CK(cudaMalloc(&g_trace, trace_n * sizeof(long long)));
    bool trace = argc > 1 && strcmp(argv[1], "trace") == 0;
    std::vector<float> h(check ? maxf : 0);
    int bad = 0;
    for (auto &c : cs) {
        if (trace && c.kernel != "trace") continue;
        if (check) CK(cudaMemset(a, 0, maxf * sizeof(float)));
        printf("CASE,%s,K=%d;G=%d;B=%d;S=0x%x;n=%d;d=%lld,%llu\n", c.kernel.c_str(), c.K, c.G, c.B, c.S, c.n, c.d,
               (unsigned long long)unmerged(c));
        fflush(stdout);
        if (trace) CK(cudaMemset(g_trace, 0, trace_n * sizeof(long long)));
        launch(c, a);
        CK(cudaDeviceSynchronize());
        if (trace) {
            std::vector<long long> h_tr(trace_n);
            CK(cudaMemcpy(h_tr.data(), g_trace, trace_n * sizeof(long long), cudaMemcpyDeviceToHost));
            for (int w = 0; w < c.B / 32; w++)
                for (int i = 0; i < TRACE_IT; i++)
                    printf("TRACE,%d,%d,%d,%d,%lld,%lld\n", c.K, c.B, w, i, h_tr[((size_t)w * TRACE_IT + i) * 2],
                           h_tr[((size_t)w * TRACE_IT + i) * 2 + 1]);
        }
        if (check) {
            CK(cudaMemcpy(h.data(), a, maxf * sizeof(float), cudaMemcpyDeviceToHost));
            size_t sectors = 0, words = 0;
            for (size_t s = 0; s < floats_needed(c) / 8; s++) {
                bool any = false;
                for (int k = 0; k < 8; k++) {
                    any |= h[s * 8 + k] != 0.0f;
                    words += h[s * 8 + k] != 0.0f;
                }
                sectors += any;
            }
            bool ok = sectors == distinct(c);
            bad += !ok;
            printf("CHECK,%s,words=%zu,sectors=%zu,expected_sectors=%llu,%s\n", c.kernel.c_str(), words, sectors,
                   (unsigned long long)distinct(c), ok ? "ok" : "BAD");
        }
    }
    CK(cudaFree(a));
    if (check) printf("check: %d bad cases of %zu\n", bad, cs.size());
    return bad != 0;
}
