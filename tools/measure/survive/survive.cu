// How long a line the H200's L2 has just filled survives while seed 002's
// stride kernel streams through the L2, and whether one hit protects it.
//
// Build:  nvcc -O3 -arch=sm_90 -o survive survive.cu
// Run:    ./survive OUT.csv
//
// Each case launches, on two CUDA streams, first a probe (one block of 1024
// threads) and then the stream: seed 002's stride kernel a[i] = a[i] + 1,
// double, stride 24, over 256 MiB (131,072 blocks of 256), with 8 blocks
// an SM (`stream` 8), 2 blocks (`stream` 2: 112 KiB of unused dynamic
// shared memory a block), or no stream at all (`stream` 0). The probe
// spins 600,000 cycles (about 300 us at 1,980 MHz) so that the stream is in
// its steady state, then each thread:
//   mode "fill":  loads its 4 lines of a probe buffer of 4,096 lines
//                 (ld.global.cg, 4 bytes at each line's start) and waits
//                 for the values;
//   mode "touch": the same, then loads them again at once (hits) and
//                 waits for those;
//   mode "cold":  does neither (the lines were last touched long before,
//                 out of the L2: the latency of a miss under the stream);
// then spins `wait_us` (in SM cycles at 1,980 MHz) and loads its 4 lines
// once more, one after the other, each timed with clock64 from before the
// load to the first use of its value. Per case the histogram of those
// 4,096 latencies in bins of 250 cycles (the last one open).
//
// Before each case 256 MiB of other data is read twice (the L2 emptied of
// the probe's lines). The probe runs within the stream's first 400 us of
// about 1,700-2,000.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

const int LINES = 4096;
const int PT = 1024;  // probe threads
const long long WARM_CYCLES = 600000;
const double MHZ = 1980.0;

// Seed 002's stride kernel (its dynamic shared memory, when given, unused).
__global__ void k_stream(double* a, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = a[i] + 1;
}

// Call 2's streams (SURVIVE_CALL2=1): the same kernel for float and double,
// and its load alone (v is never -1: the buffer holds small counts).
template <typename T>
__global__ void k_rw_t(T* a, int s) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    a[i] = a[i] + 1;
}
template <typename T>
__global__ void k_ro_t(T* a, int s, T* sink) {
    size_t i = ((size_t)blockDim.x * blockIdx.x + threadIdx.x) * (size_t)s;
    T v = a[i];
    if (v == (T)-1) sink[0] = v;
}

__global__ void k_flush(const uint32_t* p, size_t n, uint32_t* sink) {
    uint32_t acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc += ld_cg(p + i * 32);
    if (acc == 0xdeadbeefu) sink[0] = acc;
}

__device__ __forceinline__ void spin(long long cycles) {
    long long t0 = clk();
    while (clk() - t0 < cycles) {
    }
}

