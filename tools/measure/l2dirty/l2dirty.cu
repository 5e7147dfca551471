// How much dirty data the H200's L2 keeps, and what the seed's strided
// kernel pays for its loads and for its stores separately.
//
// Build:  nvcc -O3 -arch=sm_90 -o l2dirty l2dirty.cu
// Run:    ./l2dirty check            stores every kernel on a poisoned buffer
//                                    and counts wrong words
//         ./l2dirty seq              the write-back sequences (run under
//                                    Nsight Compute with --cache-control none;
//                                    kernels named m_* are the measured ones)
//         ./l2dirty stride           the strided kernels (run under Nsight
//                                    Compute with --cache-control all)
// Each launch is preceded by a line "CASE,<family>,<params>,<step>".
//
// Sequence family `dirty_write` (params fMB=F): flush, then m_write (16-byte
// stores over F MiB, every sector whole), then m_readback (reads those F MiB
// back: what the L2 still holds of them), then m_drain (reads 512 MiB of
// another buffer: the DRAM writes it causes are the dirty data still in the
// L2 after the read-back).
// Sequence family `dirty_mix` (params r=R): flush, then m_mix (each thread
// reads R float4 from a read-only buffer and stores one float4 into a 128 MiB
// write buffer), then m_drain.
// The flush (f_flush, not measured) reads 512 MiB of a third buffer so that
// the L2 holds only clean lines before each sequence.
//
// Family `stride_{rw,ro,wo}` (params elem=E;stride=S, 4 MiB at stride 1 as
// seed 002): rw is the seed's a[i] = a[i] + 1, ro its load alone (the sum is
// stored only if it equals a value no element holds), wo its store alone.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"

static const uint64_t MiB = 1ull << 20;
#define NEVER 12345.0f

