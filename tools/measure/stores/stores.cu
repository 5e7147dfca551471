// Store path of a Hopper GPU: seed "clear vector" kernels, partial-sector
// stores and full-sector store streams.
//
// Build:  nvcc -O3 -arch=sm_90 -o stores stores.cu
// Run:    ./stores time FILE.csv  check every case, then time it with CUDA
//                                 events (warm, back to back) and a CUDA
//                                 graph; one CSV row per case into FILE.csv
//         ./stores ncu            every case launched twice, nothing else;
//                                 meant to run under Nsight Compute. Prints
//                                 one "CASE,..." line before each case.
//         ./stores time-sweep FILE.csv, ./stores ncu-sweep
//                                 the same for the footprint sweep (second
//                                 run): partial_store K=4, K=32 and store16
//                                 at 1, 2, 4, 8, 16, 32, 48 MiB
//         ./stores probe          one small launch (checks ncu metric names)
//
// All data are float; blocks of 256 threads unless a case says otherwise.
// Every case writes into one 1 GiB cudaMalloc buffer, from its start.
//
// Cases (kernel, size):
//   clear_coalesced     id = blockIdx.x*blockDim.x+threadIdx.x;
//                       if (id<n) v[id]=0;                  grid n/256
//   clear_four          id = (blockIdx.x*blockDim.x+threadIdx.x)*4;
//                       if (id<n){v[id]=0;v[id+1]=0;v[id+2]=0;v[id+3]=0;}
//                                                           grid n/4/256
//   clear_four_ptx      the same, each store an inline-PTX st.global.f32
//                       (four separate 4-byte stores whatever the compiler
//                       would do with the C version)
//   clear_stride_loop   id = blockIdx.x*blockDim.x+threadIdx.x;
//                       for(i=0;i<4;i++,id+=32) if(id<n) v[id]=0;  grid n/256
//   fill_coalesced      clear_coalesced storing a non-zero value (control:
//                       does the value 0 matter?)
//     each at n = 4 Mi floats (16 MiB) and 64 Mi floats (256 MiB)
//   partial_store<K>    thread t writes v[(t/(K/4))*8 + t%(K/4)] = val:
//                       every 32-byte sector of the footprint gets exactly
//                       its first K bytes written by 4-byte stores;
//                       K in {4,8,16,32}; footprint 16 MiB, 256 MiB, 1 GiB;
//                       threads = (footprint/32)*(K/4), grid threads/256
//   store16             ((float4*)v)[id] = (val,val,val,val), one 16-byte
//                       store per thread, footprint 16 MiB, 256 MiB, 1 GiB
//   store16_gridstride  the same as a grid-stride loop, 1056 x 256 threads,
//                       1 GiB

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../ck.cuh"
#define CKL() CK(cudaGetLastError())

static const size_t MiB = 1024 * 1024;
static const size_t GiB = 1024 * MiB;
static const size_t BUF_BYTES = GiB;
static const float VAL = 1.5f;            // non-zero value of the val kernels
static const uint32_t POISON = 0xFFFFFFFFu;  // memset 0xFF: a NaN pattern

// ---------------------------------------------------------------- kernels

__global__ void clear_coalesced(float* v, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) v[id] = 0.0f;
}

__global__ void clear_four(float* v, int n) {
    int id = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (id < n) {
        v[id] = 0.0f;
        v[id + 1] = 0.0f;
        v[id + 2] = 0.0f;
        v[id + 3] = 0.0f;
    }
}

__device__ __forceinline__ void st_f32(float* p, float x) {
    asm volatile("st.global.f32 [%0], %1;" : : "l"(p), "f"(x) : "memory");
}

__global__ void clear_four_ptx(float* v, int n) {
    int id = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (id < n) {
        st_f32(v + id, 0.0f);
        st_f32(v + id + 1, 0.0f);
        st_f32(v + id + 2, 0.0f);
        st_f32(v + id + 3, 0.0f);
    }
}

__global__ void clear_stride_loop(float* v, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 4; i++, id += 32)
        if (id < n) v[id] = 0.0f;
}

__global__ void fill_coalesced(float* v, int n, float val) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) v[id] = val;
}

template <int K>
__global__ void partial_store(float* v, int nthreads, float val) {
    const int w = K / 4;  // floats written per 32-byte sector
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nthreads) v[(t / w) * 8 + t % w] = val;
}

__global__ void store16(float4* v, int n4, float val) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n4) v[id] = make_float4(val, val, val, val);
}

