// What a load waits for on a busy SM, and how fast the H200's DRAM opens rows.
//
// Build:  nvcc -O3 -arch=sm_90 -o busy busy.cu
// Run:    ./busy lat OUT.csv   one thread chases 1 GiB (16,384 dependent
//                              ld.global.cg loads, one new 128-byte line per
//                              step) in warp 0 of block 0 while the other
//                              warps of a 132-block grid stream (one block
//                              per SM, held there by its shared memory). Per
//                              case: whether block 0's own other warps stream
//                              (a busy SM) or not (a quiet one), how many,
//                              what they do (read, or read and write as the
//                              seed's offset kernel does: a warp loads 128
//                              consecutive bytes and stores them elsewhere),
//                              how many loads each warp has in flight (u),
//                              over 1 GiB or an L2-resident 8 MiB; the streams'
//                              rate (bytes over the chase's span) and each
//                              chase load's latency in SM cycles
//         ./busy mix OUT.csv   the chase on a quiet SM while, on every other SM,
//                              some warps stream reads (u = 1) and others
//                              stream writes only (no loads) of 128 bytes
//                              per step: per case the read and write rates
//                              and each chase load's latency
//         ./busy piece OUT.csv 8 Mi sectors, sp of each 256-byte piece, g bytes
//                              apart, written 4 bytes each (a partial sector,
//                              filled from DRAM), written whole (8 lanes), or
//                              read 4 bytes each; per case the time of a launch
//                              after 256 MiB of other data was read twice (median
//                              of 3, events) and the sectors and pieces per us;
//                              `piece OUT.csv 4` adds rmw4: 4 bytes read, then
//                              written back (seed 002's a[i] = a[i] + 1)
//         ./busy stream OUT.csv  the streaming warps alone, 132 or 264 blocks of
//                              1024 threads, a fixed 2048/u iterations over
//                              1 GiB: per case the rate (events, median of
//                              5 warm launches) and the streams' own mean
//                              load latency (lane 0 of each warp, clock64
//                              from before its loads to the first use of
//                              their data)
//         ./busy split OUT.csv   the streams of `stream` with the source and the
//                              destination each in DRAM (1 GiB) or resident in
//                              the L2 (8 MiB source, 4 MiB destination), and
//                              write-only streams (no loads): which side of a
//                              copy makes its loads wait
//         ./busy act OUT.csv   every thread of a full grid reads words at
//                              hashed places in 64 GiB, u independent loads
//                              in flight per thread: chunks of 32, 64 or 128
//                              bytes (8, 16 or 32 lanes of a warp on one
//                              chunk), and pairs of 32-byte chunks d bytes
//                              apart (lanes 0-7 at p, 8-15 at p + d, and the
//                              same for lanes 16-31). Per case the time of a
//                              warm launch (events, median of 5) and the
//                              chunks per second. At 64 GiB a chunk almost
//                              never finds its row open, so the rate of
//                              64-byte fetches is the rate rows are opened,
//                              where nothing else is the limit; a pair whose
//                              two chunks share a row needs one activation.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

const uint32_t LINES = 1u << 23;  // 8 Mi lines of 128 B: 1 GiB
__host__ __device__ inline uint32_t lcg(uint32_t i) { return (i * 1664525u + 1013904223u) & (LINES - 1); }

__global__ void fill_chain(uint32_t* a) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < LINES; i += gridDim.x * blockDim.x) {
        a[(uint64_t)i * 32] = lcg(i);
        for (int k = 1; k < 32; k++) a[(uint64_t)i * 32 + k] = 0;
    }
}