// mode 0 cold, 1 fill, 2 touch.
__global__ void k_probe(const uint32_t* b, int mode, long long wait, uint32_t* lat, uint32_t* sink) {
    const int t = threadIdx.x;
    spin(WARM_CYCLES);
    uint32_t acc = 0;
    if (mode >= 1) {
        uint32_t v0 = ld_cg(b + (size_t)(t + 0 * PT) * 32), v1 = ld_cg(b + (size_t)(t + 1 * PT) * 32),
                 v2 = ld_cg(b + (size_t)(t + 2 * PT) * 32), v3 = ld_cg(b + (size_t)(t + 3 * PT) * 32);
        acc += v0 + v1 + v2 + v3;
        acc = __reduce_add_sync(0xffffffffu, acc);
    }
    if (mode == 2) {
        uint32_t v0 = ld_cg(b + (size_t)(t + 0 * PT) * 32), v1 = ld_cg(b + (size_t)(t + 1 * PT) * 32),
                 v2 = ld_cg(b + (size_t)(t + 2 * PT) * 32), v3 = ld_cg(b + (size_t)(t + 3 * PT) * 32);
        acc += v0 + v1 + v2 + v3;
        acc = __reduce_add_sync(0xffffffffu, acc);
    }
    spin(wait);
    for (int k = 0; k < 4; k++) {
        const int line = t + k * PT;
        long long t0 = clk();
        uint32_t v = ld_cg(b + (size_t)line * 32);
        uint32_t use = __reduce_add_sync(0xffffffffu, v);
        long long t1 = clk();
        acc += use;
        lat[line] = (uint32_t)(t1 - t0);
    }
    if (acc == 0xdeadbeefu) sink[t] = acc;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: survive OUT.csv\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "w");
    if (!f) return 1;
    const size_t MiB = 1ull << 20, sbytes = 33 * 256 * MiB, fl = 256 * MiB;
    double* a;
    uint32_t *b, *flush, *lat, *sink;
    CK(cudaMalloc(&a, sbytes));
    CK(cudaMalloc(&b, (size_t)LINES * 128));
    CK(cudaMalloc(&flush, fl));
    CK(cudaMalloc(&lat, LINES * 4));
    CK(cudaMalloc(&sink, PT * 4));
    CK(cudaMemset(a, 0, sbytes));
    CK(cudaMemset(b, 1, (size_t)LINES * 128));
    CK(cudaMemset(flush, 1, fl));
    CK(cudaFuncSetAttribute((const void*)k_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, 112 * 1024));
    for (int smem : {0, 112 * 1024}) {
        int nb = -1;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (const void*)k_stream, 256, smem));
        printf("# stream kernel, smem %d: %d blocks of 256 per SM\n", smem, nb);
    }
    cudaStream_t sp, ss;
    CK(cudaStreamCreateWithFlags(&sp, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&ss, cudaStreamNonBlocking));
    const int BIN = 250, BINS = 60;
    if (getenv("SURVIVE_CALL2")) {
        // Call 2: three streams at 2 blocks an SM, each timed alone, then
        // the probe filling (or not, `cold`) beside each.
        const char* kinds[] = {"rw_d24", "rw_f32", "ro_d24"};
        const unsigned grids[] = {131072, 262144, 131072};
        const size_t SM2 = 112 * 1024;
        CK(cudaFuncSetAttribute((const void*)k_rw_t<double>, cudaFuncAttributeMaxDynamicSharedMemorySize, SM2));
        CK(cudaFuncSetAttribute((const void*)k_rw_t<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, SM2));
        CK(cudaFuncSetAttribute((const void*)k_ro_t<double>, cudaFuncAttributeMaxDynamicSharedMemorySize, SM2));
        auto launch = [&](int k, cudaStream_t st) {
            if (k == 0) k_rw_t<double><<<grids[k], 256, SM2, st>>>(a, 24);
            if (k == 1) k_rw_t<float><<<grids[k], 256, SM2, st>>>((float*)a, 32);
            if (k == 2) k_ro_t<double><<<grids[k], 256, SM2, st>>>(a, 24, (double*)sink);
        };
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int k = 0; k < 3; k++) {
            launch(k, 0);
            CK(cudaEventRecord(e0));
            launch(k, 0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            printf("# stream %s alone: %.1f us, %u threads\n", kinds[k], ms * 1000.0f, grids[k] * 256);
        }
        fprintf(f, "rep,stream,mode,wait_us,lines");
        for (int i = 0; i < BINS; i++) fprintf(f, ",b%d", i * BIN);
        fprintf(f, "\n");
        const int w2[] = {0, 2, 4, 6, 8, 10, 12, 16, 24};
        std::vector<uint32_t> h(LINES);
        for (int rep = 0; rep < 2; rep++)
            for (int k = 0; k < 3; k++)
                for (int mode = 0; mode < 2; mode++)
                    for (int w : w2) {
                        if (mode == 0 && w != 0) continue;
                        k_flush<<<132 * 8, 256>>>(flush, fl / 128, sink);
                        k_flush<<<132 * 8, 256>>>(flush, fl / 128, sink);
                        CK(cudaDeviceSynchronize());
                        CK(cudaMemset(lat, 0, LINES * 4));
                        CK(cudaDeviceSynchronize());
                        k_probe<<<1, PT, 0, sp>>>(b, mode, (long long)(w * MHZ), lat, sink);
                        launch(k, ss);
                        CK(cudaGetLastError());
                        CK(cudaDeviceSynchronize());
                        CK(cudaMemcpy(h.data(), lat, LINES * 4, cudaMemcpyDeviceToHost));
                        std::vector<uint64_t> bins(BINS, 0);
                        for (uint32_t v : h) bins[std::min<uint32_t>(v / BIN, BINS - 1)]++;
                        fprintf(f, "%d,%s,%s,%d,%d", rep, kinds[k], mode ? "fill" : "cold", w, LINES);
                        for (uint64_t c : bins) fprintf(f, ",%llu", (unsigned long long)c);
                        fprintf(f, "\n");
                        fflush(f);
                    }
        fclose(f);
        return 0;
    }
    fprintf(f, "rep,stream,mode,wait_us,lines");
    for (int i = 0; i < BINS; i++) fprintf(f, ",b%d", i * BIN);
    fprintf(f, "\n");
    const char* modes[] = {"cold", "fill", "touch"};
    const int waits[] = {0, 1, 2, 4, 8, 16, 32, 64};
    std::vector<uint32_t> h(LINES);
    for (int rep = 0; rep < 2; rep++)
        for (int stream : {8, 2, 0})
            for (int mode = 0; mode < 3; mode++)
                for (int w : waits) {
                    if (mode == 0 && w != 0) continue;
                    k_flush<<<132 * 8, 256>>>(flush, fl / 128, sink);
                    k_flush<<<132 * 8, 256>>>(flush, fl / 128, sink);
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemset(lat, 0, LINES * 4));
                    CK(cudaDeviceSynchronize());
                    k_probe<<<1, PT, 0, sp>>>(b, mode, (long long)(w * MHZ), lat, sink);
                    if (stream)
                        k_stream<<<131072, 256, stream == 2 ? 112 * 1024 : 0, ss>>>(a, 24);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemcpy(h.data(), lat, LINES * 4, cudaMemcpyDeviceToHost));
                    std::vector<uint64_t> bins(BINS, 0);
                    for (uint32_t v : h) bins[std::min<uint32_t>(v / BIN, BINS - 1)]++;
                    fprintf(f, "%d,%d,%s,%d,%d", rep, stream, modes[mode], w, LINES);
                    for (uint64_t c : bins) fprintf(f, ",%llu", (unsigned long long)c);
                    fprintf(f, "\n");
                    fflush(f);
                }
    fclose(f);
    return 0;
}
