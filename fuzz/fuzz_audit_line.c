/* SPDX-License-Identifier: MIT */
/*
 * fuzz_audit_line.c — libFuzzer harness for the audit line writer
 * (fixture/src/report/audit_json.c): mpf__audit_line() for a report and
 * mpf__audit_killed_line() for the watchdog's line.
 *
 * The input becomes a report whose names, details, case and binary hold
 * arbitrary bytes (NUL-terminated or filling their whole array), whose
 * numbers are arbitrary bit patterns (NaN and infinities included) and
 * whose offender count may exceed the array; the output buffer is exactly
 * the size the writer is given (so ASan sees any overrun), 16 KiB as in
 * report.c or a small one. The contract checked on every output:
 *   - a line that fits in the real buffers is written (never 0);
 *   - the line is valid UTF-8 and one JSON object (RFC 8259, checked by
 *     the strict parser below) followed by exactly one '\n';
 *   - "binary" and "case" decode to the documented reading of their bytes:
 *     well-formed UTF-8 as its characters, any other byte as U+00XX
 *     (checked against a decoder written here, independently);
 *   - no lone surrogate escape, no raw control character.
 *
 * Input layout (missing bytes read as 0): flags, kinds, expected, six
 * counts, duration, cpu, budget, seed, shm_warnings, offender count, then
 * strings as <length byte><bytes>: binary, case, and per offender a kind
 * byte, a pid, name, detail; then the small buffer's size byte, the kept
 * count byte and the kept names' bytes (the whole array, unterminated
 * when the input fills it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/page.h"
#include "report/report.h"

struct input {
    const uint8_t *p;
    size_t n;
};

static void take(struct input *in, void *out, size_t len)
{
    size_t have = in->n < len ? in->n : len;
    memcpy(out, in->p, have);
    memset((char *)out + have, 0, len - have);
    in->p += have;
    in->n -= have;
}

static uint8_t take_u8(struct input *in)
{
    uint8_t v;
    take(in, &v, 1);
    return v;
}

/* A string field: NUL-terminated, or (terminate false) its whole array
   filled with non-NUL bytes when the input asks for that many. */
static void take_str(struct input *in, char *field, size_t size, bool terminate)
{
    size_t len = take_u8(in);
    if (len >= size)
        len = terminate ? size - 1 : size;
    memset(field, 0, size);
    take(in, field, len);
}

/* ------------------------------------------------------------------ */
/* A strict JSON validator (RFC 8259) that also decodes strings.       */
/* ------------------------------------------------------------------ */

struct parser {
    const unsigned char *s;
    size_t n, i;
    int depth;
    int strings;       /* strings seen so far */
    uint32_t *want[4]; /* code points of strings #1 and #3 go here */
    size_t want_len[4];
};

static __attribute__((noreturn)) void bad(const struct parser *p,
                                          const char *why)
{
    fprintf(stderr, "fuzz_audit_line: %s at byte %zu of %zu:\n", why, p->i,
            p->n);
    for (size_t i = 0; i < p->n; i++)
        fputc(p->s[i] >= 0x20 && p->s[i] < 0x7f ? p->s[i] : '.', stderr);
    fputc('\n', stderr);
    abort();
}

/* Independent UTF-8 decoder: decode first, then reject overlong forms,
   surrogates and code points above U+10FFFF. Returns the length or 0. */
static size_t decode_utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
    static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    size_t len = s[0] < 0x80             ? 1
                 : (s[0] & 0xe0) == 0xc0 ? 2
                 : (s[0] & 0xf0) == 0xe0 ? 3
                 : (s[0] & 0xf8) == 0xf0 ? 4
                                         : 0;
    if (len == 0 || len > n)
        return 0;
    uint32_t c = len == 1 ? s[0] : s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min[len] || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
        return 0;
    *cp = c;
    return len;
}

