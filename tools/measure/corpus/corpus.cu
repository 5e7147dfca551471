// The H200 timing corpus: families of small kernels, each swept over the
// parameter that exposes one mechanism of the memory path. Every case is the
// CUDA C counterpart of a gpusim workload file (named in the comment of each
// kernel); the `params` string of each case is that workload's parameters.
//
// Build:  nvcc -O3 -arch=sm_90 -o corpus corpus.cu
// Run:    ./corpus list             the cases, one per line
//         ./corpus time FILE.csv    check, then time every case with CUDA
//                                   events (warm, back to back); one CSV row
//                                   per case into FILE.csv
//         ./corpus ncu [FROM TO [REPS]]
//                                   every case (or cases FROM..TO-1)
//                                   launched once (REPS times; kernels named
//                                   k_*); meant to run under Nsight Compute.
//                                   Prints "CASE,<index>,<family>,<params>,<rep>"
//                                   before each launch.
//
// Buffers: A, 16 GiB + 1 MiB, and B, 1 GiB + 1 MiB (cudaMalloc, so 256-byte
// aligned at least), both filled with the byte 0x3f (floats of 0.746) before
// the run; every case works from the start of A (and B for the copy).
// Blocks of 256 threads unless the case's params say `block`.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
static const uint64_t A_BYTES = (16ull << 30) + MiB;
static const uint64_t B_BYTES = (1ull << 30) + MiB;
// A value no element ever holds (the buffers hold 0.746 or 1.5): read
// kernels compare with it so that the compiler keeps their loads, and never
// store.
#define NEVER 12345.0f

__device__ __forceinline__ void st_f32(float *p, float x) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(x) : "memory");
}

// ---- streams (workloads/stream_read.ron, stream_write.ron, stream_copy.ron)
__global__ void k_stream_read(const float *a, float *out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        if (v == NEVER) out[0] = v;
    }
}
__global__ void k_stream_write(float *a, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 1.5f;
}
__global__ void k_stream_copy(const float *a, float *b, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}

// ---- lines per warp instruction (workloads/lines_ld.ron, lines_st.ron)
// A group of L consecutive warps covers L consecutive 128-byte lines; warp j
// of the group puts its 32 lanes on all L lines, g = 32/L consecutive words
// on each (words j*g .. j*g+g-1 of every line). Every word is touched once.
// L = 2^lg; the index is computed with 32-bit shifts and masks so that the
// kernel's few instructions stay far from the issue limit (a 64-bit division
// by a run-time L costs about a hundred instructions).
__device__ __forceinline__ uint32_t lines_index(uint32_t t, uint32_t lg) {
    uint32_t w = t >> 5, l = t & 31, gl = 5 - lg;  // g = 32 / L = 2^gl
    return ((w >> lg) << (5 + lg)) + ((l >> gl) << 5) + ((w & ((1u << lg) - 1)) << gl) +
           (l & ((1u << gl) - 1));
}
__global__ void k_lines_ld(const float *a, float *out, uint32_t lg) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[lines_index(t, lg)];
    if (v == NEVER) out[0] = v;
}
__global__ void k_lines_st(float *a, uint32_t lg) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    a[lines_index(t, lg)] = 1.5f;
}

// ---- consecutive store instructions to the same sectors (workloads/store_run.ron)
// Thread t writes floats t*K .. t*K+K-1 with K separate 4-byte st.global.f32
// (seed 001's clear_four is K = 4).
template <int K>
__global__ void k_store_run(float *v) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    float *p = v + t * K;
#pragma unroll
    for (int j = 0; j < K; j++) st_f32(p + j, 1.5f);
}