__global__ void store16_gridstride(float4* v, long long n4, float val) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += stride)
        v[i] = make_float4(val, val, val, val);
}

// ---------------------------------------------------------------- cases

enum Kind {
    K_CLEAR_COALESCED,
    K_CLEAR_FOUR,
    K_CLEAR_FOUR_PTX,
    K_CLEAR_STRIDE_LOOP,
    K_FILL_COALESCED,
    K_PARTIAL,
    K_STORE16,
    K_STORE16_GS
};

struct Case {
    Kind kind;
    std::string kernel;  // kernel function name (ncu "Kernel Name" prefix)
    std::string params;
    long long n;          // elements (floats) or threads (partial) or float4s
    long long footprint;  // bytes spanned from the buffer start
    int k;                // bytes written per sector (partial), else 0
    unsigned grid, block;
    long long bytes_written;  // distinct bytes written
    long long bytes_stored;   // sum of the sizes of all executed stores
    long long sectors;        // distinct 32-byte sectors written
};

static std::vector<Case> make_cases() {
    std::vector<Case> cs;
    const long long ns[2] = {4LL * 1024 * 1024, 64LL * 1024 * 1024};
    for (long long n : ns) {
        char p[64];
        snprintf(p, sizeof p, "n=%lld", n);
        long long fb = n * 4;
        cs.push_back({K_CLEAR_COALESCED, "clear_coalesced", p, n, fb, 0,
                      (unsigned)(n / 256), 256, fb, fb, fb / 32});
        cs.push_back({K_CLEAR_FOUR, "clear_four", p, n, fb, 0,
                      (unsigned)(n / 4 / 256), 256, fb, fb, fb / 32});
        cs.push_back({K_CLEAR_FOUR_PTX, "clear_four_ptx", p, n, fb, 0,
                      (unsigned)(n / 4 / 256), 256, fb, fb, fb / 32});
        // store i (0..3) of thread id is executed when id + 32 i < n.
        cs.push_back({K_CLEAR_STRIDE_LOOP, "clear_stride_loop", p, n, fb, 0,
                      (unsigned)(n / 256), 256, fb, 4 * (4 * n - 32 * 6),
                      fb / 32});
        cs.push_back({K_FILL_COALESCED, "fill_coalesced", p, n, fb, 0,
                      (unsigned)(n / 256), 256, fb, fb, fb / 32});
    }
    const long long fps[3] = {(long long)(16 * MiB), (long long)(256 * MiB),
                              (long long)GiB};
    const int ks[4] = {4, 8, 16, 32};
    for (long long fp : fps) {
        for (int k : ks) {
            char p[64];
            snprintf(p, sizeof p, "footprint=%lld;k=%d", fp, k);
            long long sectors = fp / 32;
            long long threads = sectors * (k / 4);
            cs.push_back({K_PARTIAL, "partial_store", p, threads, fp, k,
                          (unsigned)(threads / 256), 256, sectors * k,
                          sectors * k, sectors});
        }
        char p[64];
        snprintf(p, sizeof p, "footprint=%lld", fp);
        long long n4 = fp / 16;
        cs.push_back({K_STORE16, "store16", p, n4, fp, 0,
                      (unsigned)(n4 / 256), 256, fp, fp, fp / 32});
    }
    {
        long long fp = (long long)GiB;
        char p[64];
        snprintf(p, sizeof p, "footprint=%lld;grid=1056", fp);
        cs.push_back({K_STORE16_GS, "store16_gridstride", p, fp / 16, fp, 0,
                      1056, 256, fp, fp, fp / 32});
    }
    return cs;
}

// Footprint sweep (second run): partial_store K=4 and K=32 and store16 at
// footprints from 1 to 48 MiB, all below the 60 MiB L2.
static std::vector<Case> make_sweep_cases() {
    std::vector<Case> cs;
    const long long mibs[7] = {1, 2, 4, 8, 16, 32, 48};
    const int ks[2] = {4, 32};
    for (long long m : mibs) {
        long long fp = m * (long long)MiB;
        for (int k : ks) {
            char p[64];
            snprintf(p, sizeof p, "footprint=%lld;k=%d", fp, k);
            long long sectors = fp / 32;
            long long threads = sectors * (k / 4);
            cs.push_back({K_PARTIAL, "partial_store", p, threads, fp, k,
                          (unsigned)(threads / 256), 256, sectors * k,
                          sectors * k, sectors});
        }
        char p[64];
        snprintf(p, sizeof p, "footprint=%lld", fp);
        long long n4 = fp / 16;
        cs.push_back({K_STORE16, "store16", p, n4, fp, 0,
                      (unsigned)(n4 / 256), 256, fp, fp, fp / 32});
    }
    return cs;
}

