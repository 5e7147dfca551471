// How far apart in time two warps' stores to the same sectors may reach the
// H200's L1 and still leave the SM as one (the merge window), and whether
// stores that share only some of their sectors merge those.
//
// Build:  nvcc -O3 -arch=sm_90 -o xwin xwin.cu
// Run:    ./xwin check   every case on a zeroed buffer: checks the words
//                        written, prints each case's gaps (GAP lines)
//         ./xwin         every case once (under Nsight Compute with
//                        --cache-control all; the kernels m_w<N> are measured)
//         ./xwin [check] second   the same for the second call's cases (m_v)
//         ./xwin [check] third    the same for the third call's cases (m_p<K>)
// Each launch is preceded by "CASE,w,<k=v;...>,<unmerged>" (<unmerged>: the
// L1 store sectors of the two warps, the L2's write sectors with no
// merging) and followed by "GAP,<p10>,<p50>,<p90>,<min>,<max>": the second
// warp's clock (clock64, read just before its store) minus the first's, in
// SM cycles, over the R rounds. The clocks are kept in shared memory and
// written out by warp 0 after the rounds: 128 whole sectors more at the L2.
//
// m_w<N> (one block of B = 512 threads, R rounds): each round begins at a
// barrier. The two warps of S (a bit mask; warp w issues from
// sub-partition w % 4) then each store one word into each of 4 consecutive
// sectors (lane l: sector l % 4, word (rank + l / 4) % 8 of it); the
// second warp's 4 sectors start `sh` sectors after the first's (sh = 0: the
// same 4; sh = 1..3: 3, 2 or 1 shared; 4: none), and before its store it
// runs a chain of N dependent integer multiply-adds whose result its stored
// value depends on (the first warp runs none). The other warps only take
// the barrier.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "../ck.cuh"

static const int R = 256;  // rounds
static const int B = 512;  // threads per block

__device__ __forceinline__ void st(float *p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// Sector of a round: 8 sectors (two lines) a round, so rounds never share.
__host__ __device__ inline size_t word_of(int r, int sh, int rank, int lane) {
    size_t sector = (size_t)r * 8 + (rank == 1 ? sh : 0) + lane % 4;
    return sector * 8 + (rank + lane / 4) % 8;
}

template <int N>
__global__ void m_w(float *a, long long *stamp, unsigned mask, int sh) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    bool in = mask >> warp & 1;
    int rank = __popc(mask & ((1u << warp) - 1));
    __shared__ long long ts[R * 2];
    unsigned x = threadIdx.x;
    for (int r = 0; r < R; r++) {
        __syncthreads();
        if (in) {
            if (rank == 1) {
#pragma unroll
                for (int i = 0; i < N; i++) asm volatile("mad.lo.u32 %0, %0, 3, 1;" : "+r"(x));
            }
            long long t = clock64();
            st(a + word_of(r, sh, rank, lane), 2.0f + (float)(x & 1u) * 0.0f + (float)(x == 7u));
            if (lane == 0) ts[r * 2 + rank] = t;
        }
    }
    // The stamps leave after the rounds, whole sectors by one warp (128
    // sectors, make_csv.py takes them off).
    __syncthreads();
    if (warp == 0)
        for (int i = lane; i < R * 2; i += 32) stamp[i] = ts[i];
}

// m_v (the second call): as m_w, but each warp of S runs a loop of n
// dependent multiply-adds, one an iteration (n0 for the first warp, n1 for
// the second; a loop, so that neither is predicated off: m_w's chains of up
// to 7 are predicated, and the first warp takes as long as the second).
__global__ void m_v(float *a, long long *stamp, unsigned mask, int sh, int n0, int n1) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    bool in = mask >> warp & 1;
    int rank = __popc(mask & ((1u << warp) - 1));
    int n = rank == 1 ? n1 : n0;
    __shared__ long long ts[R * 2];
    unsigned x = threadIdx.x;
    for (int r = 0; r < R; r++) {
        __syncthreads();
        if (in) {
#pragma unroll 1
            for (int i = 0; i < n; i++) asm volatile("mad.lo.u32 %0, %0, 3, 1;" : "+r"(x));
            long long t = clock64();
            st(a + word_of(r, sh, rank, lane), 2.0f + (float)(x == 7u));
            if (lane == 0) ts[r * 2 + rank] = t;
        }
    }
    __syncthreads();
    if (warp == 0)
        for (int i = lane; i < R * 2; i += 32) stamp[i] = ts[i];
}