// n dependent loads along the chain from `line`, each one's latency to lat,
// the chase's span to span[0]; then every block's done flag is raised.
__device__ void chase_then_release(const uint32_t* a, uint32_t line, int n, uint32_t* lat, volatile int* done,
                                   uint64_t* span, uint32_t* sink) {
    uint64_t g0 = gtime();
    for (int i = 0; i < n; i++) {
        long long t0 = clk();
        uint32_t x = ld_cg(a + (uint64_t)line * 32);
        sink[i & 1023] = x;
        long long t1 = clk();
        line = x;
        lat[i] = (uint32_t)(t1 - t0);
    }
    span[0] = gtime() - g0;
    __threadfence();
    for (int b = 0; b < gridDim.x; b++) done[b * 32] = 1;
}

// Warp 0 of block 0 chases; block 0's warps 1..b0w stream (none: a quiet SM);
// every other block's warps 0..warps-1 stream. A streaming warp reads 128
// consecutive bytes per load (lane i the i-th float, default caching as a
// plain load), U of them in flight, and with COPY stores each to d.
template <int U, bool COPY>
__global__ void lat_kernel(const uint32_t* a, uint32_t start, const float* s, float* d, uint64_t mask, int n, int b0w, int warps,
                           uint32_t* lat, volatile int* done, unsigned long long* moved, uint64_t* span,
                           uint32_t* sink) {
    extern __shared__ float smem[];
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (blockIdx.x == 0 && w == 0) {
        if (lane != 0) return;
        chase_then_release(a, start, n, lat, done, span, sink);
        return;
    }
    if (blockIdx.x == 0 ? w > b0w : w >= warps) return;
    volatile int* my_done = done + blockIdx.x * 32;
    if (lane == 0 && w == 31) smem[0] = 0.f;  // the shared memory is only held
    const uint64_t sw = (uint64_t)blockIdx.x * 32 + w;
    const uint64_t step = (uint64_t)gridDim.x * 32 * 32 * U;
    uint64_t base = sw * 32 * U + lane;
    float acc = 0.f;
    unsigned long long iters = 0;
    int stop = 0;
    while (!stop) {
        float v[U];
#pragma unroll
        for (int k = 0; k < U; k++) v[k] = s[(base + k * 32) & mask];
        stop = *my_done;
        if (COPY) {
#pragma unroll
            for (int k = 0; k < U; k++) d[(base + k * 32) & mask] = v[k] + 1.f;
        } else {
#pragma unroll
            for (int k = 0; k < U; k++) acc += v[k];
        }
        base += step;
        iters++;
    }
    if (acc == 1234.5f) sink[2] = 1;
    if (lane == 0) atomicAdd(moved, iters * U * 128 * (COPY ? 2 : 1));
}

// Warp 0 of block 0 chases; in every other block warps 0..rw-1 stream reads
// (as lat_kernel's, u = 1) and warps rw..rw+ww-1 stream writes of 128
// consecutive bytes (no loads) through another 1 GiB: the chase beside
// reads and writes from separate warps, at rates set by the warp counts.
__global__ void mix_kernel(const uint32_t* a, const float* s, float* d, uint64_t mask, int n, int rw, int ww,
                           uint32_t* lat, volatile int* done, unsigned long long* moved, uint64_t* span,
                           uint32_t* sink) {
    extern __shared__ float smem[];
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (blockIdx.x == 0) {
        if (w != 0 || lane != 0) return;
        chase_then_release(a, n > 256 ? 777u : 4000001u, n, lat, done, span, sink);
        return;
    }
    if (w >= rw + ww) return;
    if (lane == 0 && w == 31) smem[0] = 0.f;
    volatile int* my_done = done + blockIdx.x * 32;
    const bool writer = w >= rw;
    const uint64_t sw = (uint64_t)blockIdx.x * 32 + w;
    const uint64_t step = (uint64_t)gridDim.x * 32 * 32;
    uint64_t base = sw * 32 + lane;
    float acc = 0.f;
    unsigned long long iters = 0;
    int stop = 0;
    while (!stop) {
        if (writer) {
            d[base & mask] = 1.f;
        } else {
            acc += s[base & mask];
        }
        stop = *my_done;
        base += step;
        iters++;
    }
    if (acc == 1234.5f) sink[2] = 1;
    if (lane == 0) atomicAdd(moved + (writer ? 1 : 0), iters * 128);
}

