"""Threshold kernel: dense scores + gold -> entries with ``score >= threshold``.

One pass over memory and one parallel region per call. Threads take row chunks
from a shared counter (so a thread slowed down by another process simply takes
fewer chunks) and append each chunk's survivors to buffers of their own; the
buffers are then gathered in chunk order, so the output is in row-major order
whatever the thread count and schedule. Each value is read once: a row segment
is compared into a bit mask with SIMD instructions (``_simd.h``: SSE2, or AVX2
where the CPU has it; NaN and out-of-range values are caught by the same
comparisons), and only the set bits are visited (survivors are ~0.4% of the
entries at t = 0.01).

Memory stays bounded on memory maps: where the wrapper can name the file
under a map (Linux), threads read their chunks with ``pread`` into buffers of
their own and no page of the file is mapped (faulting the pages of a
page-cached file in and out took most of a scan); elsewhere the pages that lie
wholly inside a chunk are released from the process once it is read
(``madvise(MADV_DONTNEED)``; the file stays in the page cache). While
gathering, each buffer's consumed pages are released too, so the peak is about
one copy of the survivors.

The kernel never raises on bad data: it records the first chunk holding a NaN
or a value outside [0, 1] and skips later chunks; the wrapper
(:func:`sparsecal.core.entries.threshold`) names the value.

References
----------
Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with Marginal
Calibration for Sparse Tagsets", Section 3.1 (thresholding).
"""
from cython.parallel cimport parallel, threadid
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset

import numpy as np

