/* Schema patterns compiled once into a byte-at-a-time automaton. */
#include "tauyaml/pattern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

#define PT_MAX_NODES   256 /* parse tree */
#define PT_MAX_CLASSES 64
#define PT_MAX_PROG    512 /* NFA instructions */
#define PT_MAX_STATES  255 /* DFA states (ids fit a byte) */
#define PT_WORDS       (PT_MAX_PROG / 64)

/* --- parse: pattern text -> tree ------------------------------------------------------------ */

enum { PN_CLASS, PN_CAT, PN_ALT, PN_STAR, PN_PLUS, PN_QUEST };

typedef struct pt_node_s {
    int op;
    int a, b; /* children (node indices), or a = class index for PN_CLASS */
} pt_node_t;

typedef struct pt_class_s {
    uint64_t bits[4]; /* one bit per byte value */
} pt_class_t;

typedef struct pt_parse_s {
    const unsigned char *p, *end;
    pt_node_t nodes[PT_MAX_NODES];
    int nnodes;
    pt_class_t classes[PT_MAX_CLASSES];
    int nclasses;
    int depth;
    int bad; /* outside the subset, malformed, or too large */
} pt_parse_t;

static int pt_node(pt_parse_t *ps, int op, int a, int b)
{
    if (ps->nnodes == PT_MAX_NODES) {
        ps->bad = 1;
        return 0;
    }
    ps->nodes[ps->nnodes] = (pt_node_t){op, a, b};
    return ps->nnodes++;
}

static pt_class_t *pt_class(pt_parse_t *ps, int *idx)
{
    if (ps->nclasses == PT_MAX_CLASSES) {
        ps->bad = 1;
        return NULL;
    }
    *idx = ps->nclasses;
    pt_class_t *c = &ps->classes[ps->nclasses++];
    memset(c, 0, sizeof(*c));
    return c;
}

static void pt_set(pt_class_t *c, unsigned lo, unsigned hi)
{
    for (unsigned v = lo; v <= hi; v++)
        c->bits[v >> 6] |= (uint64_t)1 << (v & 63);
}

static int pt_has(const pt_class_t *c, unsigned v)
{
    return (int)((c->bits[v >> 6] >> (v & 63)) & 1);
}

static int pt_peek(const pt_parse_t *ps, size_t k)
{
    return ps->p + k < ps->end ? ps->p[k] : -1;
}

/* A bracket expression; p is past the '['. */
static int pt_bracket(pt_parse_t *ps)
{
    int idx = 0;
    pt_class_t *c = pt_class(ps, &idx);
    if (!c)
        return 0;
    int neg = pt_peek(ps, 0) == '^';
    if (neg)
        ps->p++;
    for (int first = 1;; first = 0) {
        int ch = pt_peek(ps, 0);
        if (ch < 0) {
            ps->bad = 1; /* unterminated */
            return 0;
        }
        ps->p++;
        if (ch == ']' && !first)
            break;
        int nx = pt_peek(ps, 0);
        if (ch == '[' && (nx == ':' || nx == '=' || nx == '.')) {
            ps->bad = 1; /* character classes, equivalence classes, collating symbols */
            return 0;
        }
        if (ch >= 0x80) {
            ps->bad = 1; /* a multibyte character in brackets: leave it to regexec */
            return 0;
        }
        int hi = ch;
        if (nx == '-' && pt_peek(ps, 1) >= 0 && pt_peek(ps, 1) != ']') {
            hi = pt_peek(ps, 1);
            ps->p += 2;
            if (hi == '[' &&
                (pt_peek(ps, 0) == ':' || pt_peek(ps, 0) == '=' || pt_peek(ps, 0) == '.')) {
                ps->bad = 1;
                return 0;
            }
            if (hi < ch || hi >= 0x80) {
                ps->bad = 1; /* regcomp refuses it too */
                return 0;
            }
        }
        pt_set(c, (unsigned)ch, (unsigned)hi);
    }
    if (neg)
        for (int w = 0; w < 4; w++)
            c->bits[w] = ~c->bits[w];
    c->bits[0] &= ~(uint64_t)1; /* NUL ends the subject; it never matches */
    return pt_node(ps, PN_CLASS, idx, 0);
}

static int pt_alt(pt_parse_t *ps);

