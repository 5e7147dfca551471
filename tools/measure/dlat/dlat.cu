// DRAM latency, load by load, on one SM of the H200: what an unloaded load
// waits beyond the fixed path (refresh and the like), and what a second
// load of the same line costs while the first one's fill is on its way.
//
// Build:  nvcc -O3 -arch=sm_90 -o dlat dlat.cu
// Run:    ./dlat cv OUT.csv      one thread reads one word with ld.global.cv
//                                (the L2 drops its copy and fetches it again
//                                from DRAM each time, PTX ISA "ld"), N times,
//                                each load waiting for the last: per load the
//                                SM cycle it was issued at and its latency
//         ./dlat chase OUT.csv   one thread follows a chain through 1 GiB,
//                                one 128-byte line per step (next line from a
//                                full-period LCG over the 8 Mi lines), with
//                                ld.global.cg: per load its latency
//         ./dlat clean OUT.csv   as chase, after reading (not writing) 512 MiB
//                                of other data, so that the L2 holds no dirty
//                                line and no write-back runs under the chase
//         ./dlat loaded OUT.csv  the chase (16,384 loads) on block 0 while 0 to
//                                528 other blocks of 256 threads stream reads
//                                of 1 GiB (ld.cg, 16 bytes, 4 in flight per
//                                thread) until it is done: per case the
//                                streams' rate (GB/s over the chase's span)
//                                and each chase load's latency
//         ./dlat pair OUT.csv    two warps of one block, after a barrier, each
//                                load 64 bytes (16 lanes x 4 bytes, ld.cg or
//                                ld.ca) of lines never read before; per trial
//                                each warp's issue cycle and latency. Cases:
//                                  alone: warp 1 loads nothing
//                                  other: warp 1 loads sectors 2-3 of another line
//                                  split: warp 1 loads sectors 2-3 of warp 0's line
//                                  same:  warp 1 loads sectors 0-1 of warp 0's line
//
// Latency: lane 0 reads clock64 before the load and again after the store
// of the loaded value (the store waits for the data; run.sh keeps the SASS).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

__device__ __forceinline__ uint32_t ld_cv(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.global.cv.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint32_t ld_ca(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

const uint32_t LINES = 1u << 23;  // 8 Mi lines of 128 B: 1 GiB
__host__ __device__ inline uint32_t lcg(uint32_t i) { return (i * 1664525u + 1013904223u) & (LINES - 1); }

__global__ void fill_chain(uint32_t* a) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < LINES; i += gridDim.x * blockDim.x) {
        a[(uint64_t)i * 32] = lcg(i);
        for (int k = 1; k < 32; k++) a[(uint64_t)i * 32 + k] = 0;
    }
}

// One word read again and again from DRAM.
__global__ void cv_kernel(const uint32_t* a, int n, long long* at, uint32_t* lat, uint32_t* sink,
                          uint64_t* g) {
    uint32_t v = 0;
    g[0] = gtime();
    long long c0 = clk();
    for (int i = 0; i < n; i++) {
        long long t0 = clk();
        uint32_t x = ld_cv(a + v);
        sink[i & 1023] = x;
        long long t1 = clk();
        v = x & 0;  // the word holds 0: the address depends on the load
        at[i] = t0 - c0;
        lat[i] = (uint32_t)(t1 - t0);
    }
    g[1] = gtime();
    g[2] = (uint64_t)(clk() - c0);
}

// n dependent loads along the chain from `line`, each one's latency to lat.
__device__ void chase(const uint32_t* a, uint32_t line, int n, uint32_t* lat, uint32_t* sink) {
    for (int i = 0; i < n; i++) {
        long long t0 = clk();
        uint32_t x = ld_cg(a + (uint64_t)line * 32);
        sink[i & 1023] = x;
        long long t1 = clk();
        line = x;
        lat[i] = (uint32_t)(t1 - t0);
    }
}

__global__ void chase_kernel(const uint32_t* a, int n, uint32_t* lat, uint32_t* sink) {
    chase(a, 12345, n, lat, sink);
}

