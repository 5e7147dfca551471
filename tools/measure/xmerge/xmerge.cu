// Which stores of different warps the H200's SM merges before its L2: the
// lines an instruction touches, the time between the two warps' stores, and
// other warps storing beside them.
//
// Build:  nvcc -O3 -arch=sm_90 -o xmerge xmerge.cu
// Run:    ./xmerge check   every case on a zeroed buffer; checks that exactly
//                          the expected words were written
//         ./xmerge         every case once (under Nsight Compute with
//                          --cache-control all; the kernel m_x is measured)
// Each launch is preceded by "CASE,x,<k=v;...>,<unmerged>" where <unmerged>
// is the L1 store sectors the case issues (the L2's write sectors with no
// merging).
//
// m_x (one block of B threads, R rounds): every round begins at a barrier.
//   The warps of set S (a bit mask of warp indices; warp w issues from
//   sub-partition w % 4) then each store one word (4 bytes) into each of
//   the same L x s sectors: s sectors (from sector 0) of each of L
//   consecutive lines, lane l writing sector q = l % (L s) (line q / s,
//   sector q % s), word (rank + l / (L s)) % 8, rank the warp's place in S.
//   The set's second warp first spins d cycles (clock64; the others spin
//   0, which takes the same branch). With `busy` = 1 the warps outside S
//   each store one whole line of their own every round (other lines, never
//   shared): load on the SM's store path beside the pair.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "../ck.cuh"

static const int R = 256;  // rounds

__device__ __forceinline__ void st(float *p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

__device__ __forceinline__ void spin(long long d) {
    long long t0 = clock64();
    while (clock64() - t0 < d) {
    }
}

// Floats a round's set takes: L lines.
__host__ __device__ inline size_t word_of(int r, int L, int s, int rank, int lane) {
    int q = lane % (L * s);
    size_t line = (size_t)r * L + q / s;
    int word = (rank + lane / (L * s)) % 8;
    return line * 32 + (q % s) * 8 + word;
}

__global__ void m_x(float *a, float *other, unsigned mask, int L, int s, long long d, int busy) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    bool in = mask >> warp & 1;
    int rank = __popc(mask & ((1u << warp) - 1));
    long long wait = in && rank == 1 ? d : 0;
    for (int r = 0; r < R; r++) {
        __syncthreads();
        if (in) {
            spin(wait);
            st(a + word_of(r, L, s, rank, lane), 2.0f);
        } else if (busy) {
            st(other + ((size_t)r * 32 + warp) * 32 + lane, 3.0f);
        }
    }
}

struct Case {
    int B;
    unsigned S;
    int L, s;
    long long d;
    int busy;
};

static std::vector<Case> cases() {
    std::vector<Case> c;
    // A: lines an instruction touches, one sector each (and whole lines of
    // 4), pairs from two sub-partitions (0x3, 0x5), from one (0x11), four
    // sub-partitions (0xf), no delay.
    for (int L : {1, 2, 4, 8, 16, 32})
        for (unsigned S : {0x3u, 0x5u, 0x11u, 0xfu}) c.push_back({512, S, L, 1, 0, 0});
    for (int L : {1, 2, 4, 8})
        for (unsigned S : {0x3u, 0x11u, 0xfu}) c.push_back({512, S, L, 4, 0, 0});
    // B: the second warp d cycles later.
    for (long long d : {4, 8, 16, 32, 64, 128, 512}) {
        c.push_back({512, 0x3u, 1, 4, d, 0});
        c.push_back({512, 0x3u, 8, 1, d, 0});
        c.push_back({512, 0x11u, 1, 4, d, 0});
    }
    // C: the other warps of a block of B storing lines of their own.
    for (int B : {128, 256, 512, 1024})
        for (int L : {1, 8, 16}) {
            c.push_back({B, 0x3u, L, L == 1 ? 4 : 1, 0, 1});
            c.push_back({B, 0xfu, L, L == 1 ? 4 : 1, 0, 1});
        }
    return c;
}

static int popc(unsigned x) { return __builtin_popcount(x); }

// The warps of S that a block of B threads has.
static unsigned in_block(unsigned S, int B) { return S & (unsigned)((1ull << (B / 32)) - 1); }

static uint64_t unmerged(const Case &c) {
    uint64_t pair = (uint64_t)popc(c.S) * R * std::min(c.L * c.s, 32);
    uint64_t others = c.busy ? (uint64_t)(c.B / 32 - popc(in_block(c.S, c.B))) * R * 4 : 0;
    return pair + others;
}

int main(int argc, char **argv) {
    bool check = argc > 1 && strcmp(argv[1], "check") == 0;
    std::vector<Case> cs = cases();
    const size_t nf = (size_t)R * 32 * 32, no = (size_t)R * 32 * 32;
    float *a, *other;
    CK(cudaMalloc(&a, nf * sizeof(float)));
    CK(cudaMalloc(&other, no * sizeof(float)));
    std::vector<float> h(check ? nf : 0);
    int bad = 0;
    for (auto &c : cs) {
        if (check) CK(cudaMemset(a, 0, nf * sizeof(float)));
        printf("CASE,x,B=%d;S=0x%x;L=%d;s=%d;d=%lld;busy=%d,%llu\n", c.B, c.S, c.L, c.s, c.d, c.busy,
               (unsigned long long)unmerged(c));
        fflush(stdout);
        m_x<<<1, c.B>>>(a, other, c.S, c.L, c.s, c.d, c.busy);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (check) {
            CK(cudaMemcpy(h.data(), a, nf * sizeof(float), cudaMemcpyDeviceToHost));
            std::set<size_t> want;
            int n = popc(in_block(c.S, c.B));
            for (int r = 0; r < R; r++)
                for (int rank = 0; rank < n; rank++)
                    for (int l = 0; l < 32; l++) want.insert(word_of(r, c.L, c.s, rank, l));
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