// Sectors written (or read) in 256-byte pieces: thread t touches sector
// t % sp of piece t / sp, the sectors of a piece g bytes apart; FULL: 8
// lanes write the whole 32-byte sector (no fill from DRAM needed), else one
// lane writes 4 bytes of it (a partial sector). A piece is 256 B of the
// address space, pieces next to each other in memory.
// OP 3 reads the 4 bytes and writes them back plus one (seed 002's a[i] = a[i] + 1):
// the sector is fetched whole before the write, so its line leaves the L2 whole.
template <int OP>  // 0: 4-byte store, 1: 32-byte store (8 lanes), 2: 4-byte load, 3: load, then store
__global__ void piece_kernel(float* a, int sp, int g, uint64_t n, uint32_t* sink) {
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t lanes = OP == 1 ? 8 : 1;
    const uint64_t u = t / lanes;  // the sector's number
    if (u >= n) return;
    const uint64_t byte = (u / sp) * 256 + (u % sp) * g + (t % lanes) * 4;
    float* p = a + byte / 4;
    if (OP == 2) {
        float v = *p;
        if (v == 1234.5f) sink[4] = 1;
    } else if (OP == 3) {
        *p = *p + 1.f;
    } else {
        *p = 1.f;
    }
}

// Streaming warps alone, a fixed number of iterations: each warp loads U
// pieces of 128 consecutive bytes (plain loads) of `s` (OP 0, 1), then
// stores them to `d` (OP 1, copy) or adds them up (OP 0, read); OP 2 stores
// U pieces of `d` without loading (write). `smask`, `dmask`: each buffer's
// size in floats, minus one (a power of two). Lane 0 times each iteration
// from before its loads to after the instruction that needs their data (a
// store, or the predicated store of the sum): the loads' latency as the
// streams themselves see it.
template <int U, int OP>
__global__ void stream_kernel(const float* s, float* d, uint64_t smask, uint64_t dmask, int iters,
                              unsigned long long* lat_sum, float* sink) {
    const int lane = threadIdx.x % 32;
    const uint64_t sw = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
    const uint64_t nw = (uint64_t)gridDim.x * blockDim.x / 32;
    const uint64_t step = nw * 32 * U;
    uint64_t base = sw * 32 * U + lane;
    float acc = 0.f;
    unsigned long long ls = 0;
    for (int it = 0; it < iters; it++) {
        float v[U];
        long long t0 = clk();
        if (OP == 2) {
#pragma unroll
            for (int k = 0; k < U; k++) d[(base + k * 32) & dmask] = 1.5f;
        } else {
#pragma unroll
            for (int k = 0; k < U; k++) v[k] = s[(base + k * 32) & smask];
        }
        if (OP == 1) {
#pragma unroll
            for (int k = 0; k < U; k++) d[(base + k * 32) & dmask] = v[k] + 1.f;
        } else if (OP == 0) {
#pragma unroll
            for (int k = 0; k < U; k++) acc += v[k];
            if (acc == 1234.5f) sink[sw & 1023] = acc;
        }
        long long t1 = clk();
        ls += t1 - t0;
        base += step;
    }
    if (lane == 0 && OP != 2) atomicAdd(lat_sum, ls);
}

// The stream modes' buffers: source and destination of `bytes` each
// (zeros), the never-written sink and the latency sum.
struct StreamBufs {
    float *s, *d, *sink;
    unsigned long long* lat_sum;
};

StreamBufs stream_bufs(uint64_t bytes) {
    StreamBufs b;
    CK(cudaMalloc(&b.s, bytes));
    CK(cudaMalloc(&b.d, bytes));
    CK(cudaMalloc(&b.sink, 4096 * 4));
    CK(cudaMemset(b.s, 0, bytes));
    CK(cudaMemset(b.d, 0, bytes));
    CK(cudaMalloc(&b.lat_sum, 8));
    return b;
}