// Trial j uses line (j * 4099 + 1) of the 1 GiB region (a stride that spreads
// lines over channels and rows; each line is used once per launch), and the
// "other" line 2^22 lines (512 MiB) away.
template <bool CA>
__global__ void pair_kernel(const uint32_t* a, int trials, int mode, long long* out, uint32_t* sink) {
    int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int j = 0; j < trials; j++) {
        uint64_t line = ((uint64_t)j * 4099 + 1) & (LINES - 1);
        uint64_t word;
        bool go = lane < 16;
        if (w == 0) {
            word = line * 32 + lane;
        } else if (mode == 1) {
            word = ((line + (LINES / 2)) & (LINES - 1)) * 32 + 16 + lane;
        } else if (mode == 2) {
            word = line * 32 + 16 + lane;
        } else {
            word = line * 32 + lane;
            go = go && mode == 3;
        }
        if (w == 1 && mode == 0) go = false;
        __syncthreads();
        long long t0 = clk();
        uint32_t x = 0;
        if (go) x = CA ? ld_ca(a + word) : ld_cg(a + word);
        sink[threadIdx.x] = x;
        long long t1 = clk();
        if (lane == 0) {
            out[((uint64_t)j * 2 + w) * 2] = t0;
            out[((uint64_t)j * 2 + w) * 2 + 1] = t1 - t0;
        }
        __syncthreads();
    }
}