static void launch(const Case& c, float* buf, cudaStream_t s) {
    const int n = (int)c.n;
    switch (c.kind) {
        case K_CLEAR_COALESCED:
            clear_coalesced<<<c.grid, c.block, 0, s>>>(buf, n);
            break;
        case K_CLEAR_FOUR:
            clear_four<<<c.grid, c.block, 0, s>>>(buf, n);
            break;
        case K_CLEAR_FOUR_PTX:
            clear_four_ptx<<<c.grid, c.block, 0, s>>>(buf, n);
            break;
        case K_CLEAR_STRIDE_LOOP:
            clear_stride_loop<<<c.grid, c.block, 0, s>>>(buf, n);
            break;
        case K_FILL_COALESCED:
            fill_coalesced<<<c.grid, c.block, 0, s>>>(buf, n, VAL);
            break;
        case K_PARTIAL:
            switch (c.k) {
                case 4: partial_store<4><<<c.grid, c.block, 0, s>>>(buf, n, VAL); break;
                case 8: partial_store<8><<<c.grid, c.block, 0, s>>>(buf, n, VAL); break;
                case 16: partial_store<16><<<c.grid, c.block, 0, s>>>(buf, n, VAL); break;
                case 32: partial_store<32><<<c.grid, c.block, 0, s>>>(buf, n, VAL); break;
                default: fprintf(stderr, "bad k %d\n", c.k); exit(1);
            }
            break;
        case K_STORE16:
            store16<<<c.grid, c.block, 0, s>>>((float4*)buf, n, VAL);
            break;
        case K_STORE16_GS:
            store16_gridstride<<<c.grid, c.block, 0, s>>>((float4*)buf, c.n, VAL);
            break;
    }
    CKL();
}

// Poison the footprint, launch once, check every word of the footprint.
// Returns the number of wrong words.
static long long check_case(const Case& c, float* buf, uint32_t* host,
                            cudaStream_t s) {
    CK(cudaMemsetAsync(buf, 0xFF, (size_t)c.footprint, s));
    launch(c, buf, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(host, buf, (size_t)c.footprint, cudaMemcpyDeviceToHost));
    uint32_t val_bits;
    memcpy(&val_bits, &VAL, 4);
    const long long words = c.footprint / 4;
    long long bad = 0;
    for (long long i = 0; i < words; i++) {
        uint32_t want;
        switch (c.kind) {
            case K_CLEAR_COALESCED:
            case K_CLEAR_FOUR:
            case K_CLEAR_FOUR_PTX:
            case K_CLEAR_STRIDE_LOOP:
                want = 0u;
                break;
            case K_PARTIAL:
                want = ((i % 8) < c.k / 4) ? val_bits : POISON;
                break;
            default:
                want = val_bits;
                break;
        }
        if (host[i] != want) {
            if (bad < 3)
                fprintf(stderr, "check %s %s: word %lld = 0x%08x, want 0x%08x\n",
                        c.kernel.c_str(), c.params.c_str(), i, host[i], want);
            bad++;
        }
    }
    return bad;
}