// m_p<K> (the third call): both warps of S run the same straight-line
// code, a chain of 8 dependent multiply-adds, with a store predicated on
// the warp's rank before the chain (the first warp's) and one after K of
// its steps (the second's); each store's address depends on the chain's
// value at its place (through `x & z`, z = 0), so the assembler cannot move
// it. The second warp's store so issues K dependent latencies after the
// first's, both warps taking the same time a round.
__device__ __forceinline__ void pst(float *p, float v, unsigned on) {
    asm volatile("{ .reg .pred q; setp.ne.u32 q, %2, 0; @q st.global.f32 [%0], %1; }" ::"l"(p), "f"(v), "r"(on)
                 : "memory");
}

__device__ __forceinline__ void mad(unsigned &x) { asm volatile("mad.lo.u32 %0, %0, 3, 1;" : "+r"(x)); }

template <int K>
__global__ void m_p(float *a, long long *stamp, unsigned mask, int sh, unsigned z) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    bool in = mask >> warp & 1;
    int rank = __popc(mask & ((1u << warp) - 1));
    __shared__ long long ts[R * 2];
    unsigned x = threadIdx.x;
    for (int r = 0; r < R; r++) {
        __syncthreads();
        if (in) {
            float *p = a + word_of(r, sh, rank, lane);
            long long t0 = clock64();
            pst(p + (x & z), 2.0f, rank == 0);
#pragma unroll
            for (int i = 0; i < K; i++) mad(x);
            long long t1 = clock64();
            pst(p + (x & z), 2.0f, rank == 1);
#pragma unroll
            for (int i = K; i < 8; i++) mad(x);
            if (lane == 0) ts[r * 2 + rank] = rank == 0 ? t0 : t1;
        }
    }
    __syncthreads();
    if (warp == 0)
        for (int i = lane; i < R * 2; i += 32) stamp[i] = ts[i];
}

struct Case {
    unsigned S;
    int sh, N;
    int n0 = -1, n1 = -1;  // m_v's loop counts (-1: an m_w or m_p case)
    int K = -1;            // m_p's place of the second store (-1: none)
};

static const int Ns[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32};

static std::vector<Case> cases() {
    std::vector<Case> c;
    // A: the second warp N dependent multiply-adds later, warps of two
    // sub-partitions (0x3) and of one (0x11), the same 4 sectors.
    for (int N : Ns)
        for (unsigned S : {0x3u, 0x11u}) c.push_back({S, 0, N});
    // B: the two stores sharing 3, 2, 1 or none of their 4 sectors, together.
    for (int sh : {1, 2, 3, 4})
        for (unsigned S : {0x3u, 0x11u}) c.push_back({S, sh, 0});
    return c;
}

static std::vector<Case> second() {
    std::vector<Case> c;
    // C: the second warp n1 loop iterations after the first, and the first
    // n0 after the second; two sub-partitions and one.
    for (unsigned S : {0x3u, 0x11u}) {
        for (int n1 : {0, 1, 2, 3, 4, 5, 6, 8}) c.push_back({S, 0, 0, 0, n1});
        for (int n0 : {1, 2, 3}) c.push_back({S, 0, 0, n0, 0});
    }
    // D: one sector shared (sh = 3), the second warp 1 and 2 iterations later.
    for (int n1 : {1, 2}) c.push_back({0x3u, 3, 0, 0, n1});
    return c;
}

