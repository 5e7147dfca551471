// Where and when the H200 merges store sectors before its L2 tag stage.
//
// Build:  nvcc -O3 -arch=sm_90 -o wcomb wcomb.cu
// Run:    ./wcomb check     stores every case on a zeroed buffer and checks
//                           that exactly the expected sectors were written
//         ./wcomb           every case once (run it under Nsight Compute with
//                           --cache-control all; kernels named m_* are measured)
// Each launch is preceded by a line "CASE,<name>,n=..;spl=..;g=..;d=..;w=..;b=..;dw=..,<expected>"
// where <expected> is the L1 store sectors the case issues (what the L2 would
// count with no merging).
//
// A "set" is n sectors: sector k (0..n-1) at set_base + (k / spl) * 128 +
// (k % spl) * 32, so spl = 4 packs four sectors in each 128-byte line and
// spl = 1 puts each in its own line. Lane l of a store instruction writes the
// 4-byte word (l / n) % 4 (+ 4 for the second write when dw = 1) of sector
// l % n. Every store is an inline-PTX st.global.f32 marked volatile, so the
// compiler keeps each one (SASS in env.txt).
//
// m_reuse (w warps per block, b blocks, each warp on its own sets): for each
// of R rounds, write set A, then g fresh sets, then spin d cycles on clock64,
// then write set A again. Unmerged: R * (g + 2) * n sectors per warp; a merge
// of the second write of A with the first saves up to R * n.
// m_share (w warps per block, b blocks, all on the same sets): for each of R
// rounds, every warp writes set r, word (warp index % 8) of each sector. The
// warps run unsynchronised; blocks = w warps on w SMs (b = w, w = 1) tell a
// merge in the SM from one at the L2.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"

static const int R = 256;

__device__ __forceinline__ void st(float *p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

__device__ __forceinline__ float *word(float *set, int n, int spl, int lane, int second) {
    int k = lane % n;
    int w = (lane / n) % 4 + 4 * second;
    return set + (k / spl) * 32 + (k % spl) * 8 + w;
}

__device__ __forceinline__ void spin(long long d) {
    if (d <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < d) {
    }
}

// Floats per set.
__host__ __device__ inline int set_floats(int n, int spl) { return ((n + spl - 1) / spl) * 32; }

__global__ void m_reuse(float *a, int n, int spl, int g, long long d, int dw) {
    int lane = threadIdx.x % 32;
    int warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int sf = set_floats(n, spl);
    float *base = a + (size_t)warp * R * (g + 1) * sf;
    for (int r = 0; r < R; r++) {
        float *A = base + (size_t)r * (g + 1) * sf;
        st(word(A, n, spl, lane, 0), 1.0f);
        for (int j = 1; j <= g; j++) st(word(A + (size_t)j * sf, n, spl, lane, 0), 2.0f);
        spin(d);
        st(word(A, n, spl, lane, dw), 3.0f);
    }
}

__global__ void m_share(float *a, int n, int spl) {
    int lane = threadIdx.x % 32;
    int warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int sf = set_floats(n, spl);
    for (int r = 0; r < R; r++) {
        float *A = a + (size_t)r * sf;
        int k = lane % n;
        st(A + (k / spl) * 32 + (k % spl) * 8 + (warp % 8), 4.0f);
    }
}


// m_pair<N, F> (one block of 1 + bg warps): warp 0, R rounds of: write set A
// (N sectors, four per line), then F fresh sets, then A again (other words),
// with every address computed before the loop so that the stores issue back
// to back. Warps 1..bg meanwhile store whole lines (4 sectors, each written
// once) to their own region, as many stores as warp 0: load on the SM's store
// path that can never merge. Unmerged: R * (F + 2) * N + bg * R * (F + 2) * 4.
template <int N, int F>
__global__ void m_pair(float *a, size_t bg_base) {
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    const int sf = ((N + 3) / 4) * 32;
    if (warp == 0) {
        int k = lane % N;
        float *p = a + (k / 4) * 32 + (k % 4) * 8 + (lane / N) % 4;
        for (int r = 0; r < R; r++) {
            st(p, 1.0f);
#pragma unroll
            for (int j = 1; j <= F; j++) st(p + j * sf, 2.0f);
            st(p + 4, 3.0f);
            p += (F + 1) * sf;
        }
    } else {
        float *q = a + bg_base + (size_t)(warp - 1) * R * (F + 2) * 32 + lane;
        for (int i = 0; i < R * (F + 2); i++) {
            st(q, 5.0f);
            q += 32;
        }
    }
}

struct Case {
    std::string name;
    int n, spl, g;
    long long d;
    int w, b, dw;
};

static std::vector<Case> cases() {
    std::vector<Case> c;
    const int gs[] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 32};
    for (int n : {1, 2, 4, 8, 16, 32})
        for (int spl : {4, 1}) {
            if (n == 1 && spl == 1) continue;
            for (int g : gs) c.push_back({"reuse", n, spl, g, 0, 1, 1, 1});
        }
    for (int n : {4, 16})
        for (int g : {0, 1}) c.push_back({"reuse", n, 4, g, 0, 1, 1, 0});
    for (int n : {1, 4, 16, 32})
        for (long long d : {16, 32, 64, 128, 256, 512, 1024, 2048, 8192})
            c.push_back({"reuse", n, 4, 0, d, 1, 1, 1});
    for (int n : {4, 8, 16})
        for (int g : {0, 1, 2, 4})
            for (int w : {2, 8}) c.push_back({"reuse", n, 4, g, 0, w, 1, 1});
    for (int n : {1, 4, 16, 32}) {
        for (int w : {2, 4, 8}) c.push_back({"share", n, 4, 0, 0, w, 1, 0});
        c.push_back({"share", n, 4, 0, 0, 1, 2, 0});
    }
    // pair: n, g = F, w = 1 + bg warps in one block.
    for (int n : {1, 4, 8})
        for (int g : {0, 1, 2, 3, 4, 6, 8, 12, 16})
            for (int bg : {0, 3, 15, 31}) c.push_back({"pair", n, 4, g, 0, 1 + bg, 1, 1});
    return c;
}