// One stream case: the median time of 5 launches after a first (which warms
// an L2-resident source), and the mean load latency of the last.
struct StreamRun {
    double ms, latency;
};

template <int OP>
StreamRun stream_case(int blocks, int u, int iters, const float* s, float* d, uint64_t smask, uint64_t dmask,
                      unsigned long long* lat_sum, float* sink) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    unsigned long long hl = 0;
    for (int rep = 0; rep < 6; rep++) {
        CK(cudaMemset(lat_sum, 0, 8));
        CK(cudaEventRecord(e0));
        if (u == 1) stream_kernel<1, OP><<<blocks, 1024>>>(s, d, smask, dmask, iters, lat_sum, sink);
        else if (u == 2) stream_kernel<2, OP><<<blocks, 1024>>>(s, d, smask, dmask, iters, lat_sum, sink);
        else stream_kernel<4, OP><<<blocks, 1024>>>(s, d, smask, dmask, iters, lat_sum, sink);
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (rep) ms.push_back(t);
        CK(cudaMemcpy(&hl, lat_sum, 8, cudaMemcpyDeviceToHost));
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(ms.begin(), ms.end());
    const uint64_t warps = (uint64_t)blocks * 32;
    return {ms[ms.size() / 2], OP == 2 ? 0.0 : hl / (double)(warps * iters)};
}

// Random chunks: lanes in groups of G read G words of one chunk; with PAIR the
// chunk at p + d is read by the group after it.
__device__ __forceinline__ uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

template <int U>
__global__ void act_kernel(const uint32_t* a, uint64_t chunk_mask, int lg, int pair_d_words, int iters,
                           uint32_t* sink) {
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % 32;
    const int g = 1 << lg;  // lanes per chunk
    uint32_t acc = 0;
    for (int it = 0; it < iters; it++) {
        uint32_t v[U];
#pragma unroll
        for (int k = 0; k < U; k++) {
            uint64_t key = ((t >> lg) * (uint64_t)iters + it) * U + k;
            uint64_t w;
            if (pair_d_words) {
                // 16 lanes per pair: lanes 0-7 at p, 8-15 at p + d (p 32-byte aligned)
                uint64_t p = (mix(t / 16 * (uint64_t)iters * U + it * U + k) & chunk_mask) << 3;
                w = p + ((lane & 8) ? pair_d_words : 0) + (lane & 7);
            } else {
                w = ((mix(key) & chunk_mask) << lg) + (lane & (g - 1));
            }
            v[k] = ld_cg(a + w);
        }
#pragma unroll
        for (int k = 0; k < U; k++) acc += v[k];
    }
    if (acc == 0x12345678) sink[3] = acc;
}

// The buffers the lat and mix modes share: the 1 GiB chain, two 1 GiB
// stream buffers, 256 MiB of other data (to empty the L2 of the chain), the
// chase's latencies, the per-block done flags (one line each), the streams'
// byte counts (reads, writes) and the chase's span.
struct Chase {
    uint32_t* a;
    float *s, *d;
    uint32_t *junk, *lat;
    int* done;
    unsigned long long* moved;
    uint64_t* span;
    uint64_t s_bytes;
    int n;
};

Chase chase_setup() {
    Chase k;
    k.n = 1 << 14;
    k.s_bytes = 1ull << 30;
    CK(cudaMalloc(&k.a, (size_t)LINES * 128));
    fill_chain<<<1024, 256>>>(k.a);
    CK(cudaGetLastError());
    CK(cudaMalloc(&k.s, k.s_bytes));
    CK(cudaMalloc(&k.d, k.s_bytes));
    CK(cudaMemset(k.s, 0, k.s_bytes));
    CK(cudaMemset(k.d, 0, k.s_bytes));
    CK(cudaMalloc(&k.junk, 256u << 20));
    CK(cudaMemset(k.junk, 1, 256u << 20));
    CK(cudaMalloc(&k.lat, k.n * 4));
    CK(cudaMalloc(&k.done, 132 * 128));
    CK(cudaMalloc(&k.moved, 16));
    CK(cudaMalloc(&k.span, 8));
    return k;
}