// The chase on block 0 while blocks 1.. stream reads through another 1 GiB
// (each thread 4 independent 16-byte loads per step, ld.cg), until the
// chase is done: the latency a lone load sees under a given load.
__global__ void loaded_kernel(const uint32_t* a, const uint4* s, uint64_t s_n, int n, uint32_t* lat,
                              volatile int* done, unsigned long long* moved, uint64_t* span,
                              uint32_t* sink) {
    if (blockIdx.x == 0) {
        if (threadIdx.x != 0) return;
        uint64_t g0 = gtime();
        chase(a, 777, n, lat, sink);
        span[0] = gtime() - g0;
        __threadfence();
        *done = 1;
        return;
    }
    uint64_t tid = (uint64_t)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
    uint64_t nth = (uint64_t)(gridDim.x - 1) * blockDim.x;
    uint64_t i = tid;
    uint32_t acc = 0;
    unsigned long long cnt = 0;
    while (!*done) {
        uint4 v0, v1, v2, v3;
        const uint4* p = s + (i % s_n);
        asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v0.x), "=r"(v0.y), "=r"(v0.z), "=r"(v0.w) : "l"(p));
        asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v1.x), "=r"(v1.y), "=r"(v1.z), "=r"(v1.w) : "l"(s + ((i + nth) % s_n)));
        asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v2.x), "=r"(v2.y), "=r"(v2.z), "=r"(v2.w) : "l"(s + ((i + 2 * nth) % s_n)));
        asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v3.x), "=r"(v3.y), "=r"(v3.z), "=r"(v3.w) : "l"(s + ((i + 3 * nth) % s_n)));
        acc += v0.x + v1.y + v2.z + v3.w;
        i += 4 * nth;
        cnt += 4;
    }
    if (acc == 0x12345678) sink[1] = acc;
    atomicAdd(moved, cnt * 16);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: dlat cv|chase|clean|loaded|pair OUT.csv\n");
        return 2;
    }
    const char* mode = argv[1];
    FILE* f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    uint32_t* a;
    CK(cudaMalloc(&a, (size_t)LINES * 128));
    fill_chain<<<1024, 256>>>(a);
    CK(cudaGetLastError());
    uint32_t* sink;
    CK(cudaMalloc(&sink, 4096 * 4));
    // Something larger than the L2 written after the chain, so that the
    // first lines of the region are not in the L2 at the start.
    uint32_t* junk;
    CK(cudaMalloc(&junk, 256u << 20));
    CK(cudaMemset(junk, 1, 256u << 20));
    CK(cudaDeviceSynchronize());
    if (!strcmp(mode, "cv")) {
        const int n = 1 << 18;
        long long* at;
        uint32_t* lat;
        uint64_t* g;
        CK(cudaMalloc(&at, n * 8));
        CK(cudaMalloc(&lat, n * 4));
        CK(cudaMalloc(&g, 3 * 8));
        CK(cudaMemset(a, 0, 128));
        cv_kernel<<<1, 1>>>(a, 1024, at, lat, sink, g);  // warm-up
        cv_kernel<<<1, 1>>>(a, n, at, lat, sink, g);
        CK(cudaDeviceSynchronize());
        std::vector<long long> h_at(n);
        std::vector<uint32_t> h_lat(n);
        uint64_t h_g[3];
        CK(cudaMemcpy(h_at.data(), at, n * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h_lat.data(), lat, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h_g, g, 24, cudaMemcpyDeviceToHost));
        fprintf(f, "# globaltimer ns %llu, SM cycles %llu over the loop: %.1f MHz\n",
                (unsigned long long)(h_g[1] - h_g[0]), (unsigned long long)h_g[2],
                h_g[2] * 1e3 / (double)(h_g[1] - h_g[0]));
        fprintf(f, "i,issue_cycle,latency_cycles\n");
        for (int i = 0; i < n; i++) fprintf(f, "%d,%lld,%u\n", i, h_at[i], h_lat[i]);
    } else if (!strcmp(mode, "chase") || !strcmp(mode, "clean")) {
        const int n = 1 << 17;
        if (!strcmp(mode, "clean")) {
            uint32_t* other;
            CK(cudaMalloc(&other, 512u << 20));
            CK(cudaMemset(other, 0, 512u << 20));
            // Reading 512 MiB replaces every dirty line (the memsets') with a clean one.
            read_all<<<1056, 512>>>(other, (512u << 20) / 4, sink);
            read_all<<<1056, 512>>>(other, (512u << 20) / 4, sink);
            CK(cudaDeviceSynchronize());
        }
        uint32_t* lat;
        CK(cudaMalloc(&lat, n * 4));
        chase_kernel<<<1, 1>>>(a, n, lat, sink);
        CK(cudaDeviceSynchronize());
        std::vector<uint32_t> h(n);
        CK(cudaMemcpy(h.data(), lat, n * 4, cudaMemcpyDeviceToHost));
        fprintf(f, "i,latency_cycles\n");
        for (int i = 0; i < n; i++) fprintf(f, "%d,%u\n", i, h[i]);
    } else if (!strcmp(mode, "loaded")) {
        // Streaming blocks beside the chase: 0 to 4 per SM.
        const int n = 1 << 14;
        const uint64_t s_bytes = 1ull << 30;
        uint4* st;
        CK(cudaMalloc(&st, s_bytes));
        CK(cudaMemset(st, 0, s_bytes));
        uint32_t* lat;
        int* done;
        unsigned long long* moved;
        uint64_t* span;
        CK(cudaMalloc(&lat, n * 4));
        CK(cudaMalloc(&done, 4));
        CK(cudaMalloc(&moved, 8));
        CK(cudaMalloc(&span, 8));
        std::vector<uint32_t> h(n);
        fprintf(f, "streaming_blocks,stream_gbps,i,latency_cycles\n");
        for (int b : {0, 33, 66, 132, 264, 528}) {
            CK(cudaMemset(done, 0, 4));
            CK(cudaMemset(moved, 0, 8));
            loaded_kernel<<<1 + b, 256>>>(a, st, s_bytes / 16, n, lat, done, moved, span, sink);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            unsigned long long hm;
            uint64_t hs;
            CK(cudaMemcpy(&hm, moved, 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&hs, span, 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h.data(), lat, n * 4, cudaMemcpyDeviceToHost));
            double gbps = hs ? hm / (double)hs : 0.0;
            for (int i = 0; i < n; i++) fprintf(f, "%d,%.1f,%d,%u\n", b, gbps, i, h[i]);
        }
    } else if (!strcmp(mode, "pair")) {
        const int trials = 1000;
        long long* out;
        CK(cudaMalloc(&out, (size_t)trials * 4 * 8));
        std::vector<long long> h((size_t)trials * 4);
        const char* names[] = {"alone", "other", "split", "same"};
        fprintf(f, "cache,case,trial,warp,issue_cycle,latency_cycles\n");
        for (int ca = 0; ca < 2; ca++)
            for (int m = 0; m < 4; m++) {
                // A fresh region state: the lines of the trials out of L2 (and L1).
                CK(cudaMemset(junk, m + 2, 256u << 20));
                if (ca)
                    pair_kernel<true><<<1, 64>>>(a, trials, m, out, sink);
                else
                    pair_kernel<false><<<1, 64>>>(a, trials, m, out, sink);
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(h.data(), out, h.size() * 8, cudaMemcpyDeviceToHost));
                for (int j = 0; j < trials; j++)
                    for (int w = 0; w < 2; w++)
                        fprintf(f, "%s,%s,%d,%d,%lld,%lld\n", ca ? "ca" : "cg", names[m], j, w,
                                h[((size_t)j * 2 + w) * 2], h[((size_t)j * 2 + w) * 2 + 1]);
            }
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    fclose(f);
    return 0;
}
