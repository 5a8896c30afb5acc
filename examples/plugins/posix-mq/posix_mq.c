/*
 * POSIX message queues as an xferbench transport: one queue per direction,
 * mq_timedsend / mq_timedreceive, one message per xferbench message.
 *
 *     cc -shared -fPIC -O2 -I include -o libxb_posix_mq.so examples/plugins/posix-mq/posix_mq.c -lrt
 *     xferbench check -t plugin:./libxb_posix_mq.so
 *     xferbench run stream -t plugin:./libxb_posix_mq.so -s 64,4KiB -p depth=10,64
 *
 * The design, and what each part of the plugin contract asks of it:
 *
 *  - listen creates two queues, "/<scope>-<pid>-<n>.d" (down: listener to peer) and
 *    ".u" (up), with mq_maxmsg = depth and mq_msgsize = max_message. The address is
 *    the common part of the names. connect opens both, sends a hello (its pid) up,
 *    and unlinks both names at once: from then on the queues exist only as long as
 *    the two processes hold them, so a crash leaves nothing behind. A listener that
 *    is never accepted unlinks them when it is closed, and the cleanup hook removes
 *    what a process that crashed between listen and connect left (when /dev/mqueue
 *    is mounted, where queues can be listed).
 *  - Messages keep their boundaries, so a message is one mq message. Data travel at
 *    priority 1; the end of the stream (close_send) is an empty message at priority
 *    1, in order behind the data; "this endpoint is closed" (close) is an empty
 *    message at priority 0, which never overtakes data.
 *  - Timeouts: every wait is mq_timed*() in slices of 50 ms. Between slices the
 *    endpoint checks that its peer still exists (the pid from the hello; a process
 *    killed by a signal sends no message), and a sender waiting for room looks for
 *    the peer's "closed" message, setting aside what arrived before it (at most
 *    depth messages) for the next receives.
 *  - Limits: Linux caps mq_msgsize at /proc/sys/fs/mqueue/msgsize_max (8 KiB by
 *    default) and mq_maxmsg at msg_max (10) for processes without CAP_SYS_RESOURCE,
 *    and the bytes of all queues of a user at RLIMIT_MSGQUEUE (800 KiB by default).
 *    The defaults (10 messages of up to 4 KiB) fit eight channels of two queues in
 *    that; larger values need raised limits, and the error says which.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <xferbench/plugin.h>

#define DATA_PRIO 1u   /* data and the end of the stream, in order */
#define GONE_PRIO 0u   /* "my endpoint is closed": behind everything */
#define SLICE_NS 50000000ull
#define HELLO_MAGIC 0x514d4258u /* "XBMQ" */

typedef struct {
    long depth;
    long msgsize;
    char scope[72];
} transport;

typedef struct {
    mqd_t down, up;
    long msgsize;
    char name[128];
    char *scratch;
} listener;

typedef struct {
    mqd_t tx, rx;
    long msgsize, depth;
    pid_t peer;          /* the peer's pid, 0 in this process */
    int eos_sent;        /* close_send done */
    int peer_closed;     /* the peer's end of stream seen */
    int peer_gone;       /* the peer's "closed" message seen */
    uint64_t timeout_ns; /* the last send/recv timeout, for close_send and close */
    char *scratch;       /* msgsize bytes to receive into */
    /* Messages set aside while waiting to send (see the file comment). */
    char *stash;
    size_t *stash_len;
    long stash_head, stash_count;
} endpoint;

typedef struct {
    uint32_t magic;
    int32_t pid;
} hello;

static atomic_uint next_queue;

