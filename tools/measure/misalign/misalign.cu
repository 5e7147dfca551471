// What a misaligned warp costs a DRAM-bound kernel on the H200, and where:
// in its loads, in its stores, or in a line that two warps' stores share.
//
// Seed 002's offset kernel (a[t + k] = a[t + k] + 1, 256 MiB, 256 threads
// a block) takes 9% longer on the H200 at every offset that leaves a
// warp's accesses across a line boundary (double: 137 us aligned, 149 us at
// offsets 1-15 and 17-31 but 141 us at 16, where each warp's 256 bytes are
// two whole lines; float: 194 us, 207-212 us), where gpusim's time moves by
// 1% (DEVIATIONS.md 1). These kernels split the seed's kernel into its
// parts, one element per thread, k elements from the start of the buffer:
//
//   rw  a[t + k] = a[t + k] + 1   the seed's kernel
//   ro  v = a[t + k]              its load alone (a store that never
//                                  happens keeps it: the buffer holds zeros)
//   wo  a[t + k] = 1              its store alone
//   cp  b[t + k] = a[t + k]       load and store misaligned, other buffers
//   lm  b[t] = a[t + k]           the load misaligned, the store aligned
//   sm  b[t + k] = a[t]           the load aligned, the store misaligned
//   rw2 rw for two elements a thread, t + k and t + k + n/2 (both loads
//       issued before either store; half the threads): twice the loads
//       in flight a warp, whether the cost is one of latency
//
// for float and double elements and k = 0, 1, 4, 8, 16, 32 elements.
//
// A second set (`second` as the third argument) asks where the cost of rw
// lies, for float k = 0, 8, 16 and double k = 0, 4, 8:
//
//   rw     as above (k_rwv<T, false, false>)
//   rwx    rw with each block's warps spread over the buffer: warp j of
//          block b takes the (j * grid + b)-th run of 32 elements, so the
//          warps whose runs share a line are in neighbouring blocks
//          (other SMs) instead of one block (one SM)
//   rwcg   rw with its load past the L1 (__ldcg: cached in the L2 only)
//   rwxcg  both
//
// A third set (`third`) asks which sharing costs, for float k = 0, 16 and
// double k = 0, 8, each on one SM (as rw) and spread over two (x):
//
//   rox, wox, cpx   ro, wo, cp with the warps spread as rwx
//   rs, rsx         a[t] = a[t + k] + 1: each line read by two warps,
//                   written whole by one
//   ws, wsx         a[t + k] = a[t] + 1: each line read whole by one warp,
//                   written by two
//
// A fourth set (`fourth`) asks when a store onto sectors another warp loads
// is held: ws with the store moved by S whole warps' runs,
//
//   ws@S     a[t + 32 S + k] = a[t] + 1 (S = -32768, -8, -1, 0, 1, 8, 32768):
//            the store lands on the sectors that the warp S runs later
//            loads (S > 0: a load on its way or, at 32768, still to come
//            a wave later; S < 0: one done, at -32768 a wave before), on
//            the same SM for |S| < 8, on another from 8
//   wss@S    ws@S (S = 0, 1) with __syncthreads() between the block's loads
//            and its stores: within a block every load is done before any
//            store
//   ws16@S   ws@S (S = 0, 1) over 16 MiB, which the L2 keeps between
//            launches: no DRAM fill for a store to meet
//
// and a fifth (`fifth`), whether the load must be done:
//
//   wsv@S    wss@S (S = -1, 0, 1) with the loaded value tested before the
//            barrier, so that every load of the block has returned its
//            data before any of its stores leaves (the barrier alone need
//            not wait for a load in flight)
//
// for float k = 0, 16 and double k = 0, 8 (k = 0: whole lines).
//
// Build:  nvcc -O3 -arch=sm_90 -Xptxas -v -o misalign misalign.cu
// Run:    ./misalign list [second|third|fourth|fifth]  the cases, one per line
//         ./misalign ncu [REPS] [second|third|fourth|fifth]    every case launched REPS (1) times after
//                                  its buffers are set to zero; kernels are
//                                  named k_*; meant to run under Nsight
//                                  Compute. Prints
//                                  "CASE,<index>,<mode>,<elem>,<k>,<grid>,<block>,<rep>"
//                                  before each launch.
//         ./misalign time [REPS] [second|third|fourth|fifth]   every case: REPS (5) batches of 10
//                                  back-to-back launches timed with CUDA
//                                  events (after one untimed launch); prints
//                                  "TIME,<index>,<mode>,<elem>,<k>,<batch>,<ms per launch>"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t BYTES = 256 * MiB;
// Room past the end for the largest offset (32 doubles) and the sink.
static const uint64_t PAD = 4096;
// The fourth set's buffer starts this far into the allocation, so that a
// store 32768 runs of 32 doubles (8 MiB, more than a wave of blocks)
// before or after stays inside it.
static const uint64_t SHIFT_ROOM = 16 * MiB;