static std::vector<Case> third() {
    std::vector<Case> c;
    // E: the second warp's store K dependent steps after the first's; two
    // sub-partitions and one; all 4 sectors shared, and one (sh = 3).
    for (unsigned S : {0x3u, 0x11u})
        for (int K : {0, 1, 2, 3, 4, 5, 6, 8}) c.push_back({S, 0, 0, -1, -1, K});
    for (int K : {0, 1, 2, 3}) c.push_back({0x3u, 3, 0, -1, -1, K});
    return c;
}

static void launch(const Case &c, float *a, long long *stamp) {
    if (c.K >= 0) {
        switch (c.K) {
#define P(k) \
    case k: m_p<k><<<1, B>>>(a, stamp, c.S, c.sh, 0u); break;
            P(0) P(1) P(2) P(3) P(4) P(5) P(6) P(8)
#undef P
            default: fprintf(stderr, "no kernel for K=%d\n", c.K); exit(2);
        }
        return;
    }
    if (c.n0 >= 0) {
        m_v<<<1, B>>>(a, stamp, c.S, c.sh, c.n0, c.n1);
        return;
    }
    switch (c.N) {
#define K(n) \
    case n: m_w<n><<<1, B>>>(a, stamp, c.S, c.sh); break;
        K(0) K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(10) K(12) K(16) K(24) K(32)
#undef K
        default: fprintf(stderr, "no kernel for N=%d\n", c.N); exit(2);
    }
}

int main(int argc, char **argv) {
    // [check] [second]: the words check; the second call's cases (m_v).
    bool check = false, two = false, three = false;
    for (int i = 1; i < argc; i++) {
        check |= strcmp(argv[i], "check") == 0;
        two |= strcmp(argv[i], "second") == 0;
        three |= strcmp(argv[i], "third") == 0;
    }
    std::vector<Case> cs = three ? third() : two ? second() : cases();
    const size_t nf = (size_t)R * 8 * 8 + 64;
    float *a;
    long long *stamp;
    CK(cudaMalloc(&a, nf * sizeof(float)));
    CK(cudaMalloc(&stamp, R * 2 * sizeof(long long)));
    std::vector<float> h(nf);
    std::vector<long long> hs(R * 2);
    int bad = 0;
    for (auto &c : cs) {
        if (check) CK(cudaMemset(a, 0, nf * sizeof(float)));
        if (c.K >= 0)
            printf("CASE,p,S=0x%x;sh=%d;K=%d,%d\n", c.S, c.sh, c.K, 2 * R * 4);
        else if (c.n0 >= 0)
            printf("CASE,v,S=0x%x;sh=%d;n0=%d;n1=%d,%d\n", c.S, c.sh, c.n0, c.n1, 2 * R * 4);
        else
            printf("CASE,w,S=0x%x;sh=%d;N=%d,%d\n", c.S, c.sh, c.N, 2 * R * 4);
        fflush(stdout);
        launch(c, a, stamp);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hs.data(), stamp, R * 2 * sizeof(long long), cudaMemcpyDeviceToHost));
        std::vector<long long> g(R);
        for (int r = 0; r < R; r++) g[r] = hs[r * 2 + 1] - hs[r * 2];
        std::sort(g.begin(), g.end());
        printf("GAP,%lld,%lld,%lld,%lld,%lld\n", g[R / 10], g[R / 2], g[R * 9 / 10], g[0], g[R - 1]);
        fflush(stdout);
        if (check) {
            CK(cudaMemcpy(h.data(), a, nf * sizeof(float), cudaMemcpyDeviceToHost));
            std::set<size_t> want;
            for (int r = 0; r < R; r++)
                for (int rank = 0; rank < 2; rank++)
                    for (int l = 0; l < 32; l++) want.insert(word_of(r, c.sh, rank, l));
            size_t got = 0, wrong = 0;
            for (size_t i = 0; i < nf; i++) {
                bool w = h[i] != 0.0f;
                got += w;
                wrong += w != (want.count(i) == 1);
            }
            bool ok = wrong == 0;
            bad += !ok;
            printf("CHECK,words=%zu,expected=%zu,%s\n", got, want.size(), ok ? "ok" : "BAD");
        }
    }
    if (check) printf("check: %d bad cases of %zu\n", bad, cs.size());
    return bad != 0;
}
