// Does an L2 slice serve the other partition's requests before its own SMs'?
//
// Build:  nvcc -O3 -arch=sm_90 -o xprio xprio.cu
// Run:    ./xprio OUTDIR
//
// tools/measure/lhome found the H200's two L2 partitions and that a line's
// home changes every 4 or 8 KiB. Here:
//  1. classify: one thread on SM 0 loads the first line of every 4 KiB page
//     of a 2 GiB buffer, the L2 emptied first (256 MiB of other data read),
//     twice; a page whose least latency is below NEAR_MAX cycles is homed in
//     SM 0's partition (call it P0), from there to FAR_MAX in the other (P1).
//     Then every SM loads the first lines of 64 P0 pages (the L2 emptied
//     before each SM), and the SMs split at the middle of the range of
//     their median latencies (P0's below).
//  2. probe: one warp on the second P0 SM loads, one at a time, 16 lines
//     of P0 pages that it has read once before (L2 hits in their home
//     slices, its own partition's), timing each with clock64, 1 ms after
//     GEN SMs began to stream reads of other P0 pages from DRAM
//     (ld.global.cg.v4, 8 blocks of 256 threads an SM, 4 loads in flight a
//     thread) for 8 ms by the global timer (nothing polls memory). GEN SMs
//     are n of P0's own SMs (local: their requests reach the home slices
//     from their own crossbar) or n of P1's (remote: their requests reach
//     the same slices over the fabric between the partitions). The
//     generators' bytes over their 8 ms give their rate.
//     The same with the GEN SMs storing (st.global.cg.v4) round and round
//     into 16 MiB of P0 pages that the L2 keeps: write traffic into the
//     home slices without DRAM reads.
//  If a slice took the fabric's requests before its own SMs', the probe's
//  hits would wait longer beside remote streams than beside local ones of
//  the same rate.
//
// Writes OUTDIR/pages.csv (page,lat0,lat1), OUTDIR/sms.csv (sm,median,part),
// OUTDIR/probe.csv (op,case,gen,n,rep,rate_gbps,span_ns,p10,p50,p90,p99,mean).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

const int NEAR_MAX = 650, FAR_MAX = 830;
const uint64_t PAGE = 4096;
const uint64_t GBYTES = 2ull << 30;
const uint64_t NPAGES = GBYTES / PAGE;
const int PROBE_LINES = 16;
const int PROBE_LOADS = 8192;
const long long GEN_NS = 8000000;         // 8 ms
const long long PROBE_DELAY_NS = 1000000; // 1 ms

