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
//   ./waves blocks OUTDIR       four cases at 256 MiB, one launch each after
//                               warm batches: every block's SM, entry and exit
//                               (blocks_e<ELEM>_s<STRIDE>.csv), to see how long
//                               a block stays resident and whether some wait
//                               far longer than the others; the same with each
//                               store acknowledged before the block's exit is
//                               recorded (blocks_fence_*.csv); warm times of
//                               the four kernels (blocks_time.csv)
//   ./waves side OUTDIR         which SMs are near which L2 lines (side.csv),
//                               then double stride 21 and float stride 32 as
//                               in blocks mode, on the same GPU
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

// As stride_rec, and the SM each block ran on.
template <class T>
__global__ void stride_rec_sm(T* a, int s, uint64_t* start, uint64_t* end, uint32_t* sm) {
    if (threadIdx.x == 0) {
        start[blockIdx.x] = gtime();
        sm[blockIdx.x] = smid();
    }
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
    __syncthreads();
    if (threadIdx.x == 0) end[blockIdx.x] = gtime();
}

// As stride_rec_sm with each thread's store acknowledged (__threadfence)
// before the barrier: a block's recorded exit comes after its stores are.
template <class T>
__global__ void stride_rec_sm_fence(T* a, int s, uint64_t* start, uint64_t* end, uint32_t* sm) {
    if (threadIdx.x == 0) {
        start[blockIdx.x] = gtime();
        sm[blockIdx.x] = smid();
    }
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) end[blockIdx.x] = gtime();
}

// The plain kernel with each thread's store acknowledged before it exits.
template <class T>
__global__ void stride_fence(T* a, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
    __threadfence();
}