static void ws(struct parser *p)
{
    while (p->i < p->n &&
           (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\r'))
        p->i++; /* '\n' is the end of the line, never whitespace here */
}

static int hex4(struct parser *p)
{
    if (p->n - p->i < 4)
        bad(p, "short \\u escape");
    int v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = p->s[p->i++];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            bad(p, "bad hex digit");
        v = v * 16 + d;
    }
    return v;
}

static void string(struct parser *p)
{
    int index = p->strings++;
    uint32_t *keep = index < 4 ? p->want[index] : NULL;
    size_t kept = 0;
    p->i++; /* opening quote */
    for (;;) {
        if (p->i >= p->n)
            bad(p, "unterminated string");
        unsigned char c = p->s[p->i];
        uint32_t cp;
        if (c == '"') {
            p->i++;
            break;
        }
        if (c < 0x20)
            bad(p, "raw control character in a string");
        if (c == '\\') {
            p->i++;
            if (p->i >= p->n)
                bad(p, "lone backslash");
            c = p->s[p->i++];
            switch (c) {
            case '"':
            case '\\':
            case '/':
                cp = c;
                break;
            case 'b':
                cp = 8;
                break;
            case 'f':
                cp = 12;
                break;
            case 'n':
                cp = 10;
                break;
            case 'r':
                cp = 13;
                break;
            case 't':
                cp = 9;
                break;
            case 'u':
                cp = (uint32_t)hex4(p);
                if (cp >= 0xdc00 && cp <= 0xdfff)
                    bad(p, "lone low surrogate escape");
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (p->n - p->i < 2 || p->s[p->i] != '\\' ||
                        p->s[p->i + 1] != 'u')
                        bad(p, "lone high surrogate escape");
                    p->i += 2;
                    uint32_t lo = (uint32_t)hex4(p);
                    if (lo < 0xdc00 || lo > 0xdfff)
                        bad(p, "high surrogate without its low half");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                break;
            default:
                bad(p, "bad escape");
            }
        } else {
            size_t len = decode_utf8(p->s + p->i, p->n - p->i, &cp);
            if (len == 0)
                bad(p, "invalid UTF-8 in a string");
            if (cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
                bad(p, "raw DEL or C1 control character");
            p->i += len;
        }
        if (keep)
            keep[kept++] = cp;
    }
    if (keep)
        p->want_len[index] = kept;
}

static void number(struct parser *p)
{
    size_t start = p->i;
    if (p->s[p->i] == '-')
        p->i++;
    if (p->i < p->n && p->s[p->i] == '0') {
        p->i++;
    } else if (p->i < p->n && p->s[p->i] >= '1' && p->s[p->i] <= '9') {
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
    } else {
        bad(p, "bad number");
    }
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d)
            bad(p, "no digit after the point");
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d)
            bad(p, "no digit in the exponent");
    }
    (void)start;
}

static void literal(struct parser *p, const char *word)
{
    size_t len = strlen(word);
    if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0)
        bad(p, "unexpected character");
    p->i += len;
}

static void value(struct parser *p);

static void members(struct parser *p, char close, bool object)
{
    if (++p->depth > 8)
        bad(p, "nested too deeply for an audit line");
    p->i++; /* '{' or '[' */
    ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        p->depth--;
        return;
    }
    for (;;) {
        ws(p);
        if (object) {
            if (p->i >= p->n || p->s[p->i] != '"')
                bad(p, "object key is not a string");
            string(p);
            ws(p);
            if (p->i >= p->n || p->s[p->i] != ':')
                bad(p, "no ':' after a key");
            p->i++;
            ws(p);
        }
        value(p);
        ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            break;
        }
        bad(p, "no ',' or close");
    }
    p->depth--;
}

static void value(struct parser *p)
{
    if (p->i >= p->n)
        bad(p, "value missing");
    switch (p->s[p->i]) {
    case '{':
        members(p, '}', true);
        break;
    case '[':
        members(p, ']', false);
        break;
    case '"':
        string(p);
        break;
    case 't':
        literal(p, "true");
        break;
    case 'f':
        literal(p, "false");
        break;
    case 'n':
        literal(p, "null");
        break;
    default:
        number(p);
        break;
    }
}

/* The reading the writer documents: well-formed UTF-8 as its characters,
   every other byte as U+00XX. Returns the number of code points. */
static size_t expected_reading(const char *field, size_t size, uint32_t *out)
{
    const unsigned char *s = (const unsigned char *)field;
    size_t n = strnlen(field, size), k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = decode_utf8(s + i, n - i, &cp);
        if (len == 0) {
            cp = s[i];
            len = 1;
        }
        out[k++] = cp;
        i += len;
    }
    return k;
}