// ---- scattered chunks (workloads/scatter.ron)
// G = W/4 consecutive lanes read the W-byte chunk number
// hash(t / G) mod (footprint / W), one word each.
__host__ __device__ __forceinline__ uint64_t mix(uint64_t x) {
    uint64_t a = (x * 2654435761ull) & 4294967295ull;
    uint64_t b = a ^ (a >> 15);
    uint64_t c = (b * 1103515245ull) & 4294967295ull;
    return c ^ (c >> 13);
}
// G = 2^lg; shifts and masks instead of a division by a run-time G.
__global__ void k_scatter(const float *a, float *out, uint64_t chunks, uint32_t lg) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t chunk = mix(t >> lg) & (chunks - 1);
    float v = a[(chunk << lg) + (t & ((1u << lg) - 1))];
    if (v == NEVER) out[0] = v;
}

// ---- block size (workloads/offset.ron at offset 0: seed 002's kernel)
__global__ void k_seed_offset(float *a, uint64_t n) {
    uint64_t i = (uint64_t)blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) a[i] = a[i] + 1.0f;
}

// ---- independent loads per thread (workloads/ilp_read.ron)
// T = n/U threads; thread t reads a[t + j*T], j < U, all before using any.
template <int U>
__global__ void k_ilp_read(const float *a, float *out, uint64_t T) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    float v[U];
#pragma unroll
    for (int j = 0; j < U; j++) v[j] = a[t + j * T];
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < U; j++) s += v[j];
    if (s == NEVER) out[0] = s;
}

struct Case {
    std::string family, params;
    uint64_t bytes_moved;  // useful bytes (reads + writes)
    std::function<void(cudaStream_t)> launch;
    // Cases that store: after one launch on a poisoned buffer, the first
    // check_n floats of check_buf must all hold the stored value.
    float **check_buf;
    uint64_t check_n;
    int check_kind;  // 0 no check, 1 every float == 1.5, 3 copy of A's 0x3f3f3f3f
};

static float *A, *B, *OUT;

static uint32_t blocks(uint64_t threads, uint32_t bs) { return (uint32_t)((threads + bs - 1) / bs); }