static int pt_atom(pt_parse_t *ps)
{
    int ch = pt_peek(ps, 0);
    int idx = 0;
    pt_class_t *c;
    if (ch < 0) {
        ps->bad = 1;
        return 0;
    }
    ps->p++;
    switch (ch) {
    case '(': {
        if (pt_peek(ps, 0) == ')' || ++ps->depth > 32) {
            ps->bad = 1; /* empty group, or nested too deep */
            return 0;
        }
        int n = pt_alt(ps);
        ps->depth--;
        if (pt_peek(ps, 0) != ')') {
            ps->bad = 1;
            return 0;
        }
        ps->p++;
        return n;
    }
    case '[':
        return pt_bracket(ps);
    case '.':
        if (!(c = pt_class(ps, &idx)))
            return 0;
        pt_set(c, 1, 255);
        return pt_node(ps, PN_CLASS, idx, 0);
    case '\\':
        ch = pt_peek(ps, 0);
        if (ch < 0 || !strchr(".[]()*+?{}|^$\\", ch)) {
            ps->bad = 1; /* trailing backslash, or a GNU escape such as \w */
            return 0;
        }
        ps->p++;
        break;
    default:
        if (strchr("*+?{})|^$", ch)) {
            ps->bad = 1;
            return 0;
        }
    }
    if (!(c = pt_class(ps, &idx)))
        return 0;
    pt_set(c, (unsigned)ch, (unsigned)ch);
    return pt_node(ps, PN_CLASS, idx, 0);
}

static int pt_repeat(pt_parse_t *ps)
{
    int n = pt_atom(ps);
    int ch = pt_peek(ps, 0);
    if (ps->bad || ch < 0 || !strchr("*+?", ch))
        return n;
    ps->p++;
    int nx = pt_peek(ps, 0);
    if (nx >= 0 && strchr("*+?{", nx)) {
        ps->bad = 1; /* stacked quantifiers: leave them to regexec */
        return n;
    }
    return pt_node(ps, ch == '*' ? PN_STAR : ch == '+' ? PN_PLUS : PN_QUEST, n, 0);
}

static int pt_cat(pt_parse_t *ps)
{
    int ch = pt_peek(ps, 0);
    if (ch < 0 || ch == '|' || ch == ')') {
        ps->bad = 1; /* empty branch */
        return 0;
    }
    int n = pt_repeat(ps);
    while (!ps->bad && (ch = pt_peek(ps, 0)) >= 0 && ch != '|' && ch != ')')
        n = pt_node(ps, PN_CAT, n, pt_repeat(ps));
    return n;
}

static int pt_alt(pt_parse_t *ps)
{
    int n = pt_cat(ps);
    while (!ps->bad && pt_peek(ps, 0) == '|') {
        if (ps->depth == 0) {
            ps->bad = 1; /* ^a|b$ anchors each branch on one side only */
            return n;
        }
        ps->p++;
        n = pt_node(ps, PN_ALT, n, pt_cat(ps));
    }
    return n;
}

/* --- compile: tree -> NFA program (Thompson) ------------------------------------------------ */

enum { PI_CLASS, PI_SPLIT, PI_JMP, PI_MATCH };

typedef struct pt_inst_s {
    int op;
    int x, y; /* targets; x = class index for PI_CLASS */
} pt_inst_t;

typedef struct pt_prog_s {
    pt_inst_t v[PT_MAX_PROG];
    int n;
    int bad;
} pt_prog_t;

static int pt_emit(pt_prog_t *pg, int op, int x, int y)
{
    if (pg->n == PT_MAX_PROG) {
        pg->bad = 1;
        return 0;
    }
    pg->v[pg->n] = (pt_inst_t){op, x, y};
    return pg->n++;
}

static void pt_gen(const pt_parse_t *ps, int node, pt_prog_t *pg)
{
    const pt_node_t *nd = &ps->nodes[node];
    int i, j;
    if (pg->bad)
        return;
    switch (nd->op) {
    case PN_CLASS:
        pt_emit(pg, PI_CLASS, nd->a, 0);
        break;
    case PN_CAT:
        pt_gen(ps, nd->a, pg);
        pt_gen(ps, nd->b, pg);
        break;
    case PN_ALT:
        i = pt_emit(pg, PI_SPLIT, 0, 0);
        pg->v[i].x = pg->n;
        pt_gen(ps, nd->a, pg);
        j = pt_emit(pg, PI_JMP, 0, 0);
        pg->v[i].y = pg->n;
        pt_gen(ps, nd->b, pg);
        pg->v[j].x = pg->n;
        break;
    case PN_STAR:
        i = pt_emit(pg, PI_SPLIT, 0, 0);
        pg->v[i].x = pg->n;
        pt_gen(ps, nd->a, pg);
        pt_emit(pg, PI_JMP, i, 0);
        pg->v[i].y = pg->n;
        break;
    case PN_PLUS:
        i = pg->n;
        pt_gen(ps, nd->a, pg);
        pt_emit(pg, PI_SPLIT, i, pg->n + 1);
        break;
    default: /* PN_QUEST */
        i = pt_emit(pg, PI_SPLIT, 0, 0);
        pg->v[i].x = pg->n;
        pt_gen(ps, nd->a, pg);
        pg->v[i].y = pg->n;
        break;
    }
}

/* --- determinise: NFA -> DFA table (subset construction) ------------------------------------ */