static int fail(xb_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- time ---------------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t deadline_after(uint64_t timeout_ns)
{
    uint64_t now = mono_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* The CLOCK_REALTIME instant mq_timed*() wait until: the next slice, or the
 * deadline if sooner. */
static struct timespec slice_end(uint64_t deadline)
{
    uint64_t now = mono_ns();
    uint64_t wait = deadline > now ? deadline - now : 0;
    if (wait > SLICE_NS)
        wait = SLICE_NS;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + wait;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    return ts;
}

/* An instant already past: a timed call that returns at once when it would wait. */
static const struct timespec no_wait = {0, 0};

/* Whether process `pid` still runs (a zombie does not). */
static int alive(pid_t pid)
{
    if (pid <= 0)
        return 1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno != ENOENT;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    return !(close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X'));
}

/* ---- transport ------------------------------------------------------------------ */

static int mq_create(const xb_value *values, size_t count, const xb_host *host, void **out,
                     uint64_t *max_message, xb_error *err)
{
    transport *t = calloc(1, sizeof *t);
    if (!t)
        return fail(err, XB_ERR_IO, "out of memory");
    t->depth = 10;
    t->msgsize = 4096;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(values[i].name, "depth") == 0)
            t->depth = (long)values[i].number;
        else if (strcmp(values[i].name, "max_message") == 0)
            t->msgsize = (long)values[i].number;
    }
    snprintf(t->scope, sizeof t->scope, "%s", host->scope);
    *max_message = (uint64_t)t->msgsize;
    *out = t;
    return XB_OK;
}

static void mq_destroy(void *t) { free(t); }

static long read_limit(const char *name)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/sys/fs/mqueue/%s", name);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* Raises RLIMIT_MSGQUEUE as far as this process may: the soft limit to the hard
 * one, and for root the hard one to unlimited. */
static void raise_queue_limit(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_MSGQUEUE, &r) != 0)
        return;
    r.rlim_cur = r.rlim_max;
    if (geteuid() == 0)
        r.rlim_cur = r.rlim_max = RLIM_INFINITY;
    setrlimit(RLIMIT_MSGQUEUE, &r);
}

static mqd_t open_new(const char *name, const transport *t, xb_error *err, int *code)
{
    struct mq_attr attr = {.mq_maxmsg = t->depth, .mq_msgsize = t->msgsize};
    mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
    if (q == (mqd_t)-1 && errno == EMFILE) {
        raise_queue_limit();
        q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
    }
    if (q != (mqd_t)-1)
        return q;
    int e = errno;
    if (e == EINVAL && t->msgsize > read_limit("msgsize_max"))
        *code = fail(err, XB_ERR_PARAM,
                     "mq_open: max_message %ld is above /proc/sys/fs/mqueue/msgsize_max (%ld) "
                     "for this user: lower -p max_message, or raise the limit as root "
                     "(sysctl fs.mqueue.msgsize_max=%ld)",
                     t->msgsize, read_limit("msgsize_max"), t->msgsize);
    else if (e == EINVAL && t->depth > read_limit("msg_max"))
        *code = fail(err, XB_ERR_PARAM,
                     "mq_open: depth %ld is above /proc/sys/fs/mqueue/msg_max (%ld) for this "
                     "user: lower -p depth, or raise the limit as root (sysctl fs.mqueue.msg_max=%ld)",
                     t->depth, read_limit("msg_max"), t->depth);
    else if (e == EMFILE)
        *code = fail(err, XB_ERR_IO,
                     "mq_open: this user's queues would exceed RLIMIT_MSGQUEUE (ulimit -q): lower "
                     "-p depth or -p max_message, use fewer channels, or raise the limit");
    else if (e == ENOSPC)
        *code = fail(err, XB_ERR_IO,
                     "mq_open: too many queues (/proc/sys/fs/mqueue/queues_max)");
    else
        *code = fail(err, XB_ERR_IO, "mq_open %s: %s", name, strerror(e));
    return (mqd_t)-1;
}

static void queue_name(char *out, size_t size, const char *base, char dir)
{
    snprintf(out, size, "%s.%c", base, dir);
}

static int mq_listen(void *tp, void **out, char *address, size_t size, xb_error *err)
{
    transport *t = tp;
    listener *l = calloc(1, sizeof *l);
    if (!l)
        return fail(err, XB_ERR_IO, "out of memory");
    l->down = l->up = (mqd_t)-1;
    l->msgsize = t->msgsize;
    snprintf(l->name, sizeof l->name, "/%s-%d-%u", t->scope, (int)getpid(),
             atomic_fetch_add(&next_queue, 1));
    char q[160];
    int code = XB_ERR_IO;
    queue_name(q, sizeof q, l->name, 'd');
    l->down = open_new(q, t, err, &code);
    if (l->down != (mqd_t)-1) {
        queue_name(q, sizeof q, l->name, 'u');
        l->up = open_new(q, t, err, &code);
    }
    l->scratch = malloc((size_t)t->msgsize);
    if (l->up == (mqd_t)-1 || !l->scratch) {
        if (!l->scratch)
            code = fail(err, XB_ERR_IO, "out of memory");
        queue_name(q, sizeof q, l->name, 'd');
        if (l->down != (mqd_t)-1)
            mq_close(l->down), mq_unlink(q);
        if (l->up != (mqd_t)-1)
            queue_name(q, sizeof q, l->name, 'u'), mq_close(l->up), mq_unlink(q);
        free(l->scratch);
        free(l);
        return code;
    }
    snprintf(address, size, "%s", l->name);
    *out = l;
    return XB_OK;
}