static std::vector<Case> cases() {
    std::vector<Case> c;
    const uint64_t sizes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    for (uint64_t mb : sizes) {
        uint64_t n = mb * MiB / 4;
        char p[64];
        snprintf(p, sizeof p, "nMB=%llu", (unsigned long long)mb);
        c.push_back({"stream_read", p, n * 4, [n](cudaStream_t s) { k_stream_read<<<blocks(n, 256), 256, 0, s>>>(A, OUT, n); }, nullptr, 0, 0});
        c.push_back({"stream_write", p, n * 4, [n](cudaStream_t s) { k_stream_write<<<blocks(n, 256), 256, 0, s>>>(A, n); }, &A, n, 1});
        c.push_back({"stream_copy", p, n * 8, [n](cudaStream_t s) { k_stream_copy<<<blocks(n, 256), 256, 0, s>>>(A, B, n); }, &B, n, 3});
    }
    for (uint32_t L : {1u, 2u, 4u, 8u, 16u, 32u}) {
        uint64_t n = 64 * MiB / 4;
        char p[64];
        snprintf(p, sizeof p, "nMB=64;lines=%u", L);
        uint32_t lg = __builtin_ctz(L);
        c.push_back({"lines_ld", p, n * 4, [n, lg](cudaStream_t s) { k_lines_ld<<<blocks(n, 256), 256, 0, s>>>(A, OUT, lg); }, nullptr, 0, 0});
        c.push_back({"lines_st", p, n * 4, [n, lg](cudaStream_t s) { k_lines_st<<<blocks(n, 256), 256, 0, s>>>(A, lg); }, &A, n, 1});
    }
    for (uint64_t mb : {16ull, 256ull}) {
        uint64_t n = mb * MiB / 4;
        for (int k : {1, 2, 4, 8, 16}) {
            char p[64];
            snprintf(p, sizeof p, "nMB=%llu;k=%d", (unsigned long long)mb, k);
            uint64_t th = n / k;
            std::function<void(cudaStream_t)> f;
            switch (k) {
                case 1: f = [th](cudaStream_t s) { k_store_run<1><<<blocks(th, 256), 256, 0, s>>>(A); }; break;
                case 2: f = [th](cudaStream_t s) { k_store_run<2><<<blocks(th, 256), 256, 0, s>>>(A); }; break;
                case 4: f = [th](cudaStream_t s) { k_store_run<4><<<blocks(th, 256), 256, 0, s>>>(A); }; break;
                case 8: f = [th](cudaStream_t s) { k_store_run<8><<<blocks(th, 256), 256, 0, s>>>(A); }; break;
                default: f = [th](cudaStream_t s) { k_store_run<16><<<blocks(th, 256), 256, 0, s>>>(A); }; break;
            }
            c.push_back({"store_run", p, n * 4, f, &A, n, 1});
        }
    }
    const uint64_t threads = 4 * MiB;
    for (uint32_t w : {32u, 64u, 128u}) {
        for (uint64_t fmb : {16ull, 64ull, 256ull, 1024ull, 4096ull, 16384ull}) {
            char p[64];
            snprintf(p, sizeof p, "fMB=%llu;w=%u", (unsigned long long)fmb, w);
            uint64_t chunks = fmb * MiB / w;
            uint32_t lg = __builtin_ctz(w / 4);
            c.push_back({"scatter", p, threads * 4, [chunks, lg, threads](cudaStream_t s) { k_scatter<<<blocks(threads, 256), 256, 0, s>>>(A, OUT, chunks, lg); }, nullptr, 0, 0});
        }
    }
    for (uint64_t mb : {4ull, 256ull}) {
        for (uint32_t bs : {32u, 64u, 128u, 256u, 512u, 1024u}) {
            uint64_t n = mb * MiB / 4;
            char p[80];
            snprintf(p, sizeof p, "nMB=%llu;elem=4;block=%u;offset=0", (unsigned long long)mb, bs);
            c.push_back({"block", p, n * 8, [n, bs](cudaStream_t s) { k_seed_offset<<<blocks(n, bs), bs, 0, s>>>(A, n); }, nullptr, 0, 0});
        }
    }
    for (int u : {1, 2, 4, 8, 16, 32}) {
        uint64_t n = 256 * MiB / 4;
        uint64_t T = n / u;
        char p[64];
        snprintf(p, sizeof p, "nMB=256;u=%d", u);
        std::function<void(cudaStream_t)> f;
        switch (u) {
            case 1: f = [T](cudaStream_t s) { k_ilp_read<1><<<blocks(T, 256), 256, 0, s>>>(A, OUT, T); }; break;
            case 2: f = [T](cudaStream_t s) { k_ilp_read<2><<<blocks(T, 256), 256, 0, s>>>(A, OUT, T); }; break;
            case 4: f = [T](cudaStream_t s) { k_ilp_read<4><<<blocks(T, 256), 256, 0, s>>>(A, OUT, T); }; break;
            case 8: f = [T](cudaStream_t s) { k_ilp_read<8><<<blocks(T, 256), 256, 0, s>>>(A, OUT, T); }; break;
            case 16: f = [T](cudaStream_t s) { k_ilp_read<16><<<blocks(T, 256), 256, 0, s>>>(A, OUT, T); }; break;
            default: f = [T](cudaStream_t s) { k_ilp_read<32><<<blocks(T, 256), 256, 0, s>>>(A, OUT, T); }; break;
        }
        c.push_back({"ilp_read", p, n * 4, f, nullptr, 0, 0});
    }
    return c;
}

