/* Positioned reads or a memory map, for the workers' own reads of a regular file
 * (docs/performance.md#reading-in-parallel): each way reads every byte of FILE (from the page
 * cache) in pieces of 1 MiB and counts its line feeds with memchr, as a worker finds its lines.
 * `pread` copies each piece into one reused buffer; `mmap` maps the file once and reads the
 * pieces in place (page faults instead of the copy); `populate` maps each piece on its own
 * with MAP_POPULATE (the page tables filled in one call, as a worker would map its piece).
 * Interleaved rounds, medians.
 *
 *   cc -O2 -o /tmp/pread_or_mmap benches/pread_or_mmap.c && /tmp/pread_or_mmap FILE [ROUNDS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PIECE (1 << 20)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static long count(const char *p, size_t n) {
    long lines = 0;
    const char *end = p + n;
    while ((p = memchr(p, '\n', end - p)) != NULL) {
        lines++;
        p++;
    }
    return lines;
}

static long by_pread(int fd, off_t size, char *buf) {
    long lines = 0;
    for (off_t at = 0; at < size; at += PIECE) {
        ssize_t n = pread(fd, buf, PIECE, at);
        if (n <= 0) { perror("pread"); exit(2); }
        lines += count(buf, (size_t)n);
    }
    return lines;
}

static long by_mmap(int fd, off_t size) {
    char *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) { perror("mmap"); exit(2); }
    long lines = 0;
    for (off_t at = 0; at < size; at += PIECE) {
        size_t n = (size_t)(size - at < PIECE ? size - at : PIECE);
        lines += count(m + at, n);
    }
    munmap(m, (size_t)size);
    return lines;
}

static long by_populate(int fd, off_t size) {
    long lines = 0;
    for (off_t at = 0; at < size; at += PIECE) {
        size_t n = (size_t)(size - at < PIECE ? size - at : PIECE);
        char *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, at);
        if (m == MAP_FAILED) { perror("mmap"); exit(2); }
        lines += count(m, n);
        munmap(m, n);
    }
    return lines;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: pread_or_mmap FILE [ROUNDS]\n"); return 2; }
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 2; }
    char *buf = malloc(PIECE);
    double t_pread[64], t_mmap[64], t_populate[64];
    if (rounds > 64) rounds = 64;
    for (int r = 0; r < rounds; r++) {
        double s = now();
        long a = by_pread(fd, st.st_size, buf);
        t_pread[r] = now() - s;
        s = now();
        long b = by_mmap(fd, st.st_size);
        t_mmap[r] = now() - s;
        s = now();
        long c = by_populate(fd, st.st_size);
        t_populate[r] = now() - s;
        if (a != b || a != c) { fprintf(stderr, "counts differ\n"); return 1; }
    }
    qsort(t_pread, rounds, sizeof(double), by_double);
    qsort(t_mmap, rounds, sizeof(double), by_double);
    qsort(t_populate, rounds, sizeof(double), by_double);
    double mb = st.st_size / 1e6;
    printf("pread     %8.0f MB/s\nmmap      %8.0f MB/s\npopulate  %8.0f MB/s\n"
           "mmap / pread: %.2f\npopulate / pread: %.2f\n",
           mb / t_pread[rounds / 2], mb / t_mmap[rounds / 2], mb / t_populate[rounds / 2],
           t_pread[rounds / 2] / t_mmap[rounds / 2], t_pread[rounds / 2] / t_populate[rounds / 2]);
    return 0;
}