static endpoint *new_endpoint(mqd_t tx, mqd_t rx, long msgsize, long depth, pid_t peer)
{
    endpoint *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->scratch = malloc((size_t)msgsize);
    if (!e->scratch) {
        free(e);
        return NULL;
    }
    e->tx = tx;
    e->rx = rx;
    e->msgsize = msgsize;
    e->depth = depth;
    e->peer = peer == getpid() ? 0 : peer;
    e->timeout_ns = 1000000000ull;
    return e;
}

static int mq_accept(void *lp, uint64_t timeout_ns, void **out, xb_error *err)
{
    listener *l = lp;
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        unsigned prio;
        struct timespec until = slice_end(deadline);
        ssize_t n = mq_timedreceive(l->up, l->scratch, (size_t)l->msgsize, &prio, &until);
        if (n == (ssize_t)sizeof(hello)) {
            hello h;
            memcpy(&h, l->scratch, sizeof h);
            if (h.magic != HELLO_MAGIC)
                return fail(err, XB_ERR_IO, "the peer's hello is garbled");
            struct mq_attr a;
            mq_getattr(l->down, &a);
            endpoint *e = new_endpoint(l->down, l->up, l->msgsize, a.mq_maxmsg, h.pid);
            if (!e)
                return fail(err, XB_ERR_IO, "out of memory");
            l->down = l->up = (mqd_t)-1; /* the endpoint's now */
            *out = e;
            return XB_OK;
        }
        if (n >= 0)
            return fail(err, XB_ERR_IO, "a %zd-byte message where the peer's hello was due", n);
        if (errno != ETIMEDOUT && errno != EINTR)
            return fail(err, XB_ERR_IO, "mq_timedreceive: %s", strerror(errno));
        if (mono_ns() >= deadline)
            return fail(err, XB_ERR_TIMEDOUT, "no peer connected");
    }
}

static void mq_close_listener(void *lp)
{
    listener *l = lp;
    char q[160];
    /* The names go whether or not a peer connected (it unlinks them too). */
    queue_name(q, sizeof q, l->name, 'd');
    mq_unlink(q);
    queue_name(q, sizeof q, l->name, 'u');
    mq_unlink(q);
    if (l->down != (mqd_t)-1)
        mq_close(l->down);
    if (l->up != (mqd_t)-1)
        mq_close(l->up);
    free(l->scratch);
    free(l);
}

/* An address is "/<scope>-<pid>-<n>" as mq_listen makes it. */
static int parse_address(const char *a, pid_t *pid)
{
    size_t len = strlen(a);
    if (len < 4 || len > 120 || a[0] != '/')
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!(a[i] == '-' || a[i] == '_' || (a[i] >= '0' && a[i] <= '9') ||
              (a[i] >= 'a' && a[i] <= 'z') || (a[i] >= 'A' && a[i] <= 'Z')))
            return 0;
    const char *last = strrchr(a, '-');
    if (!last || last == a)
        return 0;
    const char *p = last - 1;
    while (p > a && *p != '-')
        p--;
    if (*p != '-')
        return 0;
    char *end;
    long v = strtol(p + 1, &end, 10);
    if (end != last || v <= 0)
        return 0;
    *pid = (pid_t)v;
    return 1;
}

static int mq_connect(void *tp, const char *address, uint64_t timeout_ns, void **out,
                      xb_error *err)
{
    transport *t = tp;
    pid_t listener_pid;
    if (!parse_address(address, &listener_pid))
        return fail(err, XB_ERR_ADDRESS, "\"%.64s\" is not a posix-mq address", address);
    char q[160];
    queue_name(q, sizeof q, address, 'd');
    mqd_t rx = mq_open(q, O_RDONLY | O_CLOEXEC);
    if (rx == (mqd_t)-1)
        return fail(err, XB_ERR_ADDRESS, "mq_open %s: %s", q, strerror(errno));
    queue_name(q, sizeof q, address, 'u');
    mqd_t tx = mq_open(q, O_WRONLY | O_CLOEXEC);
    if (tx == (mqd_t)-1) {
        int e = errno;
        mq_close(rx);
        return fail(err, XB_ERR_ADDRESS, "mq_open %s: %s", q, strerror(e));
    }
    /* Both open: the names can go. The queues live while either side holds them. */
    queue_name(q, sizeof q, address, 'd');
    mq_unlink(q);
    queue_name(q, sizeof q, address, 'u');
    mq_unlink(q);
    struct mq_attr a;
    mq_getattr(rx, &a);
    hello h = {.magic = HELLO_MAGIC, .pid = (int32_t)getpid()};
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        struct timespec until = slice_end(deadline);
        if (mq_timedsend(tx, (const char *)&h, sizeof h, DATA_PRIO, &until) == 0)
            break;
        if ((errno != ETIMEDOUT && errno != EINTR) || mono_ns() >= deadline) {
            int e = errno;
            mq_close(rx), mq_close(tx);
            return fail(err, e == ETIMEDOUT ? XB_ERR_TIMEDOUT : XB_ERR_IO, "hello: %s",
                        strerror(e));
        }
    }
    (void)t;
    endpoint *e = new_endpoint(tx, rx, a.mq_msgsize, a.mq_maxmsg, listener_pid);
    if (!e) {
        mq_close(rx), mq_close(tx);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    *out = e;
    return XB_OK;
}

