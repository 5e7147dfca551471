// Do an SM's L2 hits wait for its own misses, and is the order kept per
// SM or per SM sub-partition (warp scheduler)?
//
// Build:  nvcc -O3 -arch=sm_90 -o mixed mixed.cu
// Run:    ./mixed OUT.csv [sweep]   (sweep: the cases of the `sweep` list below)
//
// One block of 1024 threads per SM on every SM. In each block, hit warps
// (a mask of warp numbers) load 128 consecutive bytes per iteration
// (ld.global.cg, the L2 only) from a 2 MiB source that stays resident in
// the L2, and miss warps (another mask) load 128 bytes per iteration from
// a 1 GiB stream that the L2 does not hold; one load in flight per warp,
// 4096 iterations each. A warp's scheduler is its number mod 4, so a mask
// chooses which sub-partitions hold hits and which misses. Lane 0 times
// each iteration, from before the load to after the test of the sum that
// needs it, in SM cycles. Per case a warm-up launch, then three launches,
// each a row: the hit warps' and miss warps' mean latency and rate (over
// the kernel's span) and the hit warps' latencies in 50-cycle bins.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

constexpr int BINS = 40;

struct Counters {
    unsigned long long hit_lat, hit_n, miss_lat, miss_n, t0, t1;
    unsigned int hist[BINS];
};

