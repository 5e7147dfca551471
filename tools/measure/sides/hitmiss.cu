// Do L2-resident loads wait for the L2's misses, or only for its
// write-backs? Readers of an L2-resident source beside, on other SMs,
// loaders that read 1 GiB from DRAM (misses, no write-backs) or writers
// that store 1 GiB (write-backs, no reads).
//
// Build:  nvcc -O3 -arch=sm_90 -o hitmiss hitmiss.cu
// Run:    ./hitmiss OUT.csv
//
// One block of 1024 threads per SM (120 KiB of shared memory holds it
// there); even blocks hold the readers, odd blocks the others. Reader warps
// (16 per SM) load 128 consecutive bytes per iteration (ld.global.cg, the
// L2 only) from a source of 2 or 8 MiB, 4096 iterations, one load in
// flight, each warp always the same lines; lane 0 times each iteration
// from before the load to after the test of the sum that needs it, in SM
// cycles. Loader warps (4, 16 or 32 per SM) load four independent 128-byte
// pieces per iteration from 1 GiB (ld.global.cg), writer warps store 128
// bytes per iteration to 1 GiB; both run until the last reader is done.
// Per case a warm-up launch, then three launches, each a row: the readers'
// rate and the others' rate over the readers' span, the readers' mean
// latency and their latencies in 50-cycle bins (the last open).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

constexpr int BINS = 40;

struct Counters {
    unsigned long long read_bytes, other_bytes, lat_sum, lat_n, t0, t1;
    unsigned int finished;
    unsigned int hist[BINS];
};

__global__ void hitmiss_kernel(const float* s, float* d, uint64_t smask, uint64_t dmask, int iters, int ow,
                               int load, volatile int* done, Counters* c, float* sink) {
    extern __shared__ unsigned int sh[];  // BINS bins; the rest only holds the SM
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32, rw = 16;
    if (threadIdx.x < BINS) sh[threadIdx.x] = 0;
    if (threadIdx.x == 0) atomicMin(&c->t0, (unsigned long long)gtime());
    __syncthreads();
    const int b = blockIdx.x, nb = gridDim.x / 2, bpos = b / 2;
    if (b % 2 == 0 && w < rw) {
        const uint64_t rank = (uint64_t)bpos * rw + w;
        const uint64_t step = (uint64_t)nb * rw * 32;
        uint64_t base = rank * 32 + lane;
        float acc = 0.f;
        unsigned long long ls = 0;
        for (int it = 0; it < iters; it++) {
            long long t0 = clk();
            acc += __ldcg(s + (base & smask));
            if (acc == 1234.5f) sink[rank & 1023] = acc;
            long long t1 = clk();
            ls += t1 - t0;
            if (lane == 0) {
                long long bin = (t1 - t0) / 50;
                atomicAdd(&sh[bin < BINS - 1 ? bin : BINS - 1], 1u);
            }
            base += step;
        }
        if (lane == 0) {
            atomicAdd(&c->lat_sum, ls);
            atomicAdd(&c->lat_n, (unsigned long long)iters);
            atomicAdd(&c->read_bytes, (unsigned long long)iters * 128);
            __threadfence();
            if (atomicAdd(&c->finished, 1u) == (unsigned)(nb * rw) - 1) {
                c->t1 = gtime();
                __threadfence();
                for (int k = 0; k < gridDim.x; k++) done[k * 32] = 1;
            }
        }
    } else if (b % 2 == 1 && w < ow) {
        const uint64_t rank = (uint64_t)bpos * ow + w;
        const uint64_t step = (uint64_t)nb * ow * 32;
        uint64_t base = rank * 32 + lane;
        unsigned long long n = 0;
        int stop = 0;
        if (load) {
            float acc = 0.f;
            while (!stop) {
                float v0 = __ldcg(d + (base & dmask));
                float v1 = __ldcg(d + ((base + step) & dmask));
                float v2 = __ldcg(d + ((base + 2 * step) & dmask));
                float v3 = __ldcg(d + ((base + 3 * step) & dmask));
                acc += v0 + v1 + v2 + v3;
                base += 4 * step;
                n += 4;
                if ((n & 15) == 0) stop = done[b * 32];
            }
            if (acc == 1234.5f) sink[rank & 1023] = acc;
        } else {
            while (!stop) {
                d[base & dmask] = 1.5f;
                base += step;
                n++;
                if ((n & 15) == 0) stop = done[b * 32];
            }
        }
        if (lane == 0) atomicAdd(&c->other_bytes, n * 128);
    }
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&c->hist[threadIdx.x], sh[threadIdx.x]);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hitmiss OUT.csv\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    const uint64_t big = 1ull << 30;
    float *s, *d, *sink;
    int* done;
    Counters* c;
    CK(cudaMalloc(&s, 8ull << 20));
    CK(cudaMalloc(&d, big));
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&done, 1024 * 128));
    CK(cudaMalloc(&c, sizeof(Counters)));
    CK(cudaMemset(s, 0, 8ull << 20));
    CK(cudaMemset(d, 0, big));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const int smem = 120 << 10;
    CK(cudaFuncSetAttribute((const void*)hitmiss_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    struct Case {
        int s_mib, ow, load;
    };
    // Case k's measured launches are 4k+1..4k+3 (4k warms).
    std::vector<Case> cases;
    for (int sm : {8, 2}) {
        cases.push_back({sm, 0, 0});                                  // readers alone
        for (int ow : {4, 16, 32}) cases.push_back({sm, ow, 1});      // beside loaders (DRAM reads)
        for (int ow : {4, 16, 32}) cases.push_back({sm, ow, 0});      // beside writers (write-backs)
    }
    const int iters = 4096;
    fprintf(f, "case,s_mib,other_warps,other_op,rep,read_gbps,other_gbps,latency_cycles");
    for (int k = 0; k < BINS; k++) fprintf(f, ",b%d", k * 50);
    fprintf(f, "\n");
    for (size_t i = 0; i < cases.size(); i++) {
        const Case& k = cases[i];
        const char* op = k.ow == 0 ? "none" : k.load ? "load" : "store";
        for (int rep = 0; rep < 4; rep++) {
            Counters h = {};
            h.t0 = ~0ull;
            CK(cudaMemcpy(c, &h, sizeof h, cudaMemcpyHostToDevice));
            CK(cudaMemset(done, 0, 1024 * 128));
            hitmiss_kernel<<<sms, 1024, smem>>>(s, d, ((uint64_t)k.s_mib << 20) / 4 - 1, big / 4 - 1, iters, k.ow,
                                                k.load, done, c, sink);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
            if (rep == 0) continue;  // warms the caches
            const double ns = (double)(h.t1 - h.t0);
            fprintf(f, "%zu,%d,%d,%s,%d,%.1f,%.1f,%.1f", i, k.s_mib, k.ow, op, rep, h.read_bytes / ns,
                    h.other_bytes / ns, h.lat_sum / (double)h.lat_n);
            for (int b = 0; b < BINS; b++) fprintf(f, ",%u", h.hist[b]);
            fprintf(f, "\n");
            fflush(f);
            printf("case %2zu S %d MiB others %2d %-5s: read %7.1f GB/s others %7.1f GB/s lat %6.1f\n", i, k.s_mib,
                   k.ow, op, h.read_bytes / ns, h.other_bytes / ns, h.lat_sum / (double)h.lat_n);
        }
    }
    fclose(f);
    return 0;
}