/* ---- the peer's state, looked at between slices --------------------------------- */

/* Sets aside what the peer sent, without waiting, until its "closed" message, an
 * empty queue or a full stash. */
static void drain_into_stash(endpoint *e)
{
    if (!e->stash) {
        e->stash = malloc((size_t)(e->depth * e->msgsize));
        e->stash_len = calloc((size_t)e->depth, sizeof *e->stash_len);
        if (!e->stash || !e->stash_len)
            return;
    }
    while (!e->peer_gone && e->stash_count < e->depth) {
        long slot = (e->stash_head + e->stash_count) % e->depth;
        unsigned prio;
        ssize_t n = mq_timedreceive(e->rx, e->stash + slot * e->msgsize, (size_t)e->msgsize,
                                    &prio, &no_wait);
        if (n < 0)
            return;
        if (n == 0 && prio == GONE_PRIO) {
            e->peer_gone = 1;
            return;
        }
        e->stash_len[slot] = (size_t)n;
        e->stash_count++;
    }
}

/* Why a wait that timed out a slice cannot go on, or 0 to keep waiting. */
static int peer_trouble(endpoint *e, int sending, xb_error *err)
{
    if (sending)
        drain_into_stash(e);
    if (sending && e->peer_gone)
        return fail(err, XB_ERR_PEER, "the peer closed its endpoint");
    if (!alive(e->peer))
        return fail(err, XB_ERR_PEER, "the peer process (pid %d) is gone", (int)e->peer);
    return 0;
}

/* ---- the hot path ------------------------------------------------------------------ */

static int send_prio(endpoint *e, const void *msg, size_t len, unsigned prio,
                     uint64_t timeout_ns, xb_error *err)
{
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        struct timespec until = slice_end(deadline);
        if (mq_timedsend(e->tx, msg, len, prio, &until) == 0)
            return XB_OK;
        if (errno == EINTR)
            continue;
        if (errno != ETIMEDOUT)
            return fail(err, XB_ERR_IO, "mq_timedsend: %s", strerror(errno));
        int trouble = peer_trouble(e, 1, err);
        if (trouble)
            return trouble;
        if (mono_ns() >= deadline)
            return fail(err, XB_ERR_TIMEDOUT, "the queue stayed full");
    }
}

static int mq_send_msg(void *ep, const void *msg, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    e->timeout_ns = timeout_ns;
    if ((long)len > e->msgsize)
        return fail(err, XB_ERR_TOO_LARGE, "a %zu-byte message; the queue's largest is %ld (-p max_message)",
                    len, e->msgsize);
    if (e->eos_sent)
        return fail(err, XB_ERR_IO, "the sending side is closed");
    if (e->peer_gone)
        return fail(err, XB_ERR_PEER, "the peer closed its endpoint");
    return send_prio(e, msg, len, DATA_PRIO, timeout_ns, err);
}

/* One received message of n bytes at `data`: the end of the stream, or a message
 * that must be `len` bytes. */
static int take(endpoint *e, const char *data, ssize_t n, void *buf, size_t len, xb_error *err)
{
    if (n == 0) {
        e->peer_closed = 1;
        return XB_CLOSED;
    }
    if ((size_t)n != len)
        return fail(err, XB_ERR_MESSAGE_SIZE, "a %zd-byte message where %zu bytes were expected",
                    n, len);
    if (data != buf)
        memcpy(buf, data, len);
    return XB_OK;
}