// Thread 0 of each block chases one 4-byte word of `lines` (the word holds
// 0, so each load's address depends on the last load's value), with .cg
// loads that the L1 does not keep: N loads through the L2, each line of
// LINES in turn, starting at the block's own (block mod LINES). Its SM
// and mean cycles per load for each line.
__global__ void side_chase(const uint32_t* lines, int nlines, int stride_words, int n, uint32_t* sm,
                           float* cyc) {
    if (threadIdx.x != 0) return;
    sm[blockIdx.x] = smid();
    for (int j = 0; j < nlines; j++) {
        int l = (j + blockIdx.x) % nlines;
        const uint32_t* p = lines + (size_t)l * stride_words;
        uint32_t v = 0;
        long long t0 = clk();
        for (int k = 0; k < n; k++) v = ld_cg(p + v);
        long long t1 = clk();
        cyc[blockIdx.x * nlines + l] = (float)(t1 - t0) / n + (v == 12345 ? 1.0f : 0.0f);
    }
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

// One launch of the recording kernel with SM ids, after warm batches (the
// L2 holding the previous launch's lines, as in timing.csv): each block's
// SM, entry and exit, ns from the earliest entry.
template <class T>
static void dump_blocks(const std::string& path, int blocks, const uint64_t* d_start, const uint64_t* d_end,
                        const uint32_t* d_sm, double warm_ns) {
    std::vector<uint64_t> st(blocks), en(blocks);
    std::vector<uint32_t> sm(blocks);
    CK(cudaMemcpy(st.data(), d_start, blocks * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(en.data(), d_end, blocks * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(sm.data(), d_sm, blocks * 4, cudaMemcpyDeviceToHost));
    uint64_t t0 = *std::min_element(st.begin(), st.end());
    FILE* f = fopen(path.c_str(), "w");
    fprintf(f, "# warm batches of this kernel: median %.0f ns\nblock,sm,start_ns,end_ns\n", warm_ns);
    for (int b = 0; b < blocks; b++)
        fprintf(f, "%d,%u,%llu,%llu\n", b, sm[b], (unsigned long long)(st[b] - t0),
                (unsigned long long)(en[b] - t0));
    fclose(f);
}

// One launch of the recording kernel with SM ids, after warm batches (the
// L2 holding the previous launch's lines, as in timing.csv): each block's
// SM, entry and exit, ns from the earliest entry; then the same with each
// thread's store acknowledged before its block's recorded exit
// (blocks_fence_*.csv). blocks_time.csv: the warm times of the plain
// kernel, the recording one, and both with the fence.
template <class T>
void blocks_case(const Case& c, T* a, uint64_t* d_start, uint64_t* d_end, uint32_t* d_sm,
                 const std::string& dir, FILE* times) {
    size_t n = MIBS * MIB / sizeof(T);
    int blocks = (int)(n / BLOCK);
    std::string tag = "e" + std::to_string(c.elem) + "_s" + std::to_string(c.stride) + ".csv";
    auto plain = [&] { stride_plain<T><<<blocks, BLOCK>>>(a, c.stride); };
    auto fence = [&] { stride_fence<T><<<blocks, BLOCK>>>(a, c.stride); };
    auto rec = [&] { stride_rec_sm<T><<<blocks, BLOCK>>>(a, c.stride, d_start, d_end, d_sm); };
    auto recf = [&] { stride_rec_sm_fence<T><<<blocks, BLOCK>>>(a, c.stride, d_start, d_end, d_sm); };
    WarmTime tp = warm_batches(plain);
    WarmTime tf = warm_batches(fence);
    WarmTime tr = warm_batches(rec);
    rec();
    CK(cudaDeviceSynchronize());
    dump_blocks<T>(dir + "/blocks_" + tag, blocks, d_start, d_end, d_sm, tr.med_ns);
    WarmTime trf = warm_batches(recf);
    recf();
    CK(cudaDeviceSynchronize());
    dump_blocks<T>(dir + "/blocks_fence_" + tag, blocks, d_start, d_end, d_sm, trf.med_ns);
    fprintf(times, "%d,%d,%d,%.0f,%.0f,%.0f,%.0f\n", c.elem, c.stride, blocks, tp.med_ns, tf.med_ns, tr.med_ns,
            trf.med_ns);
    fflush(times);
}

// blocks_case for each of `cases` at MIBS MiB, into DIR (blocks_*.csv and
// blocks_time.csv).
static void run_blocks_cases(const std::vector<Case>& cases, const std::string& dir) {
    void* a;
    size_t bytes = 33 * MIBS * MIB;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMemset(a, 0, bytes));
    int max_blocks = (int)(MIBS * MIB / 4 / BLOCK);
    uint64_t *d_start, *d_end;
    uint32_t* d_sm;
    CK(cudaMalloc(&d_start, max_blocks * 8));
    CK(cudaMalloc(&d_end, max_blocks * 8));
    CK(cudaMalloc(&d_sm, max_blocks * 4));
    FILE* times = fopen((dir + "/blocks_time.csv").c_str(), "w");
    fprintf(times, "elem,stride,blocks,plain_warm_ns,fence_warm_ns,rec_warm_ns,rec_fence_warm_ns\n");
    for (const Case& c : cases) {
        if (c.elem == 8)
            blocks_case<double>(c, (double*)a, d_start, d_end, d_sm, dir, times);
        else
            blocks_case<float>(c, (float*)a, d_start, d_end, d_sm, dir, times);
        fprintf(stderr, "blocks elem=%d stride=%d done\n", c.elem, c.stride);
    }
    fclose(times);
    CK(cudaFree(d_start));
    CK(cudaFree(d_end));
    CK(cudaFree(d_sm));
    CK(cudaFree(a));
}

int blocks_mode(const std::string& dir) {
    run_blocks_cases({{8, 21}, {4, 32}, {8, 8}, {4, 1}}, dir);
    return 0;
}

// Which SMs are near which L2 lines (side.csv: block, sm, line, cycles per
// .cg load, 132 blocks of one chasing thread, 16 lines 1 MiB apart), and in
// the same process, on the same GPU, the blocks of double stride 21 and
// float stride 32 (blocks_*.csv as in blocks mode): whether the SMs that
// are slow at large strides are one side of the L2.
int side_mode(const std::string& dir) {
    const int NL = 16, N = 512, STRIDE = (1 << 20) / 4;
    uint32_t* lines;
    CK(cudaMalloc(&lines, (size_t)NL * STRIDE * 4));
    CK(cudaMemset(lines, 0, (size_t)NL * STRIDE * 4));
    uint32_t* d_sm;
    float* d_cyc;
    const int B = 132;
    CK(cudaMalloc(&d_sm, B * 4));
    CK(cudaMalloc(&d_cyc, B * NL * 4));
    side_chase<<<B, 32>>>(lines, NL, STRIDE, 16, d_sm, d_cyc);  // warm the lines into the L2
    CK(cudaDeviceSynchronize());
    side_chase<<<B, 32>>>(lines, NL, STRIDE, N, d_sm, d_cyc);
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> sm(B);
    std::vector<float> cyc(B * NL);
    CK(cudaMemcpy(sm.data(), d_sm, B * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(cyc.data(), d_cyc, B * NL * 4, cudaMemcpyDeviceToHost));
    FILE* f = fopen((dir + "/side.csv").c_str(), "w");
    fprintf(f, "block,sm,line,cycles\n");
    for (int b = 0; b < B; b++)
        for (int l = 0; l < NL; l++) fprintf(f, "%d,%u,%d,%.1f\n", b, sm[b], l, cyc[b * NL + l]);
    fclose(f);
    CK(cudaFree(lines));
    CK(cudaFree(d_sm));
    CK(cudaFree(d_cyc));
    run_blocks_cases({{8, 21}, {4, 32}}, dir);
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 3 && strcmp(argv[1], "blocks") == 0) return blocks_mode(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "side") == 0) return side_mode(argv[2]);
    if (argc < 3 || strcmp(argv[1], "run") != 0) {
        fprintf(stderr, "usage: waves run OUTDIR [MIB] | waves blocks OUTDIR | waves side OUTDIR\n");
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