static uint64_t expected(const Case &c) {
    uint64_t warps = (uint64_t)c.w * c.b;
    if (c.name == "reuse") return warps * R * (c.g + 2) * c.n;
    if (c.name == "pair") return (uint64_t)R * (c.g + 2) * (c.n + 4 * (c.w - 1));
    return warps * R * c.n;
}

// Where the background warps of a pair case start (floats), past warp 0's sets.
static size_t pair_bg_base(const Case &c) { return (size_t)R * (c.g + 1) * set_floats(c.n, 4) + 32; }

static size_t floats_needed(const Case &c) {
    size_t sf = set_floats(c.n, c.spl);
    if (c.name == "reuse") return (size_t)c.w * c.b * R * (c.g + 1) * sf;
    if (c.name == "pair") return pair_bg_base(c) + (size_t)(c.w - 1) * R * (c.g + 2) * 32;
    return (size_t)R * sf;
}

static void launch(const Case &c, float *a) {
    if (c.name == "pair") {
        if (false) {
        }
        else if (c.n == 1 && c.g == 0) m_pair<1, 0><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 1) m_pair<1, 1><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 2) m_pair<1, 2><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 3) m_pair<1, 3><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 4) m_pair<1, 4><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 6) m_pair<1, 6><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 8) m_pair<1, 8><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 12) m_pair<1, 12><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 1 && c.g == 16) m_pair<1, 16><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 0) m_pair<4, 0><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 1) m_pair<4, 1><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 2) m_pair<4, 2><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 3) m_pair<4, 3><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 4) m_pair<4, 4><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 6) m_pair<4, 6><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 8) m_pair<4, 8><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 12) m_pair<4, 12><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 4 && c.g == 16) m_pair<4, 16><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 0) m_pair<8, 0><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 1) m_pair<8, 1><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 2) m_pair<8, 2><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 3) m_pair<8, 3><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 4) m_pair<8, 4><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 6) m_pair<8, 6><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 8) m_pair<8, 8><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 12) m_pair<8, 12><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else if (c.n == 8 && c.g == 16) m_pair<8, 16><<<1, 32 * c.w>>>(a, pair_bg_base(c));
        else {
            fprintf(stderr, "no m_pair instance for n=%d g=%d\n", c.n, c.g);
            exit(1);
        }
    } else if (c.name == "reuse")
        m_reuse<<<c.b, 32 * c.w>>>(a, c.n, c.spl, c.g, c.d, c.dw);
    else
        m_share<<<c.b, 32 * c.w>>>(a, c.n, c.spl);
    CK(cudaGetLastError());
}

int main(int argc, char **argv) {
    bool check = argc > 1 && strcmp(argv[1], "check") == 0;
    std::vector<Case> cs = cases();
    size_t maxf = 0;
    for (auto &c : cs) maxf = std::max(maxf, floats_needed(c));
    float *a;
    CK(cudaMalloc(&a, maxf * sizeof(float)));
    std::vector<float> h(check ? maxf : 0);
    int bad_cases = 0;
    for (auto &c : cs) {
        if (check) CK(cudaMemset(a, 0, maxf * sizeof(float)));
        printf("CASE,%s,n=%d;spl=%d;g=%d;d=%lld;w=%d;b=%d;dw=%d,%llu\n", c.name.c_str(), c.n, c.spl, c.g, c.d,
               c.w, c.b, c.dw, (unsigned long long)expected(c));
        fflush(stdout);
        launch(c, a);
        CK(cudaDeviceSynchronize());
        if (check) {
            // Count words written: each set's words must hold a store's value.
            CK(cudaMemcpy(h.data(), a, maxf * sizeof(float), cudaMemcpyDeviceToHost));
            size_t written = 0;
            for (size_t i = 0; i < floats_needed(c); i++) written += h[i] != 0.0f;
            size_t sectors = 0;
            for (size_t s = 0; s < floats_needed(c) / 8; s++) {
                bool any = false;
                for (int k = 0; k < 8; k++) any |= h[s * 8 + k] != 0.0f;
                sectors += any;
            }
            // Distinct sectors touched: reuse writes (g + 1) sets per round, share one.
            uint64_t warps = (uint64_t)c.w * c.b;
            uint64_t distinct = c.name == "reuse"  ? warps * R * (c.g + 1) * c.n
                                : c.name == "pair" ? (uint64_t)R * (c.g + 1) * c.n + (uint64_t)(c.w - 1) * R * (c.g + 2) * 4
                                                   : (uint64_t)R * c.n;
            bool ok = sectors == distinct;
            bad_cases += !ok;
            printf("CHECK,%s,words=%zu,sectors=%zu,expected_sectors=%llu,%s\n", c.name.c_str(), written, sectors,
                   (unsigned long long)distinct, ok ? "ok" : "BAD");
        }
    }
    CK(cudaFree(a));
    if (check) printf("check: %d bad cases of %zu\n", bad_cases, cs.size());
    return bad_cases != 0;
}