// Poisons the checked range, runs the case once and checks the result.
// Returns the number of wrong words (0 when the case has no check).
static uint64_t check(const Case &cs) {
    if (cs.check_kind == 0) return 0;
    uint64_t n = cs.check_n;
    CK(cudaMemset(*cs.check_buf, 0xff, n * 4));
    if (cs.check_kind == 3) CK(cudaMemset(A, 0x3f, n * 4));
    cs.launch(0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> h(n);
    CK(cudaMemcpy(h.data(), *cs.check_buf, n * 4, cudaMemcpyDeviceToHost));
    float want = 1.5f;
    if (cs.check_kind == 3) {
        uint32_t bits = 0x3f3f3f3fu;
        memcpy(&want, &bits, 4);
    }
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++) bad += h[i] != want;
    return bad;
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "list";
    int dev = 0;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    printf("# device: %s, compute capability %d.%d, runtime %d, driver %d, %d SMs, L2 %d bytes, ECC %d\n",
           prop.name, prop.major, prop.minor, rt, drv, prop.multiProcessorCount, prop.l2CacheSize, prop.ECCEnabled);
    std::vector<Case> all = cases();
    if (mode == "list") {
        for (size_t i = 0; i < all.size(); i++) printf("%zu,%s,%s\n", i, all[i].family.c_str(), all[i].params.c_str());
        return 0;
    }
    CK(cudaMalloc(&A, A_BYTES));
    CK(cudaMalloc(&B, B_BYTES));
    CK(cudaMalloc(&OUT, 256));
    CK(cudaMemset(A, 0x3f, A_BYTES));
    CK(cudaMemset(B, 0x3f, B_BYTES));
    CK(cudaMemset(OUT, 0, 256));
    CK(cudaDeviceSynchronize());
    if (mode == "ncu") {
        size_t from = argc > 2 ? strtoull(argv[2], nullptr, 10) : 0;
        size_t to = argc > 3 ? strtoull(argv[3], nullptr, 10) : all.size();
        int reps = argc > 4 ? atoi(argv[4]) : 1;
        for (size_t i = from; i < std::min(to, all.size()); i++) {
            for (int r = 0; r < reps; r++) {
                printf("CASE,%zu,%s,%s,%d\n", i, all[i].family.c_str(), all[i].params.c_str(), r);
                fflush(stdout);
                all[i].launch(0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            }
        }
        float o[64];
        CK(cudaMemcpy(o, OUT, 256, cudaMemcpyDeviceToHost));
        printf("# out[0] = %g (0 expected: no read kernel stored)\n", o[0]);
        return 0;
    }
    if (mode != "time" || argc < 3) {
        fprintf(stderr, "usage: corpus list | time FILE.csv | ncu\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "family,params,bytes_moved,ms_per_launch,batch_ms_min,batch_ms_max,launches_per_batch,check_bad_words\n");
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (size_t i = 0; i < all.size(); i++) {
        const Case &cs = all[i];
        uint64_t bad = check(cs);
        // Warm-up, then estimate one launch, then 5 batches of R launches
        // with R chosen so that a batch lasts about 2 ms (at least 5).
        for (int w = 0; w < 2; w++) cs.launch(0);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e0));
        cs.launch(0);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float one = 0;
        CK(cudaEventElapsedTime(&one, e0, e1));
        int R = std::max(5, std::min(200, (int)(2.0 / std::max(one, 1e-3f))));
        std::vector<float> per;
        for (int b = 0; b < 5; b++) {
            CK(cudaEventRecord(e0));
            for (int r = 0; r < R; r++) cs.launch(0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            per.push_back(ms / R);
        }
        std::sort(per.begin(), per.end());
        fprintf(f, "%s,%s,%llu,%.6f,%.6f,%.6f,%d,%llu\n", cs.family.c_str(), cs.params.c_str(),
                (unsigned long long)cs.bytes_moved, per[2], per[0], per[4], R, (unsigned long long)bad);
        fflush(f);
        printf("%-12s %-36s %10.4f ms  %8.1f GB/s  bad %llu\n", cs.family.c_str(), cs.params.c_str(), per[2],
               cs.bytes_moved / (per[2] * 1e6), (unsigned long long)bad);
    }
    fclose(f);
    float o[64];
    CK(cudaMemcpy(o, OUT, 256, cudaMemcpyDeviceToHost));
    printf("# out[0] = %g (0 expected: no read kernel stored)\n", o[0]);
    return 0;
}