template <typename T> __global__ void k_rw(T *a, T *b, unsigned k) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    a[t + k] = a[t + k] + (T)1;
}

template <typename T> __global__ void k_ro(T *a, T *b, unsigned k) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    T v = a[t + k];
    if (v == (T)12345) b[0] = v;
}

template <typename T> __global__ void k_wo(T *a, T *b, unsigned k) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    a[t + k] = (T)1;
}

template <typename T> __global__ void k_cp(T *a, T *b, unsigned k) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    b[t + k] = a[t + k];
}

template <typename T> __global__ void k_lm(T *a, T *b, unsigned k) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    b[t] = a[t + k];
}

template <typename T> __global__ void k_sm(T *a, T *b, unsigned k) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    b[t + k] = a[t];
}

template <typename T> __global__ void k_rw2(T *a, T *b, unsigned k, unsigned half) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    T u = a[t + k], v = a[t + k + half];
    a[t + k] = u + (T)1;
    a[t + k + half] = v + (T)1;
}

template <typename T, bool CG, bool X> __global__ void k_rwv(T *a, unsigned k) {
    unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5, per_block = blockDim.x >> 5;
    unsigned run = X ? w * gridDim.x + blockIdx.x : blockIdx.x * per_block + w;
    unsigned i = run * 32 + lane + k;
    T v = CG ? __ldcg(&a[i]) : a[i];
    a[i] = v + (T)1;
}

// The third set: MODE 0 ro, 1 wo, 2 cp, 3 rs, 4 ws; X spreads the warps.
template <typename T, int MODE, bool X> __global__ void k_var(T *a, T *b, unsigned k) {
    unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5, per_block = blockDim.x >> 5;
    unsigned run = X ? w * gridDim.x + blockIdx.x : blockIdx.x * per_block + w;
    unsigned t = run * 32 + lane;
    if (MODE == 0) {
        T v = a[t + k];
        if (v == (T)12345) b[0] = v;
    } else if (MODE == 1) {
        a[t + k] = (T)1;
    } else if (MODE == 2) {
        b[t + k] = a[t + k];
    } else if (MODE == 3) {
        a[t] = a[t + k] + (T)1;
    } else {
        a[t + k] = a[t] + (T)1;
    }
}

// The fourth set: a[t + shift] = a[t] + 1, with the block's loads done
// before its stores when SYNC.
template <typename T, bool SYNC> __global__ void k_sh(T *a, int shift) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    T v = a[t] + (T)1;
    if (SYNC) __syncthreads();
    a[(long long)t + shift] = v;
}

// The fifth set: as k_sh<T, true>, the loaded value used before the barrier
// (a branch never taken: the buffer holds small whole numbers).
template <typename T> __global__ void k_shv(T *a, int shift) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    T v = a[t] + (T)1;
    if (v == (T)-12345) a[-1] = v;
    __syncthreads();
    a[(long long)t + shift] = v;
}

