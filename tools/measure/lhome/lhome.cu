// Which L2 partition is each line's home, seen from each SM of the H200.
//
// Build:  nvcc -O3 -arch=sm_90 -o lhome lhome.cu
// Run:    ./lhome OUTDIR         every SM, the lines below (lat.csv)
//         ./lhome OUTDIR bits    SMs 0 and 2 (one in each partition, as the
//                                first run finds), over 32 GiB: line 0, every
//                                line 2^b (b = 0..27) and 4,096 lines drawn at
//                                random below 2^28 (bits.csv)
//
// For every SM in turn: the L2 is emptied of the lines (256 MiB of other data
// read through it), then one thread on that SM loads lines one after another
// (ld.global.cg, each address depending on the value loaded before, so one
// load at a time), 4,096 consecutive 128-byte lines from the start of a
// buffer and 1,024 from 1 GiB further, and times each load with the SM's
// cycle counter (clock64 before the load and after the store of its value).
// Every line misses to DRAM. A lone DRAM load takes about 548 cycles when the
// line is homed in the SM's own L2 partition and 729 when it is homed in the
// other (tools/measure/dlat), plus up to 560 cycles in 13% of loads that meet
// a refresh; the walk is done three times per SM and each line keeps its
// least latency, which no refresh delays in all three.
//
// Writes:
//   OUTDIR/lat.csv    sm,region,line,lat0,lat1,lat2   (every SM, every line)
//   OUTDIR/smid.csv   sm,found   (whether a block ran on that SM)
//   OUTDIR/bits.csv   sm,line,lat0,lat1,lat2   (bits mode)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ck.cuh"
#include "../clock.cuh"

const int NA = 4096;  // lines from the buffer's start
const int NB = 1024;  // lines from 1 GiB on
const uint64_t B_LINE = (1ull << 30) / 128;

// The same over a list of n line numbers.
__global__ void walk_list(const uint32_t* a, const uint64_t* lines, int n, uint32_t target, int* claimed,
                          uint32_t* lat, uint32_t* sink) {
    if (threadIdx.x != 0 || smid() != target) return;
    if (atomicCAS(claimed, 0, 1) != 0) return;
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        long long t0 = clk();
        uint32_t x = ld_cg(a + lines[i] * 32 + v);
        sink[i & 1023] = x;
        long long t1 = clk();
        v = x;
        lat[i] = (uint32_t)(t1 - t0);
    }
}

// Lane 0 of the first block to land on SM `target` walks the lines.
__global__ void walk(const uint32_t* a, uint32_t target, int* claimed, uint32_t* lat, uint32_t* sink) {
    if (threadIdx.x != 0 || smid() != target) return;
    if (atomicCAS(claimed, 0, 1) != 0) return;
    uint32_t v = 0;
    for (int i = 0; i < NA + NB; i++) {
        uint64_t line = i < NA ? (uint64_t)i : B_LINE + (i - NA);
        long long t0 = clk();
        uint32_t x = ld_cg(a + line * 32 + v);
        sink[i & 1023] = x;
        long long t1 = clk();
        v = x;  // the buffer holds zeros: the next address waits for this load
        lat[i] = (uint32_t)(t1 - t0);
    }
}

int bits(const std::string& out, int sms) {
    const uint64_t L = 1ull << 28;  // 32 GiB of lines
    std::vector<uint64_t> lines{0};
    for (int b = 0; b < 28; b++) lines.push_back(1ull << b);
    uint64_t r = 88172645463325252ull;
    for (int i = 0; i < 4096; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        lines.push_back(r % L);
    }
    int n = (int)lines.size();
    const uint64_t flush_n = (256ull << 20) / 4;
    uint32_t *a, *f, *lat, *sink;
    uint64_t* dl;
    int* claimed;
    CK(cudaMalloc(&a, L * 128));
    CK(cudaMemset(a, 0, L * 128));
    CK(cudaMalloc(&f, flush_n * 4));
    CK(cudaMemset(f, 0, flush_n * 4));
    CK(cudaMalloc(&lat, n * 4));
    CK(cudaMalloc(&dl, n * 8));
    CK(cudaMemcpy(dl, lines.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&claimed, 4));
    CK(cudaDeviceSynchronize());
    FILE* fb = fopen((out + "/bits.csv").c_str(), "w");
    if (!fb) return 1;
    fprintf(fb, "sm,line,lat0,lat1,lat2\n");
    std::vector<uint32_t> h(3 * n);
    for (int s : {0, 2}) {
        for (int k = 0; k < 3; k++) {
            read_all<<<sms * 4, 256>>>(f, flush_n, sink);
            CK(cudaMemset(claimed, 0, 4));
            walk_list<<<sms * 8, 32>>>(a, dl, n, s, claimed, lat, sink);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data() + k * n, lat, n * 4, cudaMemcpyDeviceToHost));
        }
        for (int i = 0; i < n; i++)
            fprintf(fb, "%d,%llu,%u,%u,%u\n", s, (unsigned long long)lines[i], h[i], h[n + i], h[2 * n + i]);
    }
    fclose(fb);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: lhome OUTDIR\n");
        return 2;
    }
    std::string out = argv[1];
    int dev = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (argc > 2 && std::string(argv[2]) == "bits") return bits(out, sms);
    const uint64_t bytes = (1ull << 30) + (uint64_t)NB * 128 + 4096;
    const uint64_t flush_n = (256ull << 20) / 4;
    uint32_t *a, *f, *lat, *sink;
    int* claimed;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMemset(a, 0, bytes));
    CK(cudaMalloc(&f, flush_n * 4));
    CK(cudaMemset(f, 0, flush_n * 4));
    CK(cudaMalloc(&lat, (NA + NB) * 4));
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&claimed, 4));
    CK(cudaDeviceSynchronize());
    FILE* fl = fopen((out + "/lat.csv").c_str(), "w");
    FILE* fs = fopen((out + "/smid.csv").c_str(), "w");
    if (!fl || !fs) {
        fprintf(stderr, "cannot write to %s\n", out.c_str());
        return 1;
    }
    fprintf(fl, "sm,region,line,lat0,lat1,lat2\n");
    fprintf(fs, "sm,found\n");
    std::vector<uint32_t> h(3 * (NA + NB));
    for (int s = 0; s < sms; s++) {
        bool found = true;
        for (int r = 0; r < 3; r++) {
            read_all<<<sms * 4, 256>>>(f, flush_n, sink);
            CK(cudaMemset(claimed, 0, 4));
            CK(cudaMemset(lat, 0xff, (NA + NB) * 4));
            walk<<<sms * 8, 32>>>(a, s, claimed, lat, sink);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            int c = 0;
            CK(cudaMemcpy(&c, claimed, 4, cudaMemcpyDeviceToHost));
            found = found && c == 1;
            CK(cudaMemcpy(h.data() + r * (NA + NB), lat, (NA + NB) * 4, cudaMemcpyDeviceToHost));
        }
        fprintf(fs, "%d,%d\n", s, found ? 1 : 0);
        if (!found) continue;
        for (int i = 0; i < NA + NB; i++) {
            int region = i < NA ? 0 : 1;
            uint64_t line = i < NA ? (uint64_t)i : B_LINE + (i - NA);
            fprintf(fl, "%d,%d,%llu,%u,%u,%u\n", s, region, (unsigned long long)line, h[i], h[NA + NB + i],
                    h[2 * (NA + NB) + i]);
        }
        fprintf(stderr, "sm %d done\n", s);
    }
    fclose(fl);
    fclose(fs);
    return 0;
}