static void check_line(const char *buf, size_t len, const char *binary,
                       size_t binary_size, const char *case_name,
                       size_t case_size)
{
    static uint32_t got[2][512], want[512];
    struct parser p = { (const unsigned char *)buf,     len,  0, 0, 0,
                        { NULL, got[0], NULL, got[1] }, { 0 } };
    if (len == 0 || buf[len - 1] != '\n')
        bad(&p, "the line does not end in a newline");
    p.n = len - 1;
    if (memchr(buf, '\n', len - 1))
        bad(&p, "a newline inside the line");
    ws(&p);
    if (p.i >= p.n || p.s[p.i] != '{')
        bad(&p, "not an object");
    value(&p);
    ws(&p);
    if (p.i != p.n)
        bad(&p, "bytes after the object");
    if (p.strings < 4)
        bad(&p, "no binary and case");
    size_t k = expected_reading(binary, binary_size, want);
    if (k != p.want_len[1] || memcmp(want, got[0], k * sizeof *want) != 0)
        bad(&p, "\"binary\" does not read as its bytes");
    k = expected_reading(case_name, case_size, want);
    if (k != p.want_len[3] || memcmp(want, got[1], k * sizeof *want) != 0)
        bad(&p, "\"case\" does not read as its bytes");
}

/* ------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mpf_report r;
    static struct mpf__shared pg;
    struct input in = { data, size };
    memset(&r, 0, sizeof r);

    uint8_t flags = take_u8(&in);
    bool terminate = !(flags & 2);
    r.passed = flags & 1;
    r.kinds = take_u8(&in) | (unsigned)(flags & 0xf0) << 4;
    r.expected = take_u8(&in);
    for (int k = 0; k < 6; k++)
        r.count[k] = take_u8(&in);
    take(&in, &r.duration_ms, sizeof r.duration_ms);
    take(&in, &r.cpu_ms, sizeof r.cpu_ms);
    take(&in, &r.budget_ms, sizeof r.budget_ms);
    take(&in, &r.seed, sizeof r.seed);
    take(&in, &r.shm_warnings, sizeof r.shm_warnings);
    /* Up to 3 past the array: the writer must clamp. */
    r.n_offenders = take_u8(&in) % (MPF_MAX_OFFENDERS + 4);
    take_str(&in, r.binary, sizeof r.binary, terminate);
    take_str(&in, r.case_name, sizeof r.case_name, terminate);
    for (size_t i = 0; i < MPF_MAX_OFFENDERS; i++) {
        mpf_offender *o = &r.offenders[i];
        o->kind = (mpf_kind)(1u << (take_u8(&in) % 10)); /* 2 are not kinds */
        take(&in, &o->pid, sizeof o->pid);
        take_str(&in, o->name, sizeof o->name, terminate);
        take_str(&in, o->detail, sizeof o->detail, terminate);
    }

    /* The real buffer of report.c, then a small one. */
    size_t sizes[2] = { 16384, 64 + (size_t)take_u8(&in) * 8 };
    r.shm_kept = take_u8(&in);
    take(&in, r.shm_kept_names, sizeof r.shm_kept_names);
    for (int k = 0; k < 2; k++) {
        char *buf = malloc(sizes[k]);
        size_t len = mpf__audit_line(&r, buf, sizes[k]);
        if (len > sizes[k] || (k == 0 && len == 0))
            abort();
        if (len)
            check_line(buf, len, r.binary, sizeof r.binary, r.case_name,
                       sizeof r.case_name);
        free(buf);
    }

    /* The watchdog's line from the shared page, in report.c's 2 KiB. */
    memcpy(pg.binary, r.binary, sizeof pg.binary);
    memcpy(pg.case_name, r.case_name, sizeof pg.case_name);
    memcpy(&pg.begin_ns, &r.duration_ms, sizeof pg.begin_ns);
    pg.budget_ms = r.budget_ms;
    pg.seed = r.seed;
    int64_t now_ns;
    memcpy(&now_ns, &r.cpu_ms, sizeof now_ns);
    char *buf = malloc(2048);
    size_t len = mpf__audit_killed_line(&pg, now_ns, NULL, buf, 2048);
    if (len == 0 || len > 2048)
        abort();
    check_line(buf, len, pg.binary, sizeof pg.binary, pg.case_name,
               sizeof pg.case_name);
    free(buf);
    return 0;
}
