// A warp's own costs on the H200: the latency of reading a special register
// (S2R of the thread or block index), of a dependent integer add, and how
// long an SM's block slot stays empty between a block's exit and the next
// block's first instruction.
//
// Build:  nvcc -O3 -arch=sm_90 -o wlife wlife.cu
// Run:    ./wlife sreg        at every warp's start (4 waves of 256-thread blocks):
//                             clock64 around "S2R of the thread index; an add
//                             that needs it", then the same for the block index
//         ./wlife blocks DIR  grids of blocks that spin a fixed number of cycles
//                             between two barriers; warp 0 records its SM, its
//                             entry (first instruction) and its exit (after the
//                             second barrier) in SM cycles; writes DIR/blocks.csv
//                             (per case) and DIR/blocks_raw.csv (256-thread blocks,
//                             2000-cycle spin)
//
// Per SM, blocks are matched first in, first out: the k-th block to enter
// after the first wave fills the slot of the k-th block to exit. The gap is
// that entry minus that exit: the time a slot stands empty.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

__device__ __forceinline__ unsigned sreg_tid() {
    unsigned v;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v)::"memory");
    return v;
}

__device__ __forceinline__ unsigned sreg_ctaid() {
    unsigned v;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(v)::"memory");
    return v;
}

__device__ __forceinline__ unsigned add1(unsigned x) {
    unsigned v;
    asm volatile("add.u32 %0, %1, 1;" : "=r"(v) : "r"(x) : "memory");
    return v;
}

// At each warp's start: clock64, S2R of the thread index and an add that
// needs it, clock64, S2R of the block index and an add, clock64. The adds
// wait for their S2R to complete and the clock reads issue in order after
// them, so each difference is an S2R's latency plus an add's issue. (Read in
// a loop instead, the compiler hoists the S2R.) out[3 * warp + k].
__global__ void k_start(long long *out, unsigned *sink) {
    long long t0 = clk();
    unsigned u = add1(sreg_tid());
    long long t1 = clk();
    unsigned w = add1(sreg_ctaid());
    long long t2 = clk();
    if (threadIdx.x % 32 == 0) {
        size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
        out[3 * warp] = t1 - t0;
        out[3 * warp + 1] = t2 - t1;
        out[3 * warp + 2] = u + w;
    }
    if (u + w == 0xffffffffu) sink[0] = 1;
}

__global__ void k_blocks(long long *rec, long long spin) {
    long long entry = clk();
    __syncthreads();
    long long t0 = clk();
    while (clk() - t0 < spin) {
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        long long *r = rec + 3 * (size_t)blockIdx.x;
        r[0] = smid;
        r[1] = entry;
        r[2] = clk();
    }
}

static double pct(std::vector<long long> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return (double)v[(size_t)(p * (v.size() - 1))];
}

static int sreg() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int blocks = sms * 8 * 4, threads = 256, warps = blocks * threads / 32;
    long long *d;
    unsigned *sink;
    CK(cudaMalloc(&d, 3 * (size_t)warps * sizeof(long long)));
    CK(cudaMalloc(&sink, sizeof(unsigned)));
    std::vector<long long> h(3 * (size_t)warps);
    for (int rep = 0; rep < 2; rep++) {  // the second launch finds the instructions cached
        k_start<<<blocks, threads>>>(d, sink);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    printf("what,warps,min,p10,median,p90,max,mean\n");
    const char *names[2] = {"s2r_tid_then_add", "s2r_ctaid_then_add"};
    for (int k = 0; k < 2; k++) {
        std::vector<long long> v;
        double mean = 0;
        for (int i = 0; i < warps; i++) {
            v.push_back(h[3 * (size_t)i + k]);
            mean += h[3 * (size_t)i + k];
        }
        printf("%s,%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.1f\n", names[k], warps, pct(v, 0), pct(v, 0.1), pct(v, 0.5),
               pct(v, 0.9), pct(v, 1), mean / warps);
    }
    CK(cudaFree(d));
    CK(cudaFree(sink));
    return 0;
}

static int blocks(const char *dir) {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::string p1 = std::string(dir) + "/blocks.csv", p2 = std::string(dir) + "/blocks_raw.csv";
    FILE *fs = fopen(p1.c_str(), "w"), *fr = fopen(p2.c_str(), "w");
    if (!fs || !fr) {
        fprintf(stderr, "cannot write to %s\n", dir);
        return 1;
    }
    fprintf(fs,
            "threads,spin,blocks,sms,first_wave_per_sm,life_median,gap_p10,gap_median,gap_p90,gap_mean,"
            "first_wave_entry_step_median,kernel_ms\n");
    fprintf(fr, "block,sm,entry,exit\n");
    for (int threads : {64, 256, 1024}) {
        int per_sm = std::min(32, 2048 / threads);
        int nb = sms * per_sm * 20;
        long long *d;
        CK(cudaMalloc(&d, 3 * (size_t)nb * sizeof(long long)));
        std::vector<long long> h(3 * (size_t)nb);
        for (long long spin : {0ll, 2000ll, 20000ll}) {
            cudaEvent_t a, b;
            CK(cudaEventCreate(&a));
            CK(cudaEventCreate(&b));
            k_blocks<<<nb, threads>>>(d, spin);  // warm-up
            CK(cudaGetLastError());
            CK(cudaEventRecord(a));
            k_blocks<<<nb, threads>>>(d, spin);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            std::map<long long, std::vector<std::pair<long long, long long>>> per;
            for (int i = 0; i < nb; i++) per[h[3 * i]].push_back({h[3 * i + 1], h[3 * i + 2]});
            std::vector<long long> gaps, lives, steps;
            double wave = 0;
            for (auto &kv : per) {
                std::vector<long long> s, e;
                for (auto &p : kv.second) {
                    s.push_back(p.first);
                    e.push_back(p.second);
                    lives.push_back(p.second - p.first);
                }
                std::sort(s.begin(), s.end());
                std::sort(e.begin(), e.end());
                size_t K = 0;
                while (K < s.size() && s[K] < e[0]) K++;
                wave += K;
                for (size_t i = 1; i < K; i++) steps.push_back(s[i] - s[i - 1]);
                for (size_t j = 0; K + j < s.size(); j++) gaps.push_back(s[K + j] - e[j]);
            }
            double mean = 0;
            for (auto g : gaps) mean += g;
            mean /= gaps.empty() ? 1 : gaps.size();
            fprintf(fs, "%d,%lld,%d,%zu,%.2f,%.0f,%.0f,%.0f,%.0f,%.1f,%.0f,%.4f\n", threads, spin, nb, per.size(),
                    wave / per.size(), pct(lives, 0.5), pct(gaps, 0.1), pct(gaps, 0.5), pct(gaps, 0.9), mean,
                    pct(steps, 0.5), ms);
            if (threads == 256 && spin == 2000)
                for (int i = 0; i < nb; i++) fprintf(fr, "%d,%lld,%lld,%lld\n", i, h[3 * i], h[3 * i + 1], h[3 * i + 2]);
            CK(cudaEventDestroy(a));
            CK(cudaEventDestroy(b));
        }
        CK(cudaFree(d));
    }
    fclose(fs);
    fclose(fr);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "sreg") == 0) return sreg();
    if (argc > 2 && strcmp(argv[1], "blocks") == 0) return blocks(argv[2]);
    fprintf(stderr, "usage: wlife sreg | wlife blocks DIR\n");
    return 2;
}