// Empties the L2 of everything but `junk`'s lines (256 MiB read twice), none dirty.
void flush_l2(const uint32_t* junk, uint32_t* sink) {
    read_all<<<1056, 512>>>(junk, (256u << 20) / 4, sink);
    read_all<<<1056, 512>>>(junk, (256u << 20) / 4, sink);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: busy lat|mix|piece|stream|split|act OUT.csv\n");
        return 2;
    }
    const char* mode = argv[1];
    FILE* f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    uint32_t* sink;
    CK(cudaMalloc(&sink, 4096 * 4));
    if (!strcmp(mode, "lat")) {
        const Chase k = chase_setup();
        uint32_t* a = k.a;
        float *s = k.s, *d = k.d;
        uint32_t *junk = k.junk, *lat = k.lat;
        int* done = k.done;
        unsigned long long* moved = k.moved;
        uint64_t* span = k.span;
        const uint64_t s_bytes = k.s_bytes;
        const int n = k.n;
        // 120 KiB of shared memory per block: one block per SM (228 KiB per SM).
        const int smem = 120 << 10;
        auto setup = [&](const void* k) {
            CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        };
        setup((const void*)lat_kernel<1, false>);
        setup((const void*)lat_kernel<2, false>);
        setup((const void*)lat_kernel<4, false>);
        setup((const void*)lat_kernel<1, true>);
        setup((const void*)lat_kernel<2, true>);
        setup((const void*)lat_kernel<4, true>);
        struct Case {
            const char* name;
            int blocks, b0w, warps, u;
            bool copy, l2;
        };
        std::vector<Case> cases = {
            {"idle", 1, 0, 0, 1, false, false},
        };
        for (int copy = 0; copy < 2; copy++)
            for (int u : {1, 2, 4})
                for (int busy = 0; busy < 2; busy++)
                    cases.push_back({busy ? "busy" : "quiet", 132, busy ? 31 : 0, 32, u, (bool)copy, false});
        // Part of the SM busy: 8 and 16 streaming warps beside the chase.
        cases.push_back({"busy8", 132, 8, 32, 2, true, false});
        cases.push_back({"busy16", 132, 16, 32, 2, true, false});
        // The SM's own traffic served by the L2 (8 MiB): its path alone.
        for (int busy = 0; busy < 2; busy++) {
            cases.push_back({busy ? "busy" : "quiet", 132, busy ? 31 : 0, 32, 4, false, true});
            cases.push_back({busy ? "busy" : "quiet", 132, busy ? 31 : 0, 32, 2, true, true});
        }
        // Only the chase's SM streams: what its own traffic does with the rest idle.
        cases.push_back({"alone_busy", 1, 31, 32, 4, false, false});
        cases.push_back({"alone_busy", 1, 31, 32, 2, true, false});
        std::vector<uint32_t> h(n);
        fprintf(f, "case,blocks,b0_warps,warps,u,op,footprint,stream_gbps,i,latency_cycles\n");
        for (const Case& c : cases) {
            // No line of the chain left in the L2 by the case before (reading
            // 256 MiB twice replaces every line).
            flush_l2(junk, sink);
            for (int rep = 0; rep < 2; rep++) {  // the first launch (another part of the chain) warms up
                CK(cudaMemset(done, 0, 132 * 128));
                CK(cudaMemset(moved, 0, 8));
                uint64_t mask = (c.l2 ? (8ull << 20) : s_bytes) / 4 - 1;
#define L(U, C) \
    lat_kernel<U, C><<<c.blocks, 1024, smem>>>(a, rep ? 777u : 4000001u, s, d, mask, rep ? n : 256, c.b0w, c.warps, lat, done, moved, span, sink)
                if (c.copy) {
                    if (c.u == 1) L(1, true);
                    else if (c.u == 2) L(2, true);
                    else L(4, true);
                } else {
                    if (c.u == 1) L(1, false);
                    else if (c.u == 2) L(2, false);
                    else L(4, false);
                }
#undef L
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
            unsigned long long hm;
            uint64_t hs;
            CK(cudaMemcpy(&hm, moved, 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&hs, span, 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h.data(), lat, n * 4, cudaMemcpyDeviceToHost));
            double gbps = hs ? hm / (double)hs : 0.0;
            for (int i = 0; i < n; i++)
                fprintf(f, "%s,%d,%d,%d,%d,%s,%s,%.1f,%d,%u\n", c.name, c.blocks, c.b0w, c.warps, c.u,
                        c.copy ? "copy" : "read", c.l2 ? "8MiB" : "1GiB", gbps, i, h[i]);
            fflush(f);
        }
    } else if (!strcmp(mode, "mix")) {
        const Chase k = chase_setup();
        uint32_t* a = k.a;
        float *s = k.s, *d = k.d;
        uint32_t *junk = k.junk, *lat = k.lat;
        int* done = k.done;
        unsigned long long* moved = k.moved;
        uint64_t* span = k.span;
        const uint64_t s_bytes = k.s_bytes;
        const int n = k.n;
        const int smem = 120 << 10;
        CK(cudaFuncSetAttribute((const void*)mix_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        std::vector<uint32_t> h(n);
        const int rws[] = {0, 0, 0, 0, 0, 0, 4, 8, 16, 32, 4, 8, 16, 8};
        const int wws[] = {0, 1, 2, 4, 8, 16, 0, 0, 0, 0, 4, 8, 16, 24};
        fprintf(f, "read_warps,write_warps,read_gbps,write_gbps,i,latency_cycles\n");
        for (int c = 0; c < 14; c++) {
            flush_l2(junk, sink);
            for (int rep = 0; rep < 2; rep++) {
                CK(cudaMemset(done, 0, 132 * 128));
                CK(cudaMemset(moved, 0, 16));
                mix_kernel<<<132, 1024, smem>>>(a, s, d, s_bytes / 4 - 1, rep ? n : 256, rws[c], wws[c], lat, done,
                                                moved, span, sink);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
            unsigned long long hm[2];
            uint64_t hs;
            CK(cudaMemcpy(hm, moved, 16, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&hs, span, 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h.data(), lat, n * 4, cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++)
                fprintf(f, "%d,%d,%.1f,%.1f,%d,%u\n", rws[c], wws[c], hm[0] / (double)hs, hm[1] / (double)hs, i, h[i]);
            fflush(f);
        }
    } else if (!strcmp(mode, "piece")) {
        const uint64_t bytes = 8ull << 30;
        float* a;
        CK(cudaMalloc(&a, bytes));
        CK(cudaMemset(a, 0, bytes));
        float* junk;
        CK(cudaMalloc(&junk, 256u << 20));
        CK(cudaMemset(junk, 0, 256u << 20));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const uint64_t n = 8u << 20;  // sectors per launch
        fprintf(f, "op,sectors_per_piece,gap,sectors,pieces,ms,sectors_per_us,pieces_per_us\n");
        const int sps[] = {1, 2, 2, 2, 4, 4, 8};
        const int gs[] = {0, 32, 64, 128, 32, 64, 32};
        const int ops = argc > 3 ? atoi(argv[3]) : 3;  // `piece OUT.csv 4` adds op 3
        for (int op = 0; op < ops; op++)
            for (int c = 0; c < 7; c++) {
                std::vector<float> ms;
                for (int rep = 0; rep < 4; rep++) {
                    // A clean L2 each time: 256 MiB of other data read twice, so that
                    // no line of ours is cached and none is dirty (only the kernel's
                    // own lines are written back during it).
                    flush_l2((const uint32_t*)junk, sink);
                    uint64_t threads = n * (op == 1 ? 8 : 1);
                    CK(cudaEventRecord(e0));
                    if (op == 0) piece_kernel<0><<<(threads + 255) / 256, 256>>>(a, sps[c], gs[c], n, sink);
                    else if (op == 1) piece_kernel<1><<<(threads + 255) / 256, 256>>>(a, sps[c], gs[c], n, sink);
                    else if (op == 2) piece_kernel<2><<<(threads + 255) / 256, 256>>>(a, sps[c], gs[c], n, sink);
                    else piece_kernel<3><<<(threads + 255) / 256, 256>>>(a, sps[c], gs[c], n, sink);
                    CK(cudaEventRecord(e1));
                    CK(cudaGetLastError());
                    CK(cudaEventSynchronize(e1));
                    float t;
                    CK(cudaEventElapsedTime(&t, e0, e1));
                    if (rep) ms.push_back(t);
                }
                std::sort(ms.begin(), ms.end());
                double m = ms[ms.size() / 2];
                uint64_t pieces = n / sps[c];
                fprintf(f, "%s,%d,%d,%llu,%llu,%.4f,%.1f,%.1f\n", op == 0 ? "store4" : op == 1 ? "store32" : op == 2 ? "load4" : "rmw4",
                        sps[c], gs[c], (unsigned long long)n, (unsigned long long)pieces, m, n / (m * 1e3),
                        pieces / (m * 1e3));
                fflush(f);
            }
    } else if (!strcmp(mode, "stream")) {
        const uint64_t s_bytes = 1ull << 30;
        StreamBufs b = stream_bufs(s_bytes);
        float *s = b.s, *d = b.d, *fsink = b.sink;
        unsigned long long* lat_sum = b.lat_sum;
        const uint64_t mask = s_bytes / 4 - 1;
        fprintf(f, "op,blocks,threads,u,iters,bytes,ms,gbps,load_latency_cycles\n");
        for (int copy = 0; copy < 2; copy++)
            for (int blocks : {132, 264})
                for (int u : {1, 2, 4}) {
                    const int iters = 2048 / u;
                    StreamRun r = copy ? stream_case<1>(blocks, u, iters, s, d, mask, mask, lat_sum, fsink)
                                       : stream_case<0>(blocks, u, iters, s, d, mask, mask, lat_sum, fsink);
                    uint64_t warps = (uint64_t)blocks * 32;
                    double bytes = (double)warps * iters * u * 128 * (copy ? 2 : 1);
                    fprintf(f, "%s,%d,1024,%d,%d,%.0f,%.4f,%.1f,%.1f\n", copy ? "copy" : "read", blocks, u, iters,
                            bytes, r.ms, bytes / (r.ms * 1e6), r.latency);
                    fflush(f);
                }
    } else if (!strcmp(mode, "split")) {
        // Where a copy's loads wait: its source and destination each in DRAM
        // (1 GiB) or resident in the L2 (8 MiB source, 4 MiB destination).
        const uint64_t big = 1ull << 30;
        StreamBufs b = stream_bufs(big);
        float *s = b.s, *d = b.d, *fsink = b.sink;
        unsigned long long* lat_sum = b.lat_sum;
        struct Case {
            const char* op;
            int code;
            uint64_t s_bytes, d_bytes;
        };
        const uint64_t l2s = 8ull << 20, l2d = 4ull << 20;
        const Case cases[] = {
            {"read", 0, big, 0},    {"read", 0, l2s, 0},    {"copy", 1, big, big}, {"copy", 1, big, l2d},
            {"copy", 1, l2s, big},  {"copy", 1, l2s, l2d},  {"write", 2, 0, big},  {"write", 2, 0, l2d},
        };
        fprintf(f, "op,s_bytes,d_bytes,blocks,threads,u,iters,bytes,ms,gbps,load_latency_cycles\n");
        for (const Case& c : cases)
            for (int blocks : {132, 264})
                for (int u : {1, 2, 4}) {
                    const int iters = 2048 / u;
                    const uint64_t sm = c.s_bytes ? c.s_bytes / 4 - 1 : 0, dm = c.d_bytes ? c.d_bytes / 4 - 1 : 0;
                    StreamRun r = c.code == 0   ? stream_case<0>(blocks, u, iters, s, d, sm, dm, lat_sum, fsink)
                                  : c.code == 1 ? stream_case<1>(blocks, u, iters, s, d, sm, dm, lat_sum, fsink)
                                                : stream_case<2>(blocks, u, iters, s, d, sm, dm, lat_sum, fsink);
                    uint64_t warps = (uint64_t)blocks * 32;
                    double bytes = (double)warps * iters * u * 128 * (c.code == 1 ? 2 : 1);
                    fprintf(f, "%s,%llu,%llu,%d,1024,%d,%d,%.0f,%.4f,%.1f,%.1f\n", c.op,
                            (unsigned long long)c.s_bytes, (unsigned long long)c.d_bytes, blocks, u, iters, bytes,
                            r.ms, bytes / (r.ms * 1e6), r.latency);
                    fflush(f);
                }
    } else if (!strcmp(mode, "act")) {
        const uint64_t bytes = 64ull << 30;
        uint32_t* a;
        CK(cudaMalloc(&a, bytes));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const int blocks = 132 * 8, threads = 256;  // 2048 threads per SM
        fprintf(f, "case,chunk_bytes,pair_d,u,iters,chunks,ms,chunks_per_us\n");
        auto run = [&](const char* name, int lg, int pair_d, int u, int iters) {
            std::vector<float> ms;
            for (int rep = 0; rep < 6; rep++) {
                uint64_t cm = pair_d ? (bytes / 32 - 1) >> 1 : (bytes >> (2 + lg)) - 1;
                CK(cudaEventRecord(e0));
                if (u == 1) act_kernel<1><<<blocks, threads>>>(a, cm, lg, pair_d / 4, iters, sink);
                else if (u == 2) act_kernel<2><<<blocks, threads>>>(a, cm, lg, pair_d / 4, iters, sink);
                else if (u == 4) act_kernel<4><<<blocks, threads>>>(a, cm, lg, pair_d / 4, iters, sink);
                else act_kernel<8><<<blocks, threads>>>(a, cm, lg, pair_d / 4, iters, sink);
                CK(cudaEventRecord(e1));
                CK(cudaGetLastError());
                CK(cudaEventSynchronize(e1));
                float t;
                CK(cudaEventElapsedTime(&t, e0, e1));
                if (rep) ms.push_back(t);
            }
            std::sort(ms.begin(), ms.end());
            double m = ms[ms.size() / 2];
            // Chunks: a warp's lanes in groups of 2^lg (pairs: two chunks per 16 lanes).
            uint64_t chunks = (uint64_t)blocks * threads * iters * u / (pair_d ? 8 : (1 << lg));
            fprintf(f, "%s,%d,%d,%d,%d,%llu,%.4f,%.1f\n", name, pair_d ? 32 : 4 << lg, pair_d, u, iters,
                    (unsigned long long)chunks, m, chunks / (m * 1e3));
            fflush(f);
        };
        for (int u : {1, 2, 4, 8}) run("chunk", 3, 0, u, 64);
        for (int u : {2, 8}) run("chunk", 4, 0, u, 64);
        for (int u : {2, 8}) run("chunk", 5, 0, u, 64);
        for (int d = 32; d <= (1 << 20); d *= 2) run("pair", 3, d, 8, 64);
        for (int d : {94 * 256, 47 * 256, 3 * 256, 3 * 1024}) run("pair", 3, d, 8, 64);
    }
    fclose(f);
    return 0;
}