__global__ void mixed_kernel(const float* s, const float* m, uint64_t smask, uint64_t mmask, int iters,
                             unsigned hits, unsigned misses, Counters* c, float* sink) {
    extern __shared__ unsigned int sh[];
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x < BINS) sh[threadIdx.x] = 0;
    if (threadIdx.x == 0) atomicMin(&c->t0, (unsigned long long)gtime());
    __syncthreads();
    const bool hit = hits >> w & 1, miss = misses >> w & 1;
    if (hit || miss) {
        const unsigned mask = hit ? hits : misses;
        const int per = __popc(mask), pos = __popc(mask & ((1u << w) - 1));
        const uint64_t rank = (uint64_t)blockIdx.x * per + pos;
        const uint64_t step = (uint64_t)gridDim.x * per * 32;
        const float* src = hit ? s : m;
        const uint64_t msk = hit ? smask : mmask;
        uint64_t base = rank * 32 + lane;
        float acc = 0.f;
        unsigned long long ls = 0;
        for (int it = 0; it < iters; it++) {
            long long t0 = clk();
            acc += __ldcg(src + (base & msk));
            if (acc == 1234.5f) sink[rank & 1023] = acc;
            long long t1 = clk();
            ls += t1 - t0;
            if (hit && lane == 0) {
                long long bin = (t1 - t0) / 50;
                atomicAdd(&sh[bin < BINS - 1 ? bin : BINS - 1], 1u);
            }
            base += step;
        }
        if (lane == 0) {
            atomicAdd(hit ? &c->hit_lat : &c->miss_lat, ls);
            atomicAdd(hit ? &c->hit_n : &c->miss_n, (unsigned long long)iters);
        }
    }
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&c->hist[threadIdx.x], sh[threadIdx.x]);
    if (threadIdx.x == 0) atomicMax(&c->t1, (unsigned long long)gtime());
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mixed OUT.csv [sweep]\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    const uint64_t big = 1ull << 30, small = 2ull << 20;
    float *s, *m, *sink;
    Counters* c;
    CK(cudaMalloc(&s, small));
    CK(cudaMalloc(&m, big));
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&c, sizeof(Counters)));
    CK(cudaMemset(s, 0, small));
    CK(cudaMemset(m, 0, big));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const int smem = 120 << 10;
    CK(cudaFuncSetAttribute((const void*)mixed_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    struct Case {
        std::string name;
        unsigned hits, misses;
    };
    // Warps 4k (scheduler 0) and the rest (schedulers 1-3) of warps 0-15.
    const unsigned s0 = 0x1111, s123 = 0xEEEE, s0hi = 0x11110000, s123hi = 0xEEEE0000;
    std::vector<Case> cases = {
        {"hits alone, scheduler 0", s0, 0},
        {"hits alone, schedulers 1-3", s123, 0},
        {"misses alone, scheduler 0", 0, s0hi},
        {"misses alone, schedulers 1-3", 0, s123hi},
        {"hits 0, misses 0 (same scheduler)", s0, s0hi},
        {"hits 1-3, misses 1-3 (same schedulers)", s123, s123hi},
        {"hits 1-3, misses 0 (other scheduler)", s123, s0hi},
        {"hits 0, misses 1-3 (other schedulers)", s0, s123hi},
    };
    // `sweep`: how the hits' wait grows with the miss warps beside them.
    // Hits on warps 0 and 4 (scheduler 0) beside 1, 2, 4 or 6 miss warps
    // on scheduler 0 (warps 8, 12, ...), on scheduler 1 (warps 1, 5, ...)
    // or spread over schedulers 1-3 (3, 6, 12 or 18 warps); hits on the 12
    // warps of schedulers 1-3 among 0-15 beside 1, 2 or 4 miss warps on
    // scheduler 0 (16, 20, 24, 28) or 3, 6 or 12 on schedulers 1-3 (17, 18, ...).
    if (argc > 2 && std::string(argv[2]) == "sweep") {
        auto pick = [](int first, int stride, int n) {
            unsigned m = 0;
            for (int k = 0; k < n; k++) m |= 1u << (first + k * stride);
            return m;
        };
        auto spread = [](int first, int n) {  // n warps of schedulers 1-3 from warp `first`
            unsigned m = 0;
            for (int w = first, k = 0; k < n && w < 32; w++)
                if (w % 4 != 0) m |= 1u << w, k++;
            return m;
        };
        const unsigned h2 = 0x11;
        cases = {{"2 hits alone", h2, 0}};
        for (int n : {1, 2, 4, 6}) cases.push_back({"2 hits, misses on scheduler 0", h2, pick(8, 4, n)});
        for (int n : {1, 2, 4, 6}) cases.push_back({"2 hits, misses on scheduler 1", h2, pick(1, 4, n)});
        for (int n : {3, 6, 12, 18}) cases.push_back({"2 hits, misses on schedulers 1-3", h2, spread(1, n)});
        for (int n : {1, 2, 4}) cases.push_back({"12 hits, misses on scheduler 0", s123, pick(16, 4, n)});
        for (int n : {3, 6, 12}) cases.push_back({"12 hits, misses on schedulers 1-3", s123, spread(17, n)});
    }
    const int iters = 4096;
    fprintf(f, "case,name,hit_warps,miss_warps,rep,hit_latency_cycles,miss_latency_cycles,hit_gbps,miss_gbps");
    for (int k = 0; k < BINS; k++) fprintf(f, ",b%d", k * 50);
    fprintf(f, "\n");
    for (size_t i = 0; i < cases.size(); i++) {
        const Case& k = cases[i];
        for (int rep = 0; rep < 4; rep++) {
            Counters h = {};
            h.t0 = ~0ull;
            CK(cudaMemcpy(c, &h, sizeof h, cudaMemcpyHostToDevice));
            mixed_kernel<<<sms, 1024, smem>>>(s, m, small / 4 - 1, big / 4 - 1, iters, k.hits, k.misses, c, sink);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
            if (rep == 0) continue;  // warms the caches
            const double ns = (double)(h.t1 - h.t0);
            const double hl = h.hit_n ? h.hit_lat / (double)h.hit_n : 0, ml = h.miss_n ? h.miss_lat / (double)h.miss_n : 0;
            fprintf(f, "%zu,\"%s\",%08x,%08x,%d,%.1f,%.1f,%.1f,%.1f", i, k.name.c_str(), k.hits, k.misses, rep, hl, ml,
                    h.hit_n * 128 / ns, h.miss_n * 128 / ns);
            for (int b = 0; b < BINS; b++) fprintf(f, ",%u", h.hist[b]);
            fprintf(f, "\n");
            fflush(f);
            printf("case %zu %-40s %08x %08x hits %6.1f cycles misses %6.1f cycles (%.1f / %.1f GB/s)\n", i,
                   k.name.c_str(), k.hits, k.misses, hl, ml,
                   h.hit_n * 128 / ns, h.miss_n * 128 / ns);
        }
    }
    fclose(f);
    return 0;
}