static void print_device() {
    int dev = 0, rt = 0, drv = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    int l2 = 0, sms = 0, ecc = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CK(cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    printf("# device: %s, compute capability %d.%d, runtime %d, driver %d, "
           "%d SMs, L2 %d bytes, ECC %d\n",
           p.name, p.major, p.minor, rt, drv, sms, l2, ecc);
}

static const int WARMUP = 2, BATCHES = 5, PER_BATCH = 20;

static void time_mode(const char* path, const std::vector<Case>& cs) {
    print_device();
    FILE* f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f,
            "kernel,params,ms_per_launch,gbps_written,bytes_written,"
            "bytes_stored,sectors_written,footprint_bytes,k_bytes,n,grid,block,"
            "batch_ms_min,batch_ms_max,graph_ms_per_launch,check_bad_words\n");
    float* buf = nullptr;
    CK(cudaMalloc(&buf, BUF_BYTES));
    CK(cudaMemset(buf, 0, BUF_BYTES));
    uint32_t* host = (uint32_t*)malloc(BUF_BYTES);
    if (!host) {
        fprintf(stderr, "host malloc failed\n");
        exit(1);
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    long long total_bad = 0;
    printf("%-20s %-28s %10s %9s %10s %10s %6s\n", "kernel", "params",
           "us/launch", "GB/s", "graph_us", "ns/sector", "bad");
    for (const Case& c : cs) {
        long long bad = check_case(c, buf, host, s);
        total_bad += bad;
        for (int i = 0; i < WARMUP; i++) launch(c, buf, s);
        CK(cudaStreamSynchronize(s));
        std::vector<float> per;
        for (int b = 0; b < BATCHES; b++) {
            CK(cudaEventRecord(e0, s));
            for (int i = 0; i < PER_BATCH; i++) launch(c, buf, s);
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            per.push_back(ms / PER_BATCH);
        }
        std::sort(per.begin(), per.end());
        float med = per[BATCHES / 2];
        // CUDA graph of PER_BATCH launches, median of BATCHES replays.
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < PER_BATCH; i++) launch(c, buf, s);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        std::vector<float> gper;
        for (int b = 0; b < BATCHES; b++) {
            CK(cudaEventRecord(e0, s));
            CK(cudaGraphLaunch(ge, s));
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            gper.push_back(ms / PER_BATCH);
        }
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
        std::sort(gper.begin(), gper.end());
        float gmed = gper[BATCHES / 2];
        double gbps = (double)c.bytes_written / (med * 1e-3) / 1e9;
        fprintf(f, "%s,%s,%.6f,%.1f,%lld,%lld,%lld,%lld,%s,%lld,%u,%u,%.6f,%.6f,%.6f,%lld\n",
                c.kernel.c_str(), c.params.c_str(), med, gbps, c.bytes_written,
                c.bytes_stored, c.sectors, c.footprint,
                c.k ? std::to_string(c.k).c_str() : "", c.n, c.grid, c.block,
                per.front(), per.back(), gmed, bad);
        fflush(f);
        printf("%-20s %-28s %10.2f %9.1f %10.2f %10.4f %6lld\n", c.kernel.c_str(),
               c.params.c_str(), med * 1e3, gbps, gmed * 1e3,
               med * 1e6 / (double)c.sectors, bad);
        fflush(stdout);
    }
    fclose(f);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(buf));
    free(host);
    printf("# checks: %lld wrong words in total (%s)\n", total_bad,
           total_bad == 0 ? "passed" : "FAILED");
    if (total_bad != 0) exit(2);
}

static void ncu_mode(const std::vector<Case>& cs) {
    print_device();
    float* buf = nullptr;
    CK(cudaMalloc(&buf, BUF_BYTES));
    CK(cudaMemset(buf, 0, BUF_BYTES));
    CK(cudaDeviceSynchronize());
    printf("CASE,index,kernel,params,n,footprint_bytes,k_bytes,grid,block,"
           "bytes_written,bytes_stored,sectors_written\n");
    int idx = 0;
    for (const Case& c : cs) {
        printf("CASE,%d,%s,%s,%lld,%lld,%s,%u,%u,%lld,%lld,%lld\n", idx++,
               c.kernel.c_str(), c.params.c_str(), c.n, c.footprint,
               c.k ? std::to_string(c.k).c_str() : "", c.grid, c.block,
               c.bytes_written, c.bytes_stored, c.sectors);
        fflush(stdout);
        for (int r = 0; r < 2; r++) {
            launch(c, buf, 0);
            CK(cudaDeviceSynchronize());
        }
    }
    CK(cudaFree(buf));
    printf("# ncu mode done, %d cases x 2 launches\n", idx);
}

static void probe_mode() {
    float* buf = nullptr;
    CK(cudaMalloc(&buf, 1 * MiB));
    clear_coalesced<<<1024, 256>>>(buf, 256 * 1024);
    CKL();
    CK(cudaDeviceSynchronize());
    CK(cudaFree(buf));
    printf("# probe done\n");
}

int main(int argc, char** argv) {
    CK(cudaSetDevice(0));
    if (argc > 2 && strcmp(argv[1], "time") == 0)
        time_mode(argv[2], make_cases());
    else if (argc > 2 && strcmp(argv[1], "time-sweep") == 0)
        time_mode(argv[2], make_sweep_cases());
    else if (argc > 1 && strcmp(argv[1], "ncu") == 0)
        ncu_mode(make_cases());
    else if (argc > 1 && strcmp(argv[1], "ncu-sweep") == 0)
        ncu_mode(make_sweep_cases());
    else if (argc > 1 && strcmp(argv[1], "probe") == 0)
        probe_mode();
    else {
        fprintf(stderr, "usage: %s time FILE.csv | time-sweep FILE.csv | ncu | ncu-sweep | probe\n", argv[0]);
        return 1;
    }
    return 0;
}