typedef struct pt_set_s {
    uint64_t w[PT_WORDS]; /* the CLASS and MATCH instructions reachable */
} pt_set_t;

/* Add pc and what it reaches without reading a byte. */
static void pt_closure(const pt_prog_t *pg, int pc, pt_set_t *s)
{
    int stack[PT_MAX_PROG * 2 + 1];
    int sp = 0;
    uint64_t seen[PT_WORDS] = {0};
    stack[sp++] = pc;
    while (sp > 0) {
        int i = stack[--sp];
        if ((seen[i >> 6] >> (i & 63)) & 1)
            continue;
        seen[i >> 6] |= (uint64_t)1 << (i & 63);
        const pt_inst_t *in = &pg->v[i];
        if (in->op == PI_JMP) {
            stack[sp++] = in->x;
        } else if (in->op == PI_SPLIT) {
            stack[sp++] = in->y;
            stack[sp++] = in->x;
        } else {
            s->w[i >> 6] |= (uint64_t)1 << (i & 63);
        }
    }
}

struct tg_tauyaml_pattern_s {
    int start, dead; /* dead: the state no input leaves (-1 when there is none) */
    unsigned char *accept;
    unsigned char *table; /* nstates x 256 */
};

static int pt_find(const pt_set_t *sets, int n, const pt_set_t *s)
{
    for (int i = 0; i < n; i++)
        if (memcmp(&sets[i], s, sizeof(*s)) == 0)
            return i;
    return -1;
}

static tg_tauyaml_pattern_t *pt_dfa(const pt_parse_t *ps, const pt_prog_t *pg)
{
    pt_set_t *sets = tg_xcalloc(PT_MAX_STATES, sizeof(*sets));
    unsigned char *table = tg_xcalloc(PT_MAX_STATES, 256);
    unsigned char *accept = tg_xcalloc(PT_MAX_STATES, 1);
    int n = 1, ok = 1;
    pt_closure(pg, 0, &sets[0]);
    for (int d = 0; d < n && ok; d++) {
        for (unsigned b = 1; b < 256 && ok; b++) {
            pt_set_t next = {{0}};
            for (int pc = 0; pc < pg->n; pc++) {
                if (!((sets[d].w[pc >> 6] >> (pc & 63)) & 1))
                    continue;
                if (pg->v[pc].op == PI_MATCH)
                    accept[d] = 1;
                else if (pt_has(&ps->classes[pg->v[pc].x], b))
                    pt_closure(pg, pc + 1, &next);
            }
            int id = pt_find(sets, n, &next);
            if (id < 0) {
                if (n == PT_MAX_STATES) {
                    ok = 0;
                    break;
                }
                sets[n] = next;
                id = n++;
            }
            table[d * 256 + b] = (unsigned char)id;
        }
    }
    pt_set_t empty = {{0}};
    int dead = pt_find(sets, n, &empty);
    free(sets);
    if (!ok) {
        free(table);
        free(accept);
        return NULL;
    }
    tg_tauyaml_pattern_t *p = tg_xcalloc(1, sizeof(*p));
    p->start = 0;
    p->dead = dead;
    p->accept = accept;
    p->table = tg_xrealloc(table, (size_t)n * 256);
    return p;
}

tg_tauyaml_pattern_t *tg_tauyaml_pattern_compile(const char *re)
{
    size_t len = strlen(re);
    /* ^...$ with an unescaped final '$'. */
    if (len < 2 || re[0] != '^' || re[len - 1] != '$')
        return NULL;
    size_t bs = 0;
    while (bs < len - 2 && re[len - 2 - bs] == '\\')
        bs++;
    if (bs % 2)
        return NULL;
    pt_parse_t *ps = tg_xcalloc(1, sizeof(*ps));
    pt_prog_t *pg = tg_xcalloc(1, sizeof(*pg));
    tg_tauyaml_pattern_t *p = NULL;
    ps->p = (const unsigned char *)re + 1;
    ps->end = (const unsigned char *)re + len - 1;
    int root = ps->p < ps->end ? pt_alt(ps) : -1;
    if (ps->p != ps->end)
        ps->bad = 1; /* a stray ')' */
    if (!ps->bad) {
        if (root >= 0)
            pt_gen(ps, root, pg);
        pt_emit(pg, PI_MATCH, 0, 0);
        if (!pg->bad)
            p = pt_dfa(ps, pg);
    }
    free(ps);
    free(pg);
    return p;
}

void tg_tauyaml_pattern_free(tg_tauyaml_pattern_t *p)
{
    if (!p)
        return;
    free(p->accept);
    free(p->table);
    free(p);
}

int tg_tauyaml_pattern_match(const tg_tauyaml_pattern_t *p, const char *s)
{
    int st = p->start;
    for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
        st = p->table[st * 256 + *q];
        if (st == p->dead)
            return 0;
    }
    return p->accept[st];
}
