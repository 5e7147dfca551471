// Waves: when each block of seed 002's stride kernel retires on the H200,
// summarised per wave, to compare the kernel's course wave by wave with
// gpusim's (and the assumption its sampler rests on: that a kernel of many
// waves settles into a steady rate).
//
//   ./waves run OUTDIR          every case at 256 MiB: waves.csv (one row per
//                               launch and wave), time.csv (warm batches of the
//                               plain and the recording kernel), resolution.txt
//   ./waves run OUTDIR 1024     five cases at 1 GiB: waves_1024mib.csv,
//                               time_1024mib.csv
//
// The recording kernel is seed 002's `a[i] = a[i] + 1`, i = global thread
// index x stride, with one addition: after every thread's store, the block
// meets at a barrier and thread 0 writes %globaltimer to end[blockIdx.x]
// (its entry time to start[blockIdx.x] likewise). A wave is 132 SMs x 8
// blocks = 1,056 blocks (256 threads, 8 registers: 8 blocks an SM); the
// end of wave k is the time the (k x 1,056)-th block to retire did, as
// gpusim's sampler marks it (crates/engine/src/sample.rs). The plain
// kernel is timed beside it, so that what recording costs is known.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"
#include "../warm.cuh"

template <class T>
__global__ void stride_plain(T* a, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
}

template <class T>
__global__ void stride_rec(T* a, int s, uint64_t* start, uint64_t* end) {
    if (threadIdx.x == 0) start[blockIdx.x] = gtime();
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
    __syncthreads();
    if (threadIdx.x == 0) end[blockIdx.x] = gtime();
}

__global__ void timer_reads(uint64_t* out, int n) {
    for (int k = 0; k < n; k++) out[k] = gtime();
}

struct Case {
    int elem, stride;
};

// MIBS MiB at stride 1 (256: the seed's large curves): n elements, n / 256
// blocks.
static const size_t MIB = 1 << 20;
static size_t MIBS = 256;
static const int BLOCK = 256;
static const int WAVE = 132 * 8;
static const int LAUNCHES = 3;

template <class T>
void run_case(const Case& c, T* a, uint64_t* d_start, uint64_t* d_end, FILE* waves, FILE* times) {
    size_t n = MIBS * MIB / sizeof(T);
    int blocks = (int)(n / BLOCK);
    auto plain = [&] { stride_plain<T><<<blocks, BLOCK>>>(a, c.stride); };
    auto rec = [&] { stride_rec<T><<<blocks, BLOCK>>>(a, c.stride, d_start, d_end); };
    WarmTime tp = warm_batches(plain);
    WarmTime tr = warm_batches(rec);
    fprintf(times, "%d,%d,%d,%.0f,%.0f,%.0f,%.0f,%d\n", c.elem, c.stride, blocks, tp.med_ns, tp.min_ns,
            tp.max_ns, tr.med_ns, tr.per_batch);
    std::vector<uint64_t> st(blocks), en(blocks);
    for (int l = 0; l < LAUNCHES; l++) {
        rec();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(st.data(), d_start, blocks * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(en.data(), d_end, blocks * 8, cudaMemcpyDeviceToHost));
        uint64_t t0 = *std::min_element(st.begin(), st.end());
        std::vector<uint64_t> e(en);
        std::sort(e.begin(), e.end());
        for (int k = 1; k * WAVE <= blocks; k++)
            fprintf(waves, "%d,%d,%d,%d,%llu\n", c.elem, c.stride, l, k,
                    (unsigned long long)(e[k * WAVE - 1] - t0));
        fprintf(waves, "%d,%d,%d,end,%llu\n", c.elem, c.stride, l, (unsigned long long)(e.back() - t0));
    }
}

int main(int argc, char** argv) {
    if (argc < 3 || strcmp(argv[1], "run") != 0) {
        fprintf(stderr, "usage: waves run OUTDIR [MIB]\n");
        return 2;
    }
    std::string dir = argv[2];
    if (argc > 3) MIBS = (size_t)atol(argv[3]);
    std::string tag = MIBS == 256 ? "" : "_" + std::to_string(MIBS) + "mib";
    // Strides whose gpusim course has a slow phase after the start (double
    // 20-31), and a few that have none, for comparison.
    std::vector<Case> cases = {{8, 21}, {8, 20}, {8, 24}, {8, 8},  {8, 1},
                               {4, 1},  {4, 8},  {4, 21}, {4, 27}, {4, 32}};
    // At 1 GiB, the sizes whose sampled points take longest (README, "Speed
    // and sampling").
    if (MIBS != 256) cases = {{4, 1}, {8, 1}, {4, 8}, {8, 21}, {4, 32}};
    void* a;
    size_t bytes = 33 * MIBS * MIB;  // the largest stride's footprint, 32 x MIBS MiB, and a margin
    CK(cudaMalloc(&a, bytes));
    CK(cudaMemset(a, 0, bytes));
    int max_blocks = (int)(MIBS * MIB / 4 / BLOCK);
    uint64_t *d_start, *d_end;
    CK(cudaMalloc(&d_start, max_blocks * 8));
    CK(cudaMalloc(&d_end, max_blocks * 8));
    FILE* waves = fopen((dir + "/waves" + tag + ".csv").c_str(), "w");
    FILE* times = fopen((dir + "/time" + tag + ".csv").c_str(), "w");
    fprintf(waves, "elem,stride,launch,wave,t_ns\n");
    fprintf(times, "elem,stride,blocks,plain_warm_ns,plain_min_ns,plain_max_ns,rec_warm_ns,per_batch\n");
    for (const Case& c : cases) {
        if (c.elem == 8)
            run_case<double>(c, (double*)a, d_start, d_end, waves, times);
        else
            run_case<float>(c, (float*)a, d_start, d_end, waves, times);
        fflush(waves);
        fflush(times);
        fprintf(stderr, "case elem=%d stride=%d done\n", c.elem, c.stride);
    }
    // The timer's step: the smallest nonzero difference between two reads
    // of one thread.
    uint64_t* d_buf;
    CK(cudaMalloc(&d_buf, 4096 * 8));
    timer_reads<<<1, 1>>>(d_buf, 4096);
    CK(cudaDeviceSynchronize());
    std::vector<uint64_t> h(4096);
    CK(cudaMemcpy(h.data(), d_buf, 4096 * 8, cudaMemcpyDeviceToHost));
    uint64_t step = ~0ull;
    for (int k = 1; k < 4096; k++)
        if (h[k] > h[k - 1]) step = std::min(step, h[k] - h[k - 1]);
    FILE* res = fopen((dir + "/resolution.txt").c_str(), "w");
    fprintf(res, "globaltimer step: %llu ns (smallest nonzero difference of 4096 reads); span %llu ns\n",
            (unsigned long long)step, (unsigned long long)(h[4095] - h[0]));
    fclose(res);
    CK(cudaFree(d_buf));
    fclose(waves);
    fclose(times);
    CK(cudaFree(a));
    return 0;
}