template <typename T, int MODE> static void launch_var(bool x, unsigned grid, T *a, T *b, unsigned k) {
    if (x) k_var<T, MODE, true><<<grid, 256>>>(a, b, k);
    else k_var<T, MODE, false><<<grid, 256>>>(a, b, k);
}

struct Case {
    std::string mode;
    unsigned elem, k;
    int shift_runs = 0; // fourth set: S
    unsigned mib = 256; // footprint
};

static std::vector<Case> cases(bool second, bool third, bool fourth, bool fifth) {
    std::vector<Case> v;
    if (fifth) {
        const unsigned ek[4][2] = {{4, 0}, {4, 16}, {8, 0}, {8, 8}};
        for (auto &e : ek)
            for (int s : {-1, 0, 1}) v.push_back({"wsv@" + std::to_string(s), e[0], e[1], s, 256});
        return v;
    }
    if (fourth) {
        const unsigned ek[4][2] = {{4, 0}, {4, 16}, {8, 0}, {8, 8}};
        for (auto &e : ek) {
            for (int s : {-32768, -8, -1, 0, 1, 8, 32768}) v.push_back({"ws@" + std::to_string(s), e[0], e[1], s, 256});
            for (int s : {0, 1}) v.push_back({"wss@" + std::to_string(s), e[0], e[1], s, 256});
            for (int s : {0, 1}) v.push_back({"ws16@" + std::to_string(s), e[0], e[1], s, 16});
        }
        return v;
    }
    if (third) {
        for (const char *mode : {"rwx", "rox", "wox", "cpx", "rs", "rsx", "ws", "wsx"}) {
            for (unsigned k : {0u, 16u}) v.push_back({mode, 4, k});
            for (unsigned k : {0u, 8u}) v.push_back({mode, 8, k});
        }
        return v;
    }
    if (second) {
        for (const char *mode : {"rw", "rwx", "rwcg", "rwxcg"}) {
            for (unsigned k : {0u, 8u, 16u}) v.push_back({mode, 4, k});
            for (unsigned k : {0u, 4u, 8u}) v.push_back({mode, 8, k});
        }
        return v;
    }
    for (const char *mode : {"rw", "ro", "wo", "cp", "lm", "sm", "rw2"})
        for (unsigned elem : {4u, 8u})
            for (unsigned k : {0u, 1u, 4u, 8u, 16u, 32u}) v.push_back({mode, elem, k});
    return v;
}

static unsigned grid_of(const Case &c) {
    return (unsigned)((uint64_t)c.mib * MiB / c.elem / 256 / (c.mode == "rw2" ? 2 : 1));
}