static int mq_recv_msg(void *ep, void *buf, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    e->timeout_ns = timeout_ns;
    if (e->stash_count > 0) {
        long slot = e->stash_head;
        e->stash_head = (e->stash_head + 1) % e->depth;
        e->stash_count--;
        return take(e, e->stash + slot * e->msgsize, (ssize_t)e->stash_len[slot], buf, len, err);
    }
    if (e->peer_closed || e->peer_gone)
        return XB_CLOSED;
    /* mq_timedreceive wants room for the largest message: receive in place when the
     * caller's buffer has it, else into the scratch buffer. */
    char *into = (long)len >= e->msgsize ? buf : e->scratch;
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        unsigned prio;
        struct timespec until = slice_end(deadline);
        ssize_t n = mq_timedreceive(e->rx, into, (size_t)e->msgsize, &prio, &until);
        if (n >= 0) {
            if (n == 0 && prio == GONE_PRIO) {
                e->peer_gone = 1;
                return XB_CLOSED;
            }
            return take(e, into, n, buf, len, err);
        }
        if (errno == EINTR)
            continue;
        if (errno != ETIMEDOUT)
            return fail(err, XB_ERR_IO, "mq_timedreceive: %s", strerror(errno));
        int trouble = peer_trouble(e, 0, err);
        if (trouble)
            return trouble;
        if (mono_ns() >= deadline)
            return fail(err, XB_ERR_TIMEDOUT, "no message arrived");
    }
}

static int mq_close_send(void *ep, xb_error *err)
{
    endpoint *e = ep;
    if (e->eos_sent)
        return XB_OK;
    e->eos_sent = 1;
    if (e->peer_gone)
        return XB_OK;
    return send_prio(e, "", 0, DATA_PRIO, e->timeout_ns, err);
}

static void mq_close_endpoint(void *ep)
{
    endpoint *e = ep;
    xb_error ignored;
    if (!e->eos_sent)
        mq_close_send(e, &ignored);
    /* "Closed" behind everything sent; if the queue is full the peer learns it from
     * our pid or its own timeout. */
    if (!e->peer_gone) {
        struct timespec until = slice_end(deadline_after(SLICE_NS));
        mq_timedsend(e->tx, "", 0, GONE_PRIO, &until);
    }
    mq_close(e->tx);
    mq_close(e->rx);
    free(e->scratch);
    free(e->stash);
    free(e->stash_len);
    free(e);
}

/* ---- clean-up -------------------------------------------------------------------- */

/* Removes the queues of a scope that a crashed process left. Queues can be listed
 * only where the mqueue file system is mounted (/dev/mqueue); without it there is
 * nothing to list, and nothing is left anyway once a peer connected (see the file
 * comment). */
static void mq_cleanup(const char *scope)
{
    DIR *d = opendir("/dev/mqueue");
    if (!d)
        return;
    size_t n = strlen(scope);
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strncmp(ent->d_name, scope, n) == 0 && ent->d_name[n] == '-') {
            char q[300];
            snprintf(q, sizeof q, "/%s", ent->d_name);
            mq_unlink(q);
        }
    }
    closedir(d);
}

/* ---- description ----------------------------------------------------------------- */

static const xb_param params[] = {
    {
        .name = "depth",
        .kind = XB_PARAM_INTEGER,
        .default_value = "10",
        .help = "messages each queue holds (mq_maxmsg; above /proc/sys/fs/mqueue/msg_max needs root)",
        .min = 1,
        .max = 65536,
    },
    {
        .name = "max_message",
        .kind = XB_PARAM_BYTES,
        .default_value = "4KiB",
        .help = "the largest message (mq_msgsize; above /proc/sys/fs/mqueue/msgsize_max needs root)",
        .min = 8,
        .max = 16 << 20,
    },
};

static const xb_transport transports[] = {
    {
        .name = "posix-mq",
        .description = "POSIX message queues, one per direction (mq_timedsend/mq_timedreceive)",
        .max_message = 16 << 20,
        .flags = 0,
        .params = params,
        .param_count = sizeof params / sizeof params[0],
        .create = mq_create,
        .destroy = mq_destroy,
        .listen = mq_listen,
        .accept = mq_accept,
        .close_listener = mq_close_listener,
        .connect = mq_connect,
        .send = mq_send_msg,
        .flush = NULL,
        .recv = mq_recv_msg,
        .close_send = mq_close_send,
        .close = mq_close_endpoint,
    },
};

static const xb_plugin plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "xb-posix-mq",
    .version = "1.0.0",
    .transports = transports,
    .transport_count = sizeof transports / sizeof transports[0],
    .cleanup = mq_cleanup,
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    return &plugin;
}
