// Which side of a copy makes its loads wait: loads from warps that also
// store (a copy), beside writer warps on the same SMs, or beside writer
// warps on other SMs; with the destination resident in the L2 (no
// write-backs) or 1 GiB (the L2 writes back to DRAM).
//
// Build:  nvcc -O3 -arch=sm_90 -o sides sides.cu
// Run:    ./sides OUT.csv
//
// One block of 1024 threads per SM (120 KiB of shared memory holds it
// there). Reader warps load 128 consecutive bytes per iteration
// (ld.global.cg, the L2 only) from a source of 8 MiB (resident in the L2)
// or 1 GiB, 4096 iterations, one load in flight; lane 0 times each
// iteration from before the load to after the instruction that needs its
// data (the store of a copy, or the test of the sum), in SM cycles. Writer
// warps store 128 consecutive bytes per iteration (no loads) to a
// destination of 4 MiB or 1 GiB until the last reader is done. With `sep`
// even blocks hold only readers and odd blocks only writers. Per case a
// warm-up launch, then three launches, each a row: the read and write
// rates over the readers' span (writers' bytes until they see the end:
// at most 16 iterations more per warp), the readers' mean latency and
// their latencies in 50-cycle bins (the last open).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

constexpr int BINS = 40;

struct Counters {
    unsigned long long read_bytes, write_bytes, lat_sum, lat_n, t0, t1;
    unsigned int finished;
    unsigned int hist[BINS];
};

__global__ void sides_kernel(const float* s, float* d, uint64_t smask, uint64_t dmask, int iters, int rw, int ww,
                             int sep, int copy, volatile int* done, Counters* c, float* sink) {
    extern __shared__ unsigned int sh[];  // BINS bins; the rest only holds the SM
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x < BINS) sh[threadIdx.x] = 0;
    if (threadIdx.x == 0) atomicMin(&c->t0, (unsigned long long)gtime());
    __syncthreads();
    const int b = blockIdx.x;
    const int nb = sep ? gridDim.x / 2 : gridDim.x;  // blocks of each role
    const int bpos = sep ? b / 2 : b;                // this block's rank among them
    const bool reader = (!sep || b % 2 == 0) && w < rw;
    const int wfirst = sep ? 0 : rw;
    const bool writer = (!sep || b % 2 == 1) && w >= wfirst && w < wfirst + ww;
    if (reader) {
        const uint64_t rank = (uint64_t)bpos * rw + w;
        const uint64_t step = (uint64_t)nb * rw * 32;
        uint64_t base = rank * 32 + lane;
        float acc = 0.f;
        unsigned long long ls = 0;
        for (int it = 0; it < iters; it++) {
            long long t0 = clk();
            float v = __ldcg(s + (base & smask));
            if (copy) {
                d[base & dmask] = v + 1.f;
            } else {
                acc += v;
                if (acc == 1234.5f) sink[rank & 1023] = acc;
            }
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
            if (copy) atomicAdd(&c->write_bytes, (unsigned long long)iters * 128);
            __threadfence();
            if (atomicAdd(&c->finished, 1u) == (unsigned)(nb * rw) - 1) {
                c->t1 = gtime();
                __threadfence();
                for (int k = 0; k < gridDim.x; k++) done[k * 32] = 1;
            }
        }
    } else if (writer) {
        const uint64_t rank = (uint64_t)bpos * ww + (w - wfirst);
        const uint64_t step = (uint64_t)nb * ww * 32;
        uint64_t base = rank * 32 + lane;
        unsigned long long n = 0;
        int stop = 0;
        while (!stop) {
            d[base & dmask] = 1.5f;
            base += step;
            n++;
            if ((n & 15) == 0) stop = done[b * 32];
        }
        if (lane == 0) atomicAdd(&c->write_bytes, n * 128);
    }
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&c->hist[threadIdx.x], sh[threadIdx.x]);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sides OUT.csv\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    const uint64_t big = 1ull << 30, src_l2 = 8ull << 20, dst_l2 = 4ull << 20;
    float *s, *d, *sink;
    int* done;
    Counters* c;
    CK(cudaMalloc(&s, big));
    CK(cudaMalloc(&d, big));
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&done, 1024 * 128));
    CK(cudaMalloc(&c, sizeof(Counters)));
    CK(cudaMemset(s, 0, big));
    CK(cudaMemset(d, 0, big));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const int smem = 120 << 10;
    CK(cudaFuncSetAttribute((const void*)sides_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    struct Case {
        int sep, copy, rw, ww;
        uint64_t s_bytes, d_bytes;
    };
    std::vector<Case> cases;
    for (uint64_t sb : {src_l2, big}) {
        cases.push_back({0, 0, 16, 0, sb, dst_l2});  // reads alone
        for (uint64_t db : {dst_l2, big}) {
            cases.push_back({0, 1, 16, 0, sb, db});                                 // a copy: the readers store
            for (int ww : {4, 16}) cases.push_back({0, 0, 16, ww, sb, db});         // writers beside, same SMs
            for (int ww : {4, 16, 32}) cases.push_back({1, 0, 16, ww, sb, db});     // writers on other SMs
        }
    }
    const int iters = 4096;
    fprintf(f, "case,sep,copy,read_warps,write_warps,s_mib,d_mib,rep,read_gbps,write_gbps,latency_cycles");
    for (int k = 0; k < BINS; k++) fprintf(f, ",b%d", k * 50);
    fprintf(f, "\n");
    for (size_t i = 0; i < cases.size(); i++) {
        const Case& k = cases[i];
        for (int rep = 0; rep < 4; rep++) {
            Counters h = {};
            h.t0 = ~0ull;
            CK(cudaMemcpy(c, &h, sizeof h, cudaMemcpyHostToDevice));
            CK(cudaMemset(done, 0, 1024 * 128));
            sides_kernel<<<sms, 1024, smem>>>(s, d, k.s_bytes / 4 - 1, k.d_bytes / 4 - 1, iters, k.rw, k.ww, k.sep,
                                              k.copy, done, c, sink);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
            if (rep == 0) continue;  // warms the caches
            const double ns = (double)(h.t1 - h.t0);
            fprintf(f, "%zu,%d,%d,%d,%d,%llu,%llu,%d,%.1f,%.1f,%.1f", i, k.sep, k.copy, k.rw, k.ww,
                    (unsigned long long)(k.s_bytes >> 20), (unsigned long long)(k.d_bytes >> 20), rep,
                    h.read_bytes / ns, h.write_bytes / ns, h.lat_sum / (double)h.lat_n);
            for (int b = 0; b < BINS; b++) fprintf(f, ",%u", h.hist[b]);
            fprintf(f, "\n");
            fflush(f);
            printf("case %2zu sep %d copy %d rw %2d ww %2d S %4llu MiB D %4llu MiB: read %7.1f GB/s write %7.1f GB/s lat %6.1f\n",
                   i, k.sep, k.copy, k.rw, k.ww, (unsigned long long)(k.s_bytes >> 20),
                   (unsigned long long)(k.d_bytes >> 20), h.read_bytes / ns, h.write_bytes / ns,
                   h.lat_sum / (double)h.lat_n);
        }
    }
    fclose(f);
    return 0;
}