from ._types cimport floating

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <windows.h>
    static long long sc_fetch_add(long long *p, long long v)
    { return InterlockedExchangeAdd64(p, v); }
    static long long sc_load(long long *p)
    { return InterlockedCompareExchange64(p, 0, 0); }
    static void sc_min(long long *p, long long v) {
        long long cur = sc_load(p), prev;
        while (v < cur) {
            prev = InterlockedCompareExchange64(p, v, cur);
            if (prev == cur) break;
            cur = prev;
        }
    }
    #else
    static long long sc_fetch_add(long long *p, long long v)
    { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    static long long sc_load(long long *p)
    { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static void sc_min(long long *p, long long v) {
        long long cur = __atomic_load_n(p, __ATOMIC_RELAXED);
        while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED,
                                                       __ATOMIC_RELAXED)) {}
    }
    #endif

    #if defined(_MSC_VER)
    static int sc_cas(long long *p, long long expected, long long desired)
    { return InterlockedCompareExchange64(p, desired, expected) == expected; }
    static void sc_set_done(volatile char *p) { InterlockedExchange8((char *) p, 1); }
    static int sc_is_done(volatile char *p) { return InterlockedOr8((char *) p, 0) != 0; }
    #else
    static int sc_cas(long long *p, long long expected, long long desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE);
    }
    static void sc_set_done(volatile char *p) { __atomic_store_n(p, 1, __ATOMIC_RELEASE); }
    static int sc_is_done(volatile char *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    #endif

    #if defined(__linux__)
    #include <sys/mman.h>
    #include <unistd.h>
    /* Drop from this process the pages holding bytes [from, to) of the block at
       data (a shared file mapping keeps its data in the file). Both ends are
       rounded down to pages, so the page shared with the bytes before `from`
       goes too (they must be done), the page holding byte `to` stays; at the
       block's start (from == 0) a page holding bytes before the block stays. */
    static void sc_release_pages(const char *data, size_t from, size_t to) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t a = (size_t) data + from, b = ((size_t) data + to) & ~(page - 1);
        a = from == 0 ? (a + page - 1) & ~(page - 1) : a & ~(page - 1);
        if (b > a) madvise((void *) a, b - a, MADV_DONTNEED);
    }
    #else
    static void sc_release_pages(const char *data, size_t from, size_t to)
    { (void) data; (void) from; (void) to; }
    #endif
    /* Read bytes [offset, offset + n) of the file fd into buf: 0, or the errno
       of a failed read (EIO for a file that ends before them). Linux only, as
       entries._FileSource, the one caller that passes a file (unistd.h is
       included above for Linux alone). */
    #if defined(__linux__)
    #include <errno.h>
    static int sc_pread_all(int fd, char *buf, long long n, long long offset) {
        while (n > 0) {
            ssize_t got = pread(fd, buf, (size_t) n, (off_t) offset);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return errno ? errno : EIO;
            if (got == 0) return EIO;
            buf += got; n -= got; offset += got;
        }
        return 0;
    }
    #else
    static int sc_pread_all(int fd, char *buf, long long n, long long offset)
    { (void) fd; (void) buf; (void) n; (void) offset; return 38; /* ENOSYS */ }
    #endif
    /* Release the consumed part [*done, end) of one of our own buffers (read
       front to back while gathering), in steps of at least 4 MiB. */
    static void sc_release_consumed(const char **done, const char *end) {
        if (end - *done >= (4 << 20)) {
            sc_release_pages(*done, 0, (size_t) (end - *done));
            *done = end;
        }
    }
    """
    long long sc_fetch_add(long long* p, long long v) noexcept nogil
    long long sc_load(long long* p) noexcept nogil
    void sc_min(long long* p, long long v) noexcept nogil
    int sc_cas(long long* p, long long expected, long long desired) noexcept nogil
    void sc_set_done(char* p) noexcept nogil
    int sc_is_done(char* p) noexcept nogil
    void sc_release_pages(const char* data, size_t start, size_t stop) noexcept nogil
    void sc_release_consumed(const char** done, const char* end) noexcept nogil
    int sc_pread_all(int fd, char* buf, long long n, long long offset) noexcept nogil


cdef extern from "_simd.h":
    int sc_mask_f32(const float* x, Py_ssize_t n, float t, uint64_t* mask) noexcept nogil
    int sc_mask_f64(const double* x, Py_ssize_t n, double t, uint64_t* mask) noexcept nogil
    int sc_ctz(uint64_t word) noexcept nogil
    int sc_set_level(int level) noexcept nogil


def release_bytes(const uint8_t[::1] data, size_t start, size_t stop):
    """Give back to the system the pages of ``data[start:stop]`` (rounded down
    to pages at both ends; at ``start == 0`` a page holding bytes before
    ``data`` stays). Only for shared file mappings whose bytes before ``stop``
    are no longer read: the file keeps the data."""
    if stop > start and stop <= <size_t> data.shape[0]:
        sc_release_pages(<const char*> &data[0], start, stop)


def simd_level(int level=-1):
    """Use instruction set ``level`` for the comparisons: 0 scalar, 1 SSE2, 2
    AVX2; -1 (or a level the CPU lacks) picks the best the CPU has,
    the default. For tests and benchmarks: results never depend on it.
    Returns the level now in use."""
    return sc_set_level(level)


cdef enum:
    PIECE = 16384       # values per mask (64 KiB of float32 scores)
    PIECE_WORDS = 256   # its 64-bit words


cdef struct Buffer:     # one thread's survivors, in the order of its chunks
    char* score
    int32_t* tag
    uint8_t* label
    int64_t* token
    int64_t size
    int64_t capacity
    int64_t read         # gather: entries copied out so far
    const char* released[4]   # gather: each array is released up to here


cdef int _grow(Buffer* b, int64_t need, size_t itemsize) noexcept nogil:
    """Make room for ``need`` entries (1.5x growth); 0, or -1 when out of memory."""
    cdef int64_t cap = max(need, b.capacity + b.capacity // 2 + 4096)
    cdef void* p
    p = realloc(b.score, cap * itemsize)
    if p == NULL:
        return -1
    b.score = <char*> p
    p = realloc(b.tag, cap * sizeof(int32_t))
    if p == NULL:
        return -1
    b.tag = <int32_t*> p
    p = realloc(b.label, cap * sizeof(uint8_t))
    if p == NULL:
        return -1
    b.label = <uint8_t*> p
    p = realloc(b.token, cap * sizeof(int64_t))
    if p == NULL:
        return -1
    b.token = <int64_t*> p
    b.capacity = cap
    return 0


cdef int _scan_rows(const floating* scores, Py_ssize_t m, Py_ssize_t n_rows,
                    const int64_t* gold, floating t, int64_t token_offset,
                    Buffer* b) noexcept nogil:
    """Append the survivors of the ``n_rows`` rows at ``scores`` (gold tags
    ``gold``, first token ``token_offset``) to ``b``: 0, 1 if a value is NaN or
    outside [0, 1] (the rest of the chunk is skipped), -1 when out of memory.

    The rows are contiguous, so they are read as one flat run of values, in
    pieces of ``PIECE``: a tight SIMD loop writes a piece's mask, then the set
    bits are mapped back to (row, column) by a running row counter."""
    cdef int64_t f0, f, n, end = n_rows * m, i = 0, row_end = m
    cdef Py_ssize_t w
    cdef uint64_t mask[PIECE_WORDS]
    cdef uint64_t word
    cdef int64_t pos = b.size
    cdef floating* out_score
    cdef int bad
    f0 = 0
    while f0 < end:
        n = min(<int64_t> PIECE, end - f0)
        if pos + n > b.capacity:
            b.size = pos
            if _grow(b, pos + n, sizeof(floating)) != 0:
                return -1
        if floating is float:
            bad = sc_mask_f32(scores + f0, n, t, mask)
        else:
            bad = sc_mask_f64(scores + f0, n, t, mask)
        if bad:
            b.size = pos
            return 1
        out_score = <floating*> b.score
        for w in range((n + 63) // 64):
            word = mask[w]
            while word != 0:        # the set bits: the survivors
                f = f0 + 64 * w + sc_ctz(word)
                word &= word - 1
                while f >= row_end:
                    i += 1
                    row_end += m
                out_score[pos] = scores[f]
                b.tag[pos] = <int32_t> (f - (row_end - m))
                b.label[pos] = gold[i] == f - (row_end - m)
                b.token[pos] = token_offset + i
                pos += 1
        f0 += n
    b.size = pos
    return 0


cdef void _free_all(char** buffers, int n) noexcept:
    """Free ``buffers`` (n of them, NULL ones too) and the array itself."""
    cdef int k
    if buffers != NULL:
        for k in range(n):
            free(buffers[k])
        free(buffers)


cdef class Survivors:
    """Survivors of one or more :meth:`scan` calls, gathered in row order by
    :meth:`gather`.

    Parameters
    ----------
    n_threads : int
        Threads of every scan (one buffer each).
    itemsize : int
        4 (float32 scores) or 8 (float64).
    """
    cdef Buffer* buffers
    cdef int n_buffers
    cdef size_t itemsize
    cdef int64_t[::1] chunk_size      # survivors of chunk c
    cdef int32_t[::1] chunk_thread    # the buffer that holds them
    cdef long long next_chunk, first_bad, rows_done, cancelled
    cdef long long released           # chunks [0, released) are done and released
    cdef int64_t n_chunks             # chunks of earlier scans
    cdef readonly bint out_of_memory
    cdef readonly int read_errno      # a failed read of the file (scan with fd)

    def __cinit__(self, int n_threads, int itemsize):
        self.n_buffers = n_threads
        self.itemsize = itemsize
        self.buffers = <Buffer*> malloc(n_threads * sizeof(Buffer))
        if self.buffers == NULL:
            raise MemoryError("cannot allocate the threshold buffers")
        memset(self.buffers, 0, n_threads * sizeof(Buffer))
        self.first_bad = -1

    def __dealloc__(self):
        self._free()

    cdef void _free(self) noexcept:
        cdef int k
        if self.buffers != NULL:
            for k in range(self.n_buffers):
                free(self.buffers[k].score)
                free(self.buffers[k].tag)
                free(self.buffers[k].label)
                free(self.buffers[k].token)
            free(self.buffers)
            self.buffers = NULL

    @property
    def rows_done(self):
        """Rows scanned so far by the running :meth:`scan` (read while it runs)."""
        return sc_load(&self.rows_done)

    @property
    def size(self):
        """Survivors held."""
        cdef int k
        return sum(self.buffers[k].size for k in range(self.n_buffers))

    def cancel(self):
        """Make a running :meth:`scan` stop after its current chunks."""
        sc_fetch_add(&self.cancelled, 1)

    cdef void _release_done(self, const char* data, int64_t n_rows, int64_t row_bytes,
                            int64_t chunk_rows, int64_t n_chunks,
                            uint8_t[::1] done) noexcept nogil:
        """Release the pages of the chunks done, in order: the prefix of done
        chunks grows one chunk per successful compare-and-swap, and the thread
        that grows it releases that chunk. Out of order, a page shared with a
        chunk still being read (or a whole large folio of the page cache) would
        be mapped again by that reader and stay resident."""
        cdef long long w
        while True:
            w = sc_load(&self.released)
            if w >= n_chunks or not sc_is_done(<char*> &done[w]):
                return
            if sc_cas(&self.released, w, w + 1):
                sc_release_pages(data, w * chunk_rows * row_bytes,
                                 min((w + 1) * chunk_rows, n_rows) * row_bytes)

    def scan(self, const floating[:, ::1] scores, const int64_t[::1] gold,
             double threshold, Py_ssize_t chunk_rows, int64_t token_offset,
             bint release_pages, int fd=-1, int64_t file_offset=0,
             Py_ssize_t read_rows=1):
        """Append the entries ``>= threshold`` of ``scores`` (rows from
        ``token_offset``) in chunks of ``chunk_rows`` rows, in one parallel region.

        With a file descriptor ``fd``, ``scores`` is a shared map of that file
        from byte ``file_offset``: each thread reads its chunks with ``pread``
        into a buffer of its own instead of touching the map, so the scan maps
        no page of the file into the process (no page faults); pages mapped
        before are still released with ``release_pages``. It reads a chunk
        ``read_rows`` rows at a time: a small buffer stays in the core's cache
        and in the heap (a buffer of a MiB per thread was handed back to the
        system at every call and faulted in again, which doubled the time of a
        10 MB file).

        Returns
        -------
        int
            -1; or the first row (of ``scores``) of the first chunk that holds a
            NaN or a value outside [0, 1] (later chunks are skipped); or -2 if
            :meth:`cancel` was called; or -3 if a read failed
            (:attr:`read_errno`).
        """
        cdef Py_ssize_t n_rows = scores.shape[0], m = scores.shape[1]
        cdef int64_t n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
        cdef floating t = <floating> threshold   # compared in the score dtype, as NumPy does
        cdef const floating* base = &scores[0, 0]
        cdef int64_t c, r0, r1, p0, p1, size_before, first = self.n_chunks
        cdef int64_t row_bytes = m * sizeof(floating)
        cdef int k, status, err
        cdef char** read_buffers = NULL
        if self.itemsize != sizeof(floating):
            raise TypeError("scores dtype differs from the one the buffers were made for")
        size = np.zeros(first + n_chunks, dtype=np.int64)
        thread = np.zeros(first + n_chunks, dtype=np.int32)
        if first:
            size[:first] = self.chunk_size
            thread[:first] = self.chunk_thread
        self.chunk_size, self.chunk_thread = size, thread
        self.next_chunk = 0
        self.first_bad = n_chunks
        self.rows_done = 0
        self.released = 0
        done_arr = np.zeros(n_chunks if release_pages else 0, dtype=np.uint8)
        cdef uint8_t[::1] done = done_arr
        if fd >= 0:
            read_rows = max(1, min(read_rows, chunk_rows, n_rows))
            read_buffers = <char**> calloc(self.n_buffers, sizeof(char*))
            if read_buffers == NULL:
                raise MemoryError("cannot allocate the read buffers")
            for k in range(self.n_buffers):
                read_buffers[k] = <char*> malloc(read_rows * row_bytes)
                if read_buffers[k] == NULL:
                    _free_all(read_buffers, self.n_buffers)
                    raise MemoryError("cannot allocate the read buffers")
        self.read_errno = 0
        with nogil, parallel(num_threads=self.n_buffers):
            k = threadid()
            while True:
                c = sc_fetch_add(&self.next_chunk, 1)
                if c >= n_chunks or c > sc_load(&self.first_bad) or sc_load(&self.cancelled):
                    break
                r0 = c * chunk_rows
                r1 = min(r0 + chunk_rows, n_rows)
                size_before = self.buffers[k].size
                err = 0
                if fd >= 0:   # the chunk in pieces of read_rows rows
                    status = 0
                    p0 = r0
                    while p0 < r1 and status == 0 and err == 0:
                        p1 = min(p0 + read_rows, r1)
                        err = sc_pread_all(fd, read_buffers[k], (p1 - p0) * row_bytes,
                                           file_offset + p0 * row_bytes)
                        if err == 0:
                            status = _scan_rows(<const floating*> read_buffers[k], m,
                                                p1 - p0, &gold[p0], t, token_offset + p0,
                                                &self.buffers[k])
                        p0 = p1
                    if err != 0:
                        self.read_errno = err
                        sc_min(&self.first_bad, c)
                        break
                else:
                    status = _scan_rows(base + r0 * m, m, r1 - r0, &gold[r0], t,
                                        token_offset + r0, &self.buffers[k])
                self.chunk_size[first + c] = self.buffers[k].size - size_before
                self.chunk_thread[first + c] = k
                if status != 0:
                    if status < 0:
                        self.out_of_memory = True
                    sc_min(&self.first_bad, c)
                elif release_pages:
                    sc_set_done(<char*> &done[c])
                    self._release_done(<const char*> base, n_rows, row_bytes,
                                       chunk_rows, n_chunks, done)
                sc_fetch_add(&self.rows_done, r1 - r0)
        _free_all(read_buffers, self.n_buffers)
        self.n_chunks = first + n_chunks
        if self.out_of_memory:
            raise MemoryError("cannot allocate memory for the thresholded entries")
        if self.cancelled:
            return -2
        if self.read_errno:
            return -3
        if self.first_bad < n_chunks:
            return self.first_bad * chunk_rows
        return -1

    def gather(self, floating[::1] score, int32_t[::1] tag, uint8_t[::1] label,
               int64_t[::1] token):
        """Copy the survivors in chunk (row) order into the output arrays (of
        length :attr:`size`), giving each buffer's pages back as they are
        consumed, then free the buffers."""
        cdef int64_t c, n, k0, pos = 0
        cdef Buffer* b
        cdef size_t it = sizeof(floating)
        cdef int k
        if score.shape[0] != self.size or tag.shape[0] != self.size:
            raise ValueError("output arrays must hold exactly the survivors")
        for k in range(self.n_buffers):
            b = &self.buffers[k]
            b.read = 0
            b.released[0], b.released[1] = b.score, <const char*> b.tag
            b.released[2], b.released[3] = <const char*> b.label, <const char*> b.token
        with nogil:
            for c in range(self.n_chunks):
                n = self.chunk_size[c]
                if n == 0:
                    continue
                b = &self.buffers[self.chunk_thread[c]]
                k0 = b.read
                memcpy(&score[pos], b.score + k0 * it, n * it)
                memcpy(&tag[pos], b.tag + k0, n * sizeof(int32_t))
                memcpy(&label[pos], b.label + k0, n * sizeof(uint8_t))
                memcpy(&token[pos], b.token + k0, n * sizeof(int64_t))
                b.read = k0 + n
                pos += n
                # the survivors are held about once, not twice: a buffer's
                # consumed part goes back to the system while gathering
                sc_release_consumed(&b.released[0], b.score + b.read * it)
                sc_release_consumed(&b.released[1], <const char*> (b.tag + b.read))
                sc_release_consumed(&b.released[2], <const char*> (b.label + b.read))
                sc_release_consumed(&b.released[3], <const char*> (b.token + b.read))
        self._free()