template <typename T> static void launch_t(const Case &c, char *a, char *b, bool second) {
    unsigned grid = grid_of(c), block = 256;
    T *x = (T *)a, *y = (T *)b;
    const std::string &m = c.mode;
    if (m.rfind("ws", 0) == 0 && m.find('@') != std::string::npos) {
        T *base = (T *)(a + SHIFT_ROOM);
        int shift = c.shift_runs * 32 + (int)c.k;
        if (m.rfind("wsv@", 0) == 0) k_shv<T><<<grid, block>>>(base, shift);
        else if (m.rfind("wss@", 0) == 0) k_sh<T, true><<<grid, block>>>(base, shift);
        else k_sh<T, false><<<grid, block>>>(base, shift);
        return;
    }
    if (m == "rox") return launch_var<T, 0>(true, grid, x, (T *)(a + BYTES + PAD / 2), c.k);
    if (m == "wox") return launch_var<T, 1>(true, grid, x, y, c.k);
    if (m == "cpx") return launch_var<T, 2>(true, grid, x, y, c.k);
    if (m == "rs" || m == "rsx") return launch_var<T, 3>(m == "rsx", grid, x, y, c.k);
    if (m == "ws" || m == "wsx") return launch_var<T, 4>(m == "wsx", grid, x, y, c.k);
    if (second) {
        bool cg = c.mode == "rwcg" || c.mode == "rwxcg", spread = c.mode == "rwx" || c.mode == "rwxcg";
        if (cg && spread) k_rwv<T, true, true><<<grid, block>>>(x, c.k);
        else if (cg) k_rwv<T, true, false><<<grid, block>>>(x, c.k);
        else if (spread) k_rwv<T, false, true><<<grid, block>>>(x, c.k);
        else k_rwv<T, false, false><<<grid, block>>>(x, c.k);
        return;
    }
    // ro's sink: past the elements any thread reads or writes.
    if (c.mode == "rw") k_rw<T><<<grid, block>>>(x, y, c.k);
    else if (c.mode == "ro") k_ro<T><<<grid, block>>>(x, (T *)(a + BYTES + PAD / 2), c.k);
    else if (c.mode == "wo") k_wo<T><<<grid, block>>>(x, y, c.k);
    else if (c.mode == "cp") k_cp<T><<<grid, block>>>(x, y, c.k);
    else if (c.mode == "lm") k_lm<T><<<grid, block>>>(x, y, c.k);
    else if (c.mode == "sm") k_sm<T><<<grid, block>>>(x, y, c.k);
    else k_rw2<T><<<grid, block>>>(x, y, c.k, (unsigned)(BYTES / sizeof(T) / 2));
}

static void launch(const Case &c, char *a, char *b, bool second) {
    if (c.elem == 4) launch_t<float>(c, a, b, second);
    else launch_t<double>(c, a, b, second);
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    bool fifth = std::string(argv[argc - 1]) == "fifth";
    bool fourth = std::string(argv[argc - 1]) == "fourth";
    bool third = std::string(argv[argc - 1]) == "third";
    bool second = third || fourth || fifth || std::string(argv[argc - 1]) == "second";
    std::vector<Case> all = cases(second, third, fourth, fifth);
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++)
            printf("%zu,%s,%u,%u,%u,256\n", i, all[i].mode.c_str(), all[i].elem, all[i].k, grid_of(all[i]));
        return 0;
    }
    if (mode != "ncu" && mode != "time") {
        fprintf(stderr, "usage: misalign list | ncu [REPS] [SET] | time [REPS] [SET]  (SET: second|third|fourth|fifth)\n");
        return 2;
    }
    char *a, *b;
    CK(cudaMalloc(&a, BYTES + 2 * SHIFT_ROOM + PAD));
    CK(cudaMalloc(&b, BYTES + PAD));
    int reps = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : (mode == "ncu" ? 1 : 5);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (size_t i = 0; i < all.size(); i++) {
        const Case &c = all[i];
        unsigned grid = grid_of(c);
        if (mode == "ncu") {
            for (int r = 0; r < reps; r++) {
                CK(cudaMemset(a, 0, BYTES + 2 * SHIFT_ROOM + PAD));
                CK(cudaMemset(b, 0, BYTES + PAD));
                CK(cudaDeviceSynchronize());
                printf("CASE,%zu,%s,%u,%u,%u,256,%d\n", i, c.mode.c_str(), c.elem, c.k, grid, r);
                fflush(stdout);
                launch(c, a, b, second);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        } else {
            CK(cudaMemset(a, 0, BYTES + 2 * SHIFT_ROOM + PAD));
            CK(cudaMemset(b, 0, BYTES + PAD));
            launch(c, a, b, second);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            for (int r = 0; r < reps; r++) {
                CK(cudaEventRecord(e0));
                for (int j = 0; j < 10; j++) launch(c, a, b, second);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                printf("TIME,%zu,%s,%u,%u,%d,%.6f\n", i, c.mode.c_str(), c.elem, c.k, r, ms / 10);
            }
        }
    }
    return 0;
}
