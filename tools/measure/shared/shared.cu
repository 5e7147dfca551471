// Shared memory and irregular access on the H200: matrix transposes (global
// only, through a shared tile, through a padded tile), a gather through a
// windowed random permutation, and shared-memory bank conflicts by access
// width and stride; plus microbenchmarks (shared and L1 load latency,
// __syncthreads cost, the SM clock). Same conventions as ../corpus/corpus.cu.
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o shared shared.cu
// Run:    ./shared list             the cases, one per line
//         ./shared time FILE.csv    check, then time every case with CUDA
//                                   events (warm, back to back); one CSV row
//                                   per case into FILE.csv
//         ./shared ncu [FROM TO [REPS]]
//                                   every case (or cases FROM..TO-1)
//                                   launched once (REPS times; kernels named
//                                   k_*); meant to run under Nsight Compute.
//                                   Prints "CASE,<index>,<family>,<params>,<rep>"
//                                   before each launch.
//         ./shared micro FILE.txt   the microbenchmarks (kernels named m_*)
//         ./shared idx N W [K]      host only: the first K (default 8) values
//                                   of the gather's index array and whether
//                                   it is a permutation
//
// Buffers (cudaMalloc): the transposes' input and output, 8192 x 8192 floats
// each (every size uses their start), input in[i] = (float)(i % 1000003);
// the gather's input in[i] = (float)i and output, 2^24 floats each, and its
// index array (made for the case, freed after it); the shared_bank output,
// 132 x 256 floats.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../ck.cuh"