__device__ __forceinline__ uint4 ld_cg4(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

__device__ __forceinline__ void st_cg4(uint4* p, uint4 v) {
    asm volatile("st.global.cg.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

// Lane 0 of the first block on SM `target` loads word offs[i] (in words) of
// `a` one at a time; latency of each to lat.
__global__ void walk(const uint32_t* a, const uint64_t* offs, int n, uint32_t target, int* claimed, uint32_t* lat,
                     uint32_t* sink) {
    if (threadIdx.x != 0 || smid() != target) return;
    if (atomicCAS(claimed, 0, 1) != 0) return;
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        long long t0 = clk();
        uint32_t x = ld_cg(a + offs[i] + v);
        sink[i & 1023] = x;
        long long t1 = clk();
        v = x;
        lat[i] = (uint32_t)(t1 - t0);
    }
}

// role[sm]: 1 probe, 2 generator, 0 idle. Nothing polls memory (a flag
// that every generator read would be a line hammered in one slice of the
// partition whose SMs read it): the generators run for GEN_NS by the
// global timer, and the probe (one block) loads its lines once, waits
// PROBE_DELAY_NS, then times PROBE_LOADS dependent loads over them, well
// inside the generators' time. Generators read (or write) their pages
// (gen_pages[0..gen_n), 4 KiB each, spread over the generator blocks)
// round and round.
__global__ void run(uint32_t* a, const uint8_t* role, const uint64_t* probe_offs, const uint64_t* gen_pages,
                    uint64_t gen_n, int gen_store, int gen_blocks_per_sm, const int* gen_rank, int* claimed,
                    uint32_t* lat, unsigned long long* moved, long long* span, uint32_t* sink) {
    __shared__ int mine, slot;
    uint32_t s = smid();
    if (role[s] == 1) {
        if (threadIdx.x >= 32) return;
        if (threadIdx.x == 0) mine = atomicCAS(&claimed[s], 0, 1) == 0;
        __syncwarp();
        if (!mine) return;
        if (threadIdx.x != 0) return;
        long long t_start = (long long)gtime();
        uint32_t v = 0;
        for (int i = 0; i < PROBE_LINES; i++) v += ld_cg(a + probe_offs[i]);
        v &= 0;
        while ((long long)gtime() - t_start < PROBE_DELAY_NS) {
        }
        long long g0 = (long long)gtime();
        for (int i = 0; i < PROBE_LOADS; i++) {
            long long t0 = clk();
            uint32_t x = ld_cg(a + probe_offs[i % PROBE_LINES] + v);
            sink[i & 1023] = x;
            long long t1 = clk();
            v = x;
            lat[i] = (uint32_t)(t1 - t0);
        }
        span[0] = (long long)gtime() - g0;
        span[1] = g0 - t_start;
        return;
    }
    if (role[s] != 2) return;
    // This block's rank among the generator blocks.
    if (threadIdx.x == 0) slot = atomicAdd(&claimed[s], 1);
    __syncthreads();
    if (slot >= gen_blocks_per_sm) return;
    int rank = gen_rank[s] * gen_blocks_per_sm + slot;
    unsigned long long bytes = 0;
    uint32_t acc = 0;
    const int per_page = PAGE / 16;  // uint4 per page
    uint64_t total = gen_n * per_page;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;  // large, any fixed step
    uint64_t i = ((uint64_t)rank * blockDim.x + threadIdx.x) * 4;
    long long t_start = (long long)gtime();
    while ((long long)gtime() - t_start < GEN_NS) {
        uint4 r[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            uint64_t j = (i + k) % total;
            uint4* p = (uint4*)(a + gen_pages[j / per_page] * (PAGE / 4)) + j % per_page;
            if (gen_store) {
                st_cg4(p, make_uint4(0, 0, 0, 0));
                r[k] = make_uint4(0, 0, 0, 0);
            } else {
                r[k] = ld_cg4(p);
            }
        }
#pragma unroll
        for (int k = 0; k < 4; k++) acc += r[k].x;
        bytes += 64;
        i += stride * 4;
    }
    if (acc == 0x12345678) sink[0] = acc;
    atomicAdd(moved, bytes);
}

static void pct(std::vector<uint32_t> v, double* out) {
    std::sort(v.begin(), v.end());
    double q[4] = {0.1, 0.5, 0.9, 0.99};
    for (int k = 0; k < 4; k++) out[k] = v[(size_t)(q[k] * (v.size() - 1))];
    double m = 0;
    for (auto x : v) m += x;
    out[4] = m / v.size();
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: xprio OUTDIR\n");
        return 2;
    }
    std::string out = argv[1];
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const uint64_t flush_n = (256ull << 20) / 4;
    uint32_t *a, *f, *lat, *sink;
    uint64_t *offs, *gpages, *probe_offs;
    int *claimed, *rank;
    uint8_t* role;
    unsigned long long* moved;
    long long* span;
    CK(cudaMalloc(&a, GBYTES));
    CK(cudaMemset(a, 0, GBYTES));
    CK(cudaMalloc(&f, flush_n * 4));
    CK(cudaMemset(f, 0, flush_n * 4));
    CK(cudaMalloc(&lat, NPAGES * 4));
    CK(cudaMalloc(&offs, NPAGES * 8));
    CK(cudaMalloc(&gpages, NPAGES * 8));
    CK(cudaMalloc(&probe_offs, PROBE_LINES * 8));
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&claimed, 256 * 4));
    CK(cudaMalloc(&rank, 256 * 4));
    CK(cudaMalloc(&role, 256));
    CK(cudaMalloc(&moved, 8));
    CK(cudaMalloc(&span, 16));
    auto flush = [&]() { read_all<<<sms * 4, 256>>>(f, flush_n, sink); };
    auto walk_from = [&](int sm, const std::vector<uint64_t>& o, std::vector<uint32_t>& h) {
        CK(cudaMemcpy(offs, o.data(), o.size() * 8, cudaMemcpyHostToDevice));
        flush();
        CK(cudaMemset(claimed, 0, 4));
        walk<<<sms * 8, 32>>>(a, offs, (int)o.size(), sm, claimed, lat, sink);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        h.resize(o.size());
        CK(cudaMemcpy(h.data(), lat, o.size() * 4, cudaMemcpyDeviceToHost));
    };
    // 1. Pages by home, from SM 0.
    std::vector<uint64_t> o(NPAGES);
    for (uint64_t p = 0; p < NPAGES; p++) o[p] = p * (PAGE / 4);
    std::vector<uint32_t> h0, h1;
    walk_from(0, o, h0);
    walk_from(0, o, h1);
    FILE* fp = fopen((out + "/pages.csv").c_str(), "w");
    fprintf(fp, "page,lat0,lat1\n");
    std::vector<uint64_t> p0;
    for (uint64_t p = 0; p < NPAGES; p++) {
        fprintf(fp, "%llu,%u,%u\n", (unsigned long long)p, h0[p], h1[p]);
        if (std::min(h0[p], h1[p]) < NEAR_MAX) p0.push_back(p);
    }
    fclose(fp);
    fprintf(stderr, "P0 pages: %zu of %llu\n", p0.size(), (unsigned long long)NPAGES);
    // SMs by partition: the first lines of 16 P0 pages.
    // (The median of 64 lines from each SM; the SMs split where the
    // medians' range is halved: translation misses shift some lines on every SM.)
    std::vector<uint64_t> so;
    for (int k = 0; k < 64; k++) so.push_back(p0[1000 + 997 * k] * (PAGE / 4) + 32 * (k % 32));
    std::vector<uint32_t> med(sms);
    for (int s = 0; s < sms; s++) {
        std::vector<uint32_t> h;
        walk_from(s, so, h);
        std::sort(h.begin(), h.end());
        med[s] = h[32];
    }
    std::vector<uint32_t> sorted_med = med;
    std::sort(sorted_med.begin(), sorted_med.end());
    uint32_t cut = (sorted_med.front() + sorted_med.back()) / 2;
    FILE* fs = fopen((out + "/sms.csv").c_str(), "w");
    fprintf(fs, "sm,median,part\n");
    std::vector<int> P0, P1;
    for (int s = 0; s < sms; s++) {
        int part = med[s] < cut ? 0 : 1;
        (part ? P1 : P0).push_back(s);
        fprintf(fs, "%d,%u,%d\n", s, med[s], part);
    }
    fclose(fs);
    fprintf(stderr, "P0 SMs %zu, P1 SMs %zu\n", P0.size(), P1.size());
    // Probe lines: the first line of 64 P0 pages; generator pages: the P0
    // pages from the 4096th on (never the probe's).
    std::vector<uint64_t> po;
    for (int k = 0; k < PROBE_LINES; k++) po.push_back(p0[7 * k] * (PAGE / 4) + 32 * (k % 32));
    // (16 lines of 16 pages: the probe comes back to each within some 16
    // loads, well inside the time the streams take to turn the L2 over.)
    CK(cudaMemcpy(probe_offs, po.data(), PROBE_LINES * 8, cudaMemcpyHostToDevice));
    std::vector<uint64_t> gp(p0.begin() + 8192, p0.end());
    std::vector<uint64_t> spg(p0.begin() + 4096, p0.begin() + 8192);
    uint64_t* spages;
    CK(cudaMalloc(&spages, spg.size() * 8));
    CK(cudaMemcpy(gpages, gp.data(), gp.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(spages, spg.data(), spg.size() * 8, cudaMemcpyHostToDevice));
    int probe_sm = P0[1];
    FILE* fo = fopen((out + "/probe.csv").c_str(), "w");
    fprintf(fo, "op,case,gen,n,rep,rate_gbps,span_ns,p10,p50,p90,p99,mean\n");
    std::vector<int> ns = {0, 8, 16, 32, 48, 64};
    for (int rep = 0; rep < 3; rep++) {
      for (int st = 0; st < 2; st++) {  // 0: read streams from DRAM, 1: stores into 16 MiB the L2 keeps
        for (int gen = 0; gen < 2; gen++) {  // 0 local (P0 SMs), 1 remote (P1 SMs)
            for (int n : ns) {
                std::vector<int> g;
                const std::vector<int>& pool = gen == 0 ? P0 : P1;
                for (int s : pool) {
                    if ((int)g.size() == n) break;
                    if (s != probe_sm) g.push_back(s);
                }
                if ((int)g.size() < n) continue;
                std::vector<uint8_t> r(256, 0);
                std::vector<int> rk(256, 0);
                r[probe_sm] = 1;
                for (size_t k = 0; k < g.size(); k++) r[g[k]] = 2, rk[g[k]] = (int)k;
                CK(cudaMemcpy(role, r.data(), 256, cudaMemcpyHostToDevice));
                CK(cudaMemcpy(rank, rk.data(), 256 * 4, cudaMemcpyHostToDevice));
                CK(cudaMemset(claimed, 0, 256 * 4));
                CK(cudaMemset(moved, 0, 8));
                flush();
                run<<<sms * 8, 256>>>(a, role, probe_offs, st ? spages : gpages, st ? spg.size() : gp.size(), st, 8,
                                      rank, claimed, lat, moved, span, sink);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                std::vector<uint32_t> h(PROBE_LOADS);
                CK(cudaMemcpy(h.data(), lat, PROBE_LOADS * 4, cudaMemcpyDeviceToHost));
                unsigned long long mv = 0;
                long long sp = 0;
                CK(cudaMemcpy(&mv, moved, 8, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(&sp, span, 8, cudaMemcpyDeviceToHost));
                double q[5];
                pct(h, q);
                fprintf(fo, "%s,%s,%d,%d,%d,%.1f,%lld,%.0f,%.0f,%.0f,%.0f,%.1f\n", st ? "store" : "read",
                        gen ? "remote" : "local", gen, n, rep,
                        mv / (double)GEN_NS, sp, q[0], q[1], q[2], q[3], q[4]);
                if (sp + PROBE_DELAY_NS > GEN_NS) fprintf(stderr, "probe outlasted the generators: %lld ns\n", sp);
                fflush(fo);
            }
        }
      }
    }
    fclose(fo);
    return 0;
}