// Reads n float4 and stores only if their sum is a value never held.
__global__ void reader(const float4 *a, float *out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = a[i];
    float s = v.x + v.y + v.z + v.w;
    if (s == NEVER) out[0] = s;
}
__global__ void f_flush(const float4 *a, float *out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = a[i];
    if (v.x + v.y + v.z + v.w == NEVER) out[0] = 1;
}
__global__ void m_readback(const float4 *a, float *out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = a[i];
    if (v.x + v.y + v.z + v.w == NEVER) out[0] = 1;
}
__global__ void m_drain(const float4 *a, float *out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = a[i];
    if (v.x + v.y + v.z + v.w == NEVER) out[0] = 1;
}
__global__ void m_write(float4 *a, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = make_float4(1.5f, 1.5f, 1.5f, 1.5f);
}
// Thread i reads r[i + j*n] for j < R (each pass a coalesced stream) and
// writes w[i] with their sum.
template <int R>
__global__ void m_mix(const float4 *r, float4 *w, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 s = make_float4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < R; j++) {
        float4 v = r[i + j * n];
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    w[i] = s;
}
// The seed's stride kernel and its two halves (elem 4 or 8 as T).
template <typename T>
__global__ void m_stride_rw(T *a, uint64_t s) {
    uint64_t i = ((uint64_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
}
template <typename T>
__global__ void m_stride_ro(const T *a, float *out, uint64_t s) {
    uint64_t i = ((uint64_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    T v = a[i];
    if (v == (T)NEVER) out[0] = 1;
}
template <typename T>
__global__ void m_stride_wo(T *a, uint64_t s) {
    uint64_t i = ((uint64_t)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = (T)1.5;
}

static float4 *W, *R, *F;  // write, read, flush buffers
static char *S;            // stride buffer
static float *OUT;
static const uint64_t W_BYTES = 256 * MiB, R_BYTES = 1024 * MiB, F_BYTES = 512 * MiB;
static const uint64_t S_BYTES = 33 * 4 * MiB;

static uint32_t blocks(uint64_t threads) { return (uint32_t)((threads + 255) / 256); }
static void sync() {
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}
static void mark(const char *fam, const std::string &p, const char *step) {
    printf("CASE,%s,%s,%s\n", fam, p.c_str(), step);
    fflush(stdout);
}
static void flush() {
    uint64_t n = F_BYTES / 16;
    f_flush<<<blocks(n), 256>>>(F, OUT, n);
    sync();
}
static void mix(int r, uint64_t n) {
    switch (r) {
        case 1: m_mix<1><<<blocks(n), 256>>>(R, W, n); break;
        case 2: m_mix<2><<<blocks(n), 256>>>(R, W, n); break;
        case 3: m_mix<3><<<blocks(n), 256>>>(R, W, n); break;
        case 4: m_mix<4><<<blocks(n), 256>>>(R, W, n); break;
        case 6: m_mix<6><<<blocks(n), 256>>>(R, W, n); break;
        default: m_mix<8><<<blocks(n), 256>>>(R, W, n); break;
    }
}
static void stride(const char *kind, int elem, uint64_t s) {
    uint64_t n = 4 * MiB / elem;
    std::string k = kind;
    if (elem == 4) {
        if (k == "rw") m_stride_rw<float><<<blocks(n), 256>>>((float *)S, s);
        if (k == "ro") m_stride_ro<float><<<blocks(n), 256>>>((const float *)S, OUT, s);
        if (k == "wo") m_stride_wo<float><<<blocks(n), 256>>>((float *)S, s);
    } else {
        if (k == "rw") m_stride_rw<double><<<blocks(n), 256>>>((double *)S, s);
        if (k == "ro") m_stride_ro<double><<<blocks(n), 256>>>((const double *)S, OUT, s);
        if (k == "wo") m_stride_wo<double><<<blocks(n), 256>>>((double *)S, s);
    }
}

static const int SIZES[] = {8, 16, 20, 24, 26, 28, 30, 32, 36, 40, 48, 64, 128, 256};
static const int MIXES[] = {1, 2, 3, 4, 6, 8};
static const int STRIDES[] = {4, 8, 12, 16, 20, 24, 28, 32};

// Counts words of `buf` (n float4) that differ from `want`.
static uint64_t bad_words(const float4 *buf, uint64_t n, float want) {
    std::vector<float> h(n * 4);
    CK(cudaMemcpy(h.data(), buf, n * 16, cudaMemcpyDeviceToHost));
    uint64_t bad = 0;
    for (float x : h) bad += x != want;
    return bad;
}

int main(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# device: %s, CC %d.%d, %d SMs, L2 %d bytes\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize);
    CK(cudaMalloc(&W, W_BYTES));
    CK(cudaMalloc(&R, R_BYTES));
    CK(cudaMalloc(&F, F_BYTES));
    CK(cudaMalloc(&S, S_BYTES));
    CK(cudaMalloc(&OUT, 256));
    // 0x3e800000 is 0.25f: each mix sum of R reads is R x 0.25, exact.
    std::vector<uint32_t> q(R_BYTES / 4 / 256, 0x3e800000u);
    for (uint64_t off = 0; off < R_BYTES; off += q.size() * 4)
        CK(cudaMemcpy((char *)R + off, q.data(), q.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(W, 0, W_BYTES));
    CK(cudaMemset(F, 0, F_BYTES));
    CK(cudaMemset(S, 0, S_BYTES));
    CK(cudaMemset(OUT, 0, 256));
    sync();
    if (mode == "check") {
        uint64_t n = W_BYTES / 16;
        CK(cudaMemset(W, 0xff, W_BYTES));
        m_write<<<blocks(n), 256>>>(W, n);
        sync();
        printf("check m_write: %llu bad words\n", (unsigned long long)bad_words(W, n, 1.5f));
        for (int r : MIXES) {
            uint64_t m = 128 * MiB / 16;
            CK(cudaMemset(W, 0xff, W_BYTES));
            mix(r, m);
            sync();
            printf("check m_mix r=%d: %llu bad words\n", r, (unsigned long long)bad_words(W, m, 0.25f * r));
        }
        for (int elem : {4, 8}) {
            for (int s : STRIDES) {
                uint64_t n = 4 * MiB / elem, bad = 0;
                CK(cudaMemset(S, 0, S_BYTES));
                stride("rw", elem, s);
                sync();
                stride("wo", elem, s);  // 1.5 everywhere it stores
                sync();
                std::vector<char> h(S_BYTES);
                CK(cudaMemcpy(h.data(), S, S_BYTES, cudaMemcpyDeviceToHost));
                for (uint64_t t = 0; t < n; t++) {
                    double v = elem == 4 ? (double)((float *)h.data())[t * s] : ((double *)h.data())[t * s];
                    bad += v != 1.5;
                }
                printf("check stride elem=%d stride=%d: %llu bad words\n", elem, s, (unsigned long long)bad);
            }
        }
        return 0;
    }
    if (mode == "seq") {
        char p[64];
        for (int f : SIZES) {
            uint64_t n = (uint64_t)f * MiB / 16;
            snprintf(p, sizeof p, "fMB=%d", f);
            flush();
            mark("dirty_write", p, "write");
            m_write<<<blocks(n), 256>>>(W, n);
            sync();
            mark("dirty_write", p, "readback");
            m_readback<<<blocks(n), 256>>>(W, OUT, n);
            sync();
            mark("dirty_write", p, "drain");
            m_drain<<<blocks(F_BYTES / 16), 256>>>(R, OUT, F_BYTES / 16);
            sync();
        }
        for (int r : MIXES) {
            uint64_t n = 128 * MiB / 16;
            snprintf(p, sizeof p, "r=%d", r);
            flush();
            mark("dirty_mix", p, "mix");
            mix(r, n);
            sync();
            mark("dirty_mix", p, "drain");
            // The drain reads the flush buffer, which the mix did not touch.
            m_drain<<<blocks(F_BYTES / 16), 256>>>(F, OUT, F_BYTES / 16);
            sync();
        }
        return 0;
    }
    if (mode == "stride") {
        char p[64];
        for (const char *kind : {"rw", "ro", "wo"}) {
            for (int elem : {4, 8}) {
                for (int s : STRIDES) {
                    snprintf(p, sizeof p, "elem=%d;stride=%d", elem, s);
                    std::string fam = std::string("stride_") + kind;
                    mark(fam.c_str(), p, "run");
                    stride(kind, elem, s);
                    sync();
                }
            }
        }
        return 0;
    }
    fprintf(stderr, "usage: l2dirty check | seq | stride\n");
    return 2;
}