// ---- transposes, after Mark Harris, "An Efficient Matrix Transpose in CUDA
// C/C++" (TILE = 32, ROWS = 8): block dim3(32, 8), grid dim3(n/32, n/32);
// each thread moves 4 elements of a 32 x 32 tile.
__global__ void k_copy(float *o, const float *in, int n) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) o[(y + j) * n + x] = in[(y + j) * n + x];
}
__global__ void k_transpose_naive(float *o, const float *in, int n) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) o[x * n + (y + j)] = in[(y + j) * n + x];
}
__global__ void k_transpose_tiled(float *o, const float *in, int n) {
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) o[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
__global__ void k_transpose_tiled_padded(float *o, const float *in, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) o[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// ---- gather through a permutation confined to windows of w elements
// Block 256, grid n/256.
__global__ void k_gather(float *out, const float *in, const int *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[idx[i]];
}

// The index array (the simulator computes the same values, bit for bit).
static uint64_t mix64(uint64_t z) {
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z;
}
// A bijection of [0, m): a 4-round balanced Feistel network on 2h bits with
// cycle walking.
static uint64_t permute(uint64_t x, uint64_t m, uint64_t key) {
    if (m <= 1) return 0;
    int b = 64 - __builtin_clzll(m - 1);  // bits holding m - 1
    int h = (b + 1) / 2;
    uint64_t mask = (1ULL << h) - 1;
    do {
        uint64_t l = x >> h, r = x & mask;
        for (int k = 0; k < 4; k++) {
            uint64_t f = mix64(r ^ (key + (uint64_t)k * 0x9e3779b97f4a7c15ULL)) & mask;
            uint64_t nl = r;
            r = l ^ f;
            l = nl;
        }
        x = (l << h) | r;
    } while (x >= m);
    return x;
}
// Element i of a window permutation of n elements in windows of w, seed s.
static uint64_t window_perm(uint64_t i, uint64_t n, uint64_t w, uint64_t s) {
    uint64_t k = i / w, start = k * w, m = (n - start < w) ? n - start : w;
    uint64_t key = mix64(s * 0x9e3779b97f4a7c15ULL + k);
    return start + permute(i - start, m, key);
}
static const uint64_t SEED = 1;

// idx[i] = window_perm(i, n, w, SEED), on all host threads.
static std::vector<int> make_idx(uint64_t n, uint64_t w) {
    std::vector<int> h(n);
    unsigned T = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (unsigned t = 0; t < T; t++)
        th.emplace_back([&h, n, w, t, T] {
            for (uint64_t i = n * t / T; i < n * (t + 1) / T; i++) h[i] = (int)window_perm(i, n, w, SEED);
        });
    for (auto &x : th) x.join();
    return h;
}
// Values of [0, n) not hit exactly once (0: a permutation).
static uint64_t perm_defects(const std::vector<int> &h) {
    uint64_t n = h.size(), bad = 0;
    std::vector<uint8_t> seen(n, 0);
    for (uint64_t i = 0; i < n; i++) {
        int v = h[i];
        if (v < 0 || (uint64_t)v >= n) {
            bad++;
            continue;
        }
        if (seen[v]) bad++;
        seen[v] = 1;
    }
    for (uint64_t i = 0; i < n; i++) bad += !seen[i];
    return bad;
}

// ---- shared-memory banks: a __shared__ array of 1024 elements of W bytes
// (float, float2, float4); lane l of every warp stores 8 times to element
// p = (l * stride) % 1024, then after __syncthreads() loads it 8 times, each
// access one st.shared / ld.shared of width W (inline PTX, so none is merged
// or removed), and stores the sum of the loaded x components to out.
// Per warp: 8 STS, 1 BAR, 8 LDS, 1 STG. Grid 132 blocks of 256 threads.
// Store j writes (p + j, p + j + 0.25, ...) so the last one leaves x = p + 7
// in every element touched, whichever warp wrote last; out = 8 * (p + 7).
template <int W>
__device__ __forceinline__ void sts(uint32_t a, float x) {
    if (W == 4) {
        asm volatile("st.volatile.shared.f32 [%0], %1;" ::"r"(a), "f"(x) : "memory");
    } else if (W == 8) {
        asm volatile("st.volatile.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(x), "f"(x + 0.25f) : "memory");
    } else {
        asm volatile("st.volatile.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(a), "f"(x), "f"(x + 0.25f),
                     "f"(x + 0.5f), "f"(x + 0.75f)
                     : "memory");
    }
}
template <int W>
__device__ __forceinline__ float lds_x(uint32_t a) {
    float x, y, z, w;
    if (W == 4) {
        asm volatile("ld.volatile.shared.f32 %0, [%1];" : "=f"(x) : "r"(a) : "memory");
    } else if (W == 8) {
        asm volatile("ld.volatile.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(a) : "memory");
    } else {
        asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "r"(a) : "memory");
    }
    return x;
}
template <int W>
__global__ void k_shared_bank(float *out, uint32_t stride) {
    __shared__ __align__(16) float s[1024 * W / 4];
    uint32_t lane = threadIdx.x & 31;
    uint32_t p = (lane * stride) % 1024;
    uint32_t a = (uint32_t)__cvta_generic_to_shared(s) + p * W;
#pragma unroll
    for (int j = 0; j < 8; j++) sts<W>(a, (float)(p + j));
    __syncthreads();
    float acc = 0.f;
#pragma unroll
    for (int j = 0; j < 8; j++) acc += lds_x<W>(a);
    out[blockIdx.x * 256 + threadIdx.x] = acc;
}

// ---- microbenchmarks (not cases; named m_* so that ncu's ^k_ skips them)
static const int CHASE_STEPS = 4096, RUNS = 5;

// One thread. A __shared__ uint32 array of 1024; the chain visits
// 0, 33, 66, ... (33 is odd, so all 1024 elements, then again).
// mode 0, address chase: s[i] holds the shared address of s[(i + 33) % 1024]
//         and each step is p = ld.shared.u32 [p] (no arithmetic between loads);
// mode 1, index chase: s[i] = (i + 33) % 1024 and each step is
//         p = ld.shared.u32 [base + 4 * p] (the C expression p = s[p]).
// One untimed lap of CHASE_STEPS, then RUNS timed laps: cycles[r] (clock64).
__global__ void m_shared_chase(long long *cycles, uint32_t *sink, int mode) {
    __shared__ uint32_t s[1024];
    uint32_t base = (uint32_t)__cvta_generic_to_shared(s);
    for (int i = 0; i < 1024; i++) s[i] = mode == 0 ? base + ((i + 33) % 1024) * 4 : (i + 33) % 1024;
    __syncthreads();
    uint32_t p = mode == 0 ? base : 0;
    for (int r = -1; r < RUNS; r++) {
        long long t0 = clock64();
        if (mode == 0) {
#pragma unroll 16
            for (int i = 0; i < CHASE_STEPS; i++) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
        } else {
#pragma unroll 16
            for (int i = 0; i < CHASE_STEPS; i++)
                asm volatile("ld.shared.u32 %0, [%1];" : "=r"(p) : "r"(base + p * 4) : "memory");
        }
        long long t1 = clock64();
        if (r >= 0) cycles[r] = t1 - t0;
        else cycles[RUNS] = t1 - t0;  // the untimed first lap, for reference
    }
    sink[0] = p;
}
// One thread. Global (cudaMalloc) arrays read with ld.global.ca (L1-cached):
// mode 0: 1024 uint32, g32[i] = (i + 33) % 1024 (4 KiB), p = g32[p]
//         (the address g32 + 4p computed between loads);
// mode 1: 1024 uint64, g64[i] = address of g64[(i + 33) % 1024] (8 KiB),
//         p = ld.global.ca.u64 [p] (no arithmetic between loads).
// The untimed first lap brings the lines into L1; then RUNS timed laps.
__global__ void m_global_chase(long long *cycles, uint64_t *sink, const uint32_t *g32, const uint64_t *g64,
                               int mode) {
    uint32_t p = 0;
    uint64_t q = (uint64_t)g64;
    for (int r = -1; r < RUNS; r++) {
        long long t0 = clock64();
        if (mode == 0) {
#pragma unroll 16
            for (int i = 0; i < CHASE_STEPS; i++)
                asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(p) : "l"(g32 + p) : "memory");
        } else {
#pragma unroll 16
            for (int i = 0; i < CHASE_STEPS; i++) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(q)::"memory");
        }
        long long t1 = clock64();
        if (r >= 0) cycles[r] = t1 - t0;
        else cycles[RUNS] = t1 - t0;
    }
    sink[0] = p + q;
}
// One block; thread 0 times BARRIERS __syncthreads() (clock64), RUNS times.
static const int BARRIERS = 1024;
__global__ void m_barrier(long long *cycles) {
    for (int r = 0; r < RUNS; r++) {
        __syncthreads();
        long long t0 = clock64();
#pragma unroll 64
        for (int i = 0; i < BARRIERS; i++) __syncthreads();
        long long t1 = clock64();
        if (threadIdx.x == 0) cycles[r] = t1 - t0;
    }
}
// One thread spins for `spin` SM cycles; clock64 and %globaltimer deltas.
__global__ void m_clock(long long *o, long long spin) {
    uint64_t g0, g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    long long c0 = clock64(), c1;
    do {
        c1 = clock64();
    } while (c1 - c0 < spin);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    o[0] = c1 - c0;
    o[1] = (long long)(g1 - g0);
}

// ---- the cases
struct Case {
    std::string family, params;
    uint64_t bytes_moved;  // useful bytes (reads + writes)
    std::function<void()> prepare;   // untimed set-up before the first launch (may be empty)
    std::function<void(cudaStream_t)> launch;
    std::function<uint64_t()> check;  // after prepare: poison, launch once, count wrong elements
    std::function<void()> release;    // after the case (may be empty)
};

static const int TMAX = 8192;
static const uint64_t GMAX = 1ull << 24;
static const int SB_BLOCKS = 132, SB_THREADS = 256;
static float *T_IN, *T_OUT, *G_IN, *G_OUT, *SB_OUT;
static int *G_IDX;
static std::vector<float> H_TIN;  // the transposes' input, host copy
static std::vector<int> H_IDX;    // the current gather case's index array
static uint64_t G_PERM_BAD;       // its permutation defects

static float tin_value(uint64_t i) { return (float)(i % 1000003); }

static uint64_t check_transpose(int n, int kind, const std::function<void(cudaStream_t)> &launch) {
    uint64_t nn = (uint64_t)n * n;
    CK(cudaMemset(T_OUT, 0xff, nn * 4));
    launch(0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> h(nn);
    CK(cudaMemcpy(h.data(), T_OUT, nn * 4, cudaMemcpyDeviceToHost));
    uint64_t bad = 0;
    if (kind == 0) {
        for (uint64_t i = 0; i < nn; i++) bad += h[i] != H_TIN[i];
    } else {
        // out[r][c] == in[c][r], in 64 x 64 blocks for the host caches
        for (int rb = 0; rb < n; rb += 64)
            for (int cb = 0; cb < n; cb += 64)
                for (int r = rb; r < rb + 64; r++)
                    for (int c = cb; c < cb + 64; c++)
                        bad += h[(uint64_t)r * n + c] != H_TIN[(uint64_t)c * n + r];
    }
    return bad;
}

static uint32_t g_blocks(uint64_t threads, uint32_t bs) { return (uint32_t)((threads + bs - 1) / bs); }

static std::vector<Case> cases() {
    std::vector<Case> c;
    struct T {
        const char *fam;
        void (*k)(float *, const float *, int);
        int kind;
    };
    const T ts[] = {{"copy", k_copy, 0},
                    {"transpose_naive", k_transpose_naive, 1},
                    {"transpose_tiled", k_transpose_tiled, 1},
                    {"transpose_tiled_padded", k_transpose_tiled_padded, 1}};
    for (const T &t : ts) {
        for (int n : {1024, 2048, 4096, 8192}) {
            char p[64];
            snprintf(p, sizeof p, "n=%d", n);
            auto k = t.k;
            std::function<void(cudaStream_t)> launch = [k, n](cudaStream_t s) {
                k<<<dim3(n / 32, n / 32), dim3(32, 8), 0, s>>>(T_OUT, T_IN, n);
            };
            int kind = t.kind;
            c.push_back({t.fam, p, 8ull * n * n, nullptr, launch,
                         [n, kind, launch] { return check_transpose(n, kind, launch); }, nullptr});
        }
    }
    for (uint64_t n : std::vector<uint64_t>{4194304, 16777216}) {
        for (uint64_t w : std::vector<uint64_t>{1, 32, 1024, 32768, 1048576, n}) {
            char p[64];
            snprintf(p, sizeof p, "n=%llu;w=%llu", (unsigned long long)n, (unsigned long long)w);
            auto prepare = [n, w] {
                H_IDX = make_idx(n, w);
                G_PERM_BAD = perm_defects(H_IDX);
                CK(cudaMalloc(&G_IDX, n * 4));
                CK(cudaMemcpy(G_IDX, H_IDX.data(), n * 4, cudaMemcpyHostToDevice));
            };
            std::function<void(cudaStream_t)> launch = [n](cudaStream_t s) {
                k_gather<<<g_blocks(n, 256), 256, 0, s>>>(G_OUT, G_IN, G_IDX, (int)n);
            };
            auto check = [n, launch] {
                CK(cudaMemset(G_OUT, 0xff, n * 4));
                launch(0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                std::vector<float> h(n);
                CK(cudaMemcpy(h.data(), G_OUT, n * 4, cudaMemcpyDeviceToHost));
                uint64_t bad = 0;
                for (uint64_t i = 0; i < n; i++) bad += h[i] != (float)H_IDX[i];
                return bad + G_PERM_BAD;
            };
            auto release = [] {
                CK(cudaFree(G_IDX));
                G_IDX = nullptr;
                H_IDX.clear();
                H_IDX.shrink_to_fit();
            };
            c.push_back({"gather", p, 12 * n, prepare, launch, check, release});
        }
    }
    for (int w : {4, 8, 16}) {
        for (uint32_t st : {0u, 1u, 2u, 3u, 4u, 8u, 16u, 17u, 32u}) {
            char p[64];
            snprintf(p, sizeof p, "width=%d;stride=%u", w, st);
            std::function<void(cudaStream_t)> launch;
            switch (w) {
                case 4: launch = [st](cudaStream_t s) { k_shared_bank<4><<<SB_BLOCKS, SB_THREADS, 0, s>>>(SB_OUT, st); }; break;
                case 8: launch = [st](cudaStream_t s) { k_shared_bank<8><<<SB_BLOCKS, SB_THREADS, 0, s>>>(SB_OUT, st); }; break;
                default: launch = [st](cudaStream_t s) { k_shared_bank<16><<<SB_BLOCKS, SB_THREADS, 0, s>>>(SB_OUT, st); }; break;
            }
            auto check = [st, launch] {
                uint64_t n = (uint64_t)SB_BLOCKS * SB_THREADS;
                CK(cudaMemset(SB_OUT, 0xff, n * 4));
                launch(0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                std::vector<float> h(n);
                CK(cudaMemcpy(h.data(), SB_OUT, n * 4, cudaMemcpyDeviceToHost));
                uint64_t bad = 0;
                for (uint64_t i = 0; i < n; i++) {
                    uint32_t p = ((uint32_t)(i & 31) * st) % 1024;
                    bad += h[i] != 8.0f * (float)(p + 7);
                }
                return bad;
            };
            c.push_back({"shared_bank", p, (uint64_t)SB_BLOCKS * SB_THREADS * 4, nullptr, launch, check, nullptr});
        }
    }
    return c;
}

static void alloc_buffers() {
    uint64_t tn = (uint64_t)TMAX * TMAX;
    CK(cudaMalloc(&T_IN, tn * 4));
    CK(cudaMalloc(&T_OUT, tn * 4));
    CK(cudaMalloc(&G_IN, GMAX * 4));
    CK(cudaMalloc(&G_OUT, GMAX * 4));
    CK(cudaMalloc(&SB_OUT, (uint64_t)SB_BLOCKS * SB_THREADS * 4));
    H_TIN.resize(tn);
    for (uint64_t i = 0; i < tn; i++) H_TIN[i] = tin_value(i);
    CK(cudaMemcpy(T_IN, H_TIN.data(), tn * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(T_OUT, 0, tn * 4));
    std::vector<float> g(GMAX);
    for (uint64_t i = 0; i < GMAX; i++) g[i] = (float)i;
    CK(cudaMemcpy(G_IN, g.data(), GMAX * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(G_OUT, 0, GMAX * 4));
    CK(cudaMemset(SB_OUT, 0, (uint64_t)SB_BLOCKS * SB_THREADS * 4));
    CK(cudaDeviceSynchronize());
}

// A launch's error that leaves the context usable (a bad configuration) is
// reported and the case skipped; a sticky one ends the program at the next CK.
static bool launch_ok(const Case &cs) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return true;
    fprintf(stderr, "case %s %s: launch failed: %s\n", cs.family.c_str(), cs.params.c_str(), cudaGetErrorString(e));
    return false;
}

static void print_idx(FILE *f, uint64_t n, uint64_t w, int k) {
    fprintf(f, "idx n=%llu w=%llu seed=%llu first %d:", (unsigned long long)n, (unsigned long long)w,
            (unsigned long long)SEED, k);
    for (int i = 0; i < k && (uint64_t)i < n; i++) fprintf(f, " %llu", (unsigned long long)window_perm(i, n, w, SEED));
    fprintf(f, "\n");
}

static int micro(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    long long *dc;
    uint64_t *dsink;
    uint32_t *g32;
    uint64_t *g64;
    CK(cudaMalloc(&dc, 64 * 8));
    CK(cudaMalloc(&dsink, 64));
    CK(cudaMalloc(&g32, 1024 * 4));
    CK(cudaMalloc(&g64, 1024 * 8));
    std::vector<uint32_t> h32(1024);
    std::vector<uint64_t> h64(1024);
    for (int i = 0; i < 1024; i++) {
        h32[i] = (i + 33) % 1024;
        h64[i] = (uint64_t)(g64 + (i + 33) % 1024);
    }
    CK(cudaMemcpy(g32, h32.data(), 1024 * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g64, h64.data(), 1024 * 8, cudaMemcpyHostToDevice));
    long long h[64];
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    // The SM clock: clock64 cycles over %globaltimer ns while one thread
    // spins; twice, the first also raises the clock from idle.
    for (int rep = 0; rep < 3; rep++) {
        CK(cudaEventRecord(e0));
        m_clock<<<1, 1>>>(dc, 40000000LL);
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        CK(cudaMemcpy(h, dc, 16, cudaMemcpyDeviceToHost));
        fprintf(f, "clock rep=%d: clock64 %lld cycles in %lld ns of %%globaltimer (event %.4f ms) -> %.1f MHz\n", rep,
                h[0], h[1], ms, h[1] > 0 ? h[0] * 1e3 / h[1] : 0.0);
    }
    auto report = [&](const char *name, const char *what, int steps, bool has_first) {
        CK(cudaMemcpy(h, dc, (RUNS + 1) * 8, cudaMemcpyDeviceToHost));
        long long mn = h[0];
        fprintf(f, "%s: %s; %d steps per lap; cycles of the %d timed laps:", name, what, steps, RUNS);
        for (int r = 0; r < RUNS; r++) {
            fprintf(f, " %lld", h[r]);
            mn = std::min(mn, h[r]);
        }
        if (has_first) fprintf(f, "; first (untimed) lap %lld", h[RUNS]);
        fprintf(f, "\n%s cycles_per_step_min %.3f\n", name, (double)mn / steps);
    };
    for (int mode = 0; mode < 2; mode++) {
        m_shared_chase<<<1, 1>>>(dc, (uint32_t *)dsink, mode);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        report(mode == 0 ? "shared_chase_address" : "shared_chase_index",
               mode == 0 ? "one thread, p = ld.shared.u32 [p], s[i] = address of s[(i+33)%1024]"
                         : "one thread, p = ld.shared.u32 [base + 4p], s[i] = (i+33)%1024",
               CHASE_STEPS, true);
    }
    for (int mode = 0; mode < 2; mode++) {
        m_global_chase<<<1, 1>>>(dc, dsink, g32, g64, mode);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        report(mode == 0 ? "global_chase_index_ca" : "global_chase_address_ca",
               mode == 0 ? "one thread, p = ld.global.ca.u32 [g32 + 4p], 1024 x 4 B (4 KiB), g32[i] = (i+33)%1024"
                         : "one thread, q = ld.global.ca.u64 [q], 1024 x 8 B (8 KiB), g64[i] = address of g64[(i+33)%1024]",
               CHASE_STEPS, true);
    }
    for (int threads : {32, 256, 1024}) {
        m_barrier<<<1, threads>>>(dc);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        char name[64];
        snprintf(name, sizeof name, "barrier_threads_%d", threads);
        CK(cudaMemcpy(h, dc, RUNS * 8, cudaMemcpyDeviceToHost));
        long long mn = h[0];
        fprintf(f, "%s: one block of %d threads, thread 0 times %d __syncthreads(); cycles of the %d runs:", name, threads,
                BARRIERS, RUNS);
        for (int r = 0; r < RUNS; r++) {
            fprintf(f, " %lld", h[r]);
            mn = std::min(mn, h[r]);
        }
        fprintf(f, "\n%s cycles_per_barrier_min %.3f\n", name, (double)mn / BARRIERS);
    }
    {
        CK(cudaEventRecord(e0));
        m_clock<<<1, 1>>>(dc, 40000000LL);
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        CK(cudaMemcpy(h, dc, 16, cudaMemcpyDeviceToHost));
        fprintf(f, "clock after: clock64 %lld cycles in %lld ns of %%globaltimer (event %.4f ms) -> %.1f MHz\n", h[0],
                h[1], ms, h[1] > 0 ? h[0] * 1e3 / h[1] : 0.0);
    }
    print_idx(f, 4194304, 1024, 8);
    print_idx(f, 4194304, 4194304, 8);
    for (uint64_t w : std::vector<uint64_t>{1024, 4194304}) {
        std::vector<int> v = make_idx(4194304, w);
        fprintf(f, "idx n=4194304 w=%llu permutation defects: %llu\n", (unsigned long long)w,
                (unsigned long long)perm_defects(v));
    }
    fclose(f);
    FILE *r = fopen(path, "r");
    char line[512];
    while (r && fgets(line, sizeof line, r)) fputs(line, stdout);
    if (r) fclose(r);
    return 0;
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    std::vector<Case> all = cases();
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++) printf("%zu,%s,%s\n", i, all[i].family.c_str(), all[i].params.c_str());
        return 0;
    }
    if (mode == "idx") {
        if (argc < 4) {
            fprintf(stderr, "usage: shared idx N W [K]\n");
            return 2;
        }
        uint64_t n = strtoull(argv[2], nullptr, 10), w = strtoull(argv[3], nullptr, 10);
        int k = argc > 4 ? atoi(argv[4]) : 8;
        print_idx(stdout, n, w, k);
        printf("permutation defects: %llu\n", (unsigned long long)perm_defects(make_idx(n, w)));
        return 0;
    }
    int dev = 0;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    printf("# device: %s, compute capability %d.%d, runtime %d, driver %d, %d SMs, L2 %d bytes, ECC %d, %zu bytes smem/SM\n",
           prop.name, prop.major, prop.minor, rt, drv, prop.multiProcessorCount, prop.l2CacheSize, prop.ECCEnabled,
           prop.sharedMemPerMultiprocessor);
    if (mode == "micro") {
        if (argc < 3) {
            fprintf(stderr, "usage: shared micro FILE.txt\n");
            return 2;
        }
        return micro(argv[2]);
    }
    alloc_buffers();
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < std::min(to, all.size()); i++) {
            const Case &cs = all[i];
            if (cs.prepare) cs.prepare();
            for (int r = 0; r < reps; r++) {
                printf("CASE,%zu,%s,%s,%d\n", i, cs.family.c_str(), cs.params.c_str(), r);
                fflush(stdout);
                cs.launch(0);
                if (!launch_ok(cs)) break;
                CK(cudaDeviceSynchronize());
            }
            if (cs.release) cs.release();
        }
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: shared list | time FILE.csv | ncu [FROM TO [REPS]] | micro FILE.txt | idx N W [K]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "family,params,bytes_moved,ms_per_launch,batch_ms_min,batch_ms_max,launches_per_batch,check_bad_words\n");
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    uint64_t total_bad = 0;
    for (size_t i = 0; i < all.size(); i++) {
        const Case &cs = all[i];
        if (cs.prepare) cs.prepare();
        uint64_t bad = cs.check();
        total_bad += bad;
        // Warm-up, then estimate one launch, then 5 batches of R launches
        // with R chosen so that a batch lasts about 2 ms (at least 5).
        for (int w = 0; w < 2; w++) cs.launch(0);
        if (!launch_ok(cs)) {
            if (cs.release) cs.release();
            continue;
        }
        CK(cudaEventRecord(e0));
        cs.launch(0);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float one = 0;
        CK(cudaEventElapsedTime(&one, e0, e1));
        int R = std::max(5, std::min(200, (int)(2.0 / std::max(one, 1e-3f))));
        std::vector<float> per;
        for (int b = 0; b < 5; b++) {
            CK(cudaEventRecord(e0));
            for (int r = 0; r < R; r++) cs.launch(0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            per.push_back(ms / R);
        }
        std::sort(per.begin(), per.end());
        fprintf(f, "%s,%s,%llu,%.6f,%.6f,%.6f,%d,%llu\n", cs.family.c_str(), cs.params.c_str(),
                (unsigned long long)cs.bytes_moved, per[2], per[0], per[4], R, (unsigned long long)bad);
        fflush(f);
        printf("%-24s %-24s %10.4f ms  %8.1f GB/s  bad %llu%s\n", cs.family.c_str(), cs.params.c_str(), per[2],
               cs.bytes_moved / (per[2] * 1e6), (unsigned long long)bad,
               cs.family == "gather" ? (G_PERM_BAD ? "  (index NOT a permutation)" : "  (index is a permutation)") : "");
        if (cs.release) cs.release();
    }
    fclose(f);
    printf("# all cases: %llu bad elements\n", (unsigned long long)total_bad);
    return 0;
}
