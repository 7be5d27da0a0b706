/* SPDX-License-Identifier: MIT */
/*
 * topdown plot of a per-function report (libtopdown-functions, or topdown
 * run --functions): a TopDown flame graph.  Each call path ("main;f;g",
 * the report's kind "path" rows) is a frame above its caller's, as wide
 * as its inclusive slots, coloured by what the function's own code did
 * (self level-1 shares: retiring, bad speculation, frontend, backend
 * bound, the level-1 colours of the region plot), and
 * its tooltip (<title>) gives the numbers.  Of each frame, its own part
 * (self slots) is coloured by its level-1 shares, its callees' part is
 * pale.  Roots at the bottom, as flame graphs are drawn.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <topdown.h>

#include "cmd.h"

#define FLAME_W 1200.0
#define FRAME_H 18
#define MARGIN 10
#define TOP 78                   /* title and legend */
#define MAX_LINE 65536

static const char *const l1_colour[4] = {
	"#2ca02c", "#d62728", "#1f77b4", "#ff7f0e",
};
static const char *const l1_label[4] = {
	"retiring", "bad speculation", "frontend bound", "backend bound",
};

struct frame {
	char *path;               /* owned */
	const char *name;         /* its last component */
	int depth;                /* components - 1 */
	double calls, slots, err, self_slots, self_err, unreliable, abandoned;
	double l1[4], self_l1[4];
	double x, w;
};

struct flame {
	struct frame *v;
	size_t n, cap;
	bool emulated;
};

/* ---- reading: JSON Lines or CSV, columns found by name --------------- */

/* The JSON string value of key, unescaped into out; false if absent. */
static bool json_text(const char *line, const char *key, char *out,
		      size_t len)
{
	char k[64];
	const char *p;
	size_t n = 0;

	snprintf(k, sizeof(k), "\"%s\":\"", key);
	p = strstr(line, k);
	if (!p)
		return false;
	for (p += strlen(k); *p && *p != '"' && n + 1 < len; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
	return true;
}

static double json_number(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	return p ? strtod(p + strlen(k), NULL) : 0;
}

/* CSV: split in place (quotes honoured), up to max fields. */
static int csv_fields(char *line, char **f, int max)
{
	int n = 0;
	char *w = line;

	for (char *p = line; n < max;) {
		bool quoted = *p == '"';

		f[n++] = w;
		if (quoted)
			p++;
		for (; *p; p++) {
			if (quoted && *p == '"' && p[1] == '"') {
				*w++ = '"';
				p++;
			} else if (quoted && *p == '"') {
				quoted = false;
			} else if (!quoted && (*p == ',' || *p == '\n')) {
				break;
			} else {
				*w++ = *p;
			}
		}
		if (*p != ',') {
			*w = '\0';
			break;
		}
		*w++ = '\0';
		p++;
	}
	return n;
}

struct csv {
	char head[MAX_LINE];
	char *key[256];
	int n;
};

static const char *csv_get(const struct csv *c, char **f, int n,
			   const char *key)
{
	for (int i = 0; i < c->n && i < n; i++)
		if (!strcmp(c->key[i], key))
			return f[i];
	return NULL;
}

static struct frame *frame_add(struct flame *fl)
{
	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? 2 * fl->cap : 64;
		struct frame *v = realloc(fl->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		fl->v = v;
		fl->cap = cap;
	}
	memset(&fl->v[fl->n], 0, sizeof(fl->v[0]));
	return &fl->v[fl->n++];
}

/* Every figure a frame shows, by its key; get returns the value. */
static void frame_fill(struct frame *f, double (*get)(const void *, const char *),
		       const void *src)
{
	char k[64];

	f->calls = get(src, "calls");
	f->slots = get(src, "slots");
	f->err = get(src, "err");
	f->unreliable = get(src, "unreliable");
	f->abandoned = get(src, "abandoned");
	f->self_slots = get(src, "self_slots");
	f->self_err = get(src, "self_err");
	for (int i = 0; i < 4; i++) {
		f->l1[i] = get(src, td_l1_name(i));
		snprintf(k, sizeof(k), "self_%s", td_l1_name(i));
		f->self_l1[i] = get(src, k);
	}
}

static double get_json(const void *src, const char *key)
{
	return json_number(src, key);
}

struct csv_row {
	const struct csv *c;
	char **f;
	int n;
};

static double get_csv(const void *src, const char *key)
{
	const struct csv_row *r = src;
	const char *v = csv_get(r->c, r->f, r->n, key);

	return v ? strtod(v, NULL) : 0;
}

static int frame_named(struct flame *fl, const char *path)
{
	struct frame *f = frame_add(fl);
	const char *last;

	if (!f || !(f->path = strdup(path)))
		return -ENOMEM;
	last = strrchr(f->path, ';');
	f->name = last ? last + 1 : f->path;
	for (const char *p = f->path; *p; p++)
		f->depth += *p == ';';
	return 0;
}

static int read_line(struct flame *fl, struct csv *c, char *line)
{
	char kind[32], name[MAX_LINE], pmu[64];
	char *f[256];
	int n;

	line[strcspn(line, "\n")] = '\0';
	if (line[0] == '{') {
		if (json_text(line, "pmu", pmu, sizeof(pmu)) &&
		    !strncmp(pmu, "emulated", 8))
			fl->emulated = true;
		if (!json_text(line, "kind", kind, sizeof(kind)) ||
		    strcmp(kind, "path") ||
		    !json_text(line, "name", name, sizeof(name)))
			return 0;
		if (frame_named(fl, name) < 0)
			return -ENOMEM;
		frame_fill(&fl->v[fl->n - 1], get_json, line);
		return 0;
	}
	if (cmd_csv_header(line)) {
		snprintf(c->head, sizeof(c->head), "%s", line);
		c->n = csv_fields(c->head, c->key, 256);
		return 0;
	}
	n = csv_fields(line, f, 256);
	if (!c->n || n < 2 || strcmp(f[0], "path")) {
		const char *p = c->n ? csv_get(c, f, n, "pmu") : NULL;

		fl->emulated |= p && !strncmp(p, "emulated", 8);
		return 0;
	}
	{
		struct csv_row r = { c, f, n };
		const char *p = csv_get(c, f, n, "pmu");

		fl->emulated |= p && !strncmp(p, "emulated", 8);
		if (frame_named(fl, f[1]) < 0)
			return -ENOMEM;
		frame_fill(&fl->v[fl->n - 1], get_csv, &r);
	}
	return 0;
}

static int flame_read(const char *path, struct flame *fl)
{
	FILE *f = fopen(path, "r");
	static char line[MAX_LINE];
	static struct csv c;
	int err = 0;

	if (!f)
		return -errno;
	c.n = 0;
	while (!err && fgets(line, sizeof(line), f))
		err = read_line(fl, &c, line);
	fclose(f);
	return err;
}

static void flame_free(struct flame *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		free(fl->v[i].path);
	free(fl->v);
}

/* Does the report at path hold call paths (a flame graph to draw)? */
bool cmd_flame_has_paths(const char *path)
{
	struct flame fl = { 0 };
	bool has = flame_read(path, &fl) == 0 && fl.n > 0;

	flame_free(&fl);
	return has;
}

/* ---- layout: paths sorted, children after their parent ------------- */

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct frame *)a)->path,
		      ((const struct frame *)b)->path);
}

/* Is b a direct callee path of a ("a;name")? */
static bool child_of(const struct frame *a, const struct frame *b)
{
	size_t n = strlen(a->path);

	return b->depth == a->depth + 1 && !strncmp(a->path, b->path, n) &&
	       b->path[n] == ';';
}

/* x and w of every frame; returns the deepest depth. */
static int layout(struct flame *fl, double total)
{
	int deepest = 0;
	double root_x = 0;

	qsort(fl->v, fl->n, sizeof(*fl->v), by_path);
	for (size_t i = 0; i < fl->n; i++) {
		struct frame *f = &fl->v[i];

		f->w = total > 0 ? f->slots / total * FLAME_W : 0;
		if (f->depth > deepest)
			deepest = f->depth;
		if (f->depth == 0) {
			f->x = root_x;
			root_x += f->w;
			continue;
		}
		/* the nearest earlier frame that is its caller */
		f->x = 0;
		for (size_t j = i; j-- > 0;) {
			struct frame *p = &fl->v[j];

			if (!child_of(p, f))
				continue;
			f->x = p->x;
			/* after the caller's earlier callees */
			for (size_t k = j + 1; k < i; k++)
				if (child_of(p, &fl->v[k]))
					f->x += fl->v[k].w;
			break;
		}
	}
	return deepest;
}

/* ---- writing ------------------------------------------------------------ */

static void xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void tooltip(FILE *out, const struct frame *f, double total)
{
	fputs("<title>", out);
	xml(out, f->path);
	fprintf(out, "\ncalls %.0f, inclusive slots %.0f (%.1f%% of all), "
		"err %.2f pp\nself slots %.0f, err %.2f pp", f->calls, f->slots,
		total > 0 ? 100 * f->slots / total : 0, 100 * f->err,
		f->self_slots, 100 * f->self_err);
	for (int i = 0; i < 4; i++)
		fprintf(out, "\n%s: self %.1f%%, inclusive %.1f%%", l1_label[i],
			100 * f->self_l1[i], 100 * f->l1[i]);
	if (f->unreliable || f->abandoned)
		fprintf(out, "\nunreliable %.0f, abandoned %.0f",
			f->unreliable, f->abandoned);
	fputs("</title>", out);
}

/* The name as fits in w pixels (about 6.5 per character at 11 px). */
static void label(FILE *out, const struct frame *f, double x, double y)
{
	size_t fit = (size_t)((f->w - 6) / 6.5), len = strlen(f->name);
	char buf[256];

	if (fit < 3)
		return;
	if (len > fit) {
		snprintf(buf, sizeof(buf), "%.*s..", (int)(fit - 2), f->name);
	} else {
		snprintf(buf, sizeof(buf), "%s", f->name);
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		"font-family=\"monospace\" fill=\"#000000\">", x + 3, y + 13);
	xml(out, buf);
	fputs("</text>\n", out);
}

/*
 * A frame: its own part first, as wide as its self slots and split into
 * their level-1 shares; then its callees' part, pale (their frames are
 * above it).
 */
static void frame_svg(FILE *out, const struct frame *f, size_t id,
		      double y, double total)
{
	double x = MARGIN + f->x, at = x;
	double own = f->slots > 0 && f->self_slots > 0
			     ? f->w * (f->self_slots < f->slots
					       ? f->self_slots / f->slots : 1)
			     : 0;

	fprintf(out, "<g id=\"f%zu\">", id);
	tooltip(out, f, total);
	fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		"height=\"%d\" fill=\"#dddddd\" stroke=\"#ffffff\" "
		"stroke-width=\"0.5\"/>", x, y, f->w, FRAME_H - 1);
	for (int i = 0; i < 4 && own > 0; i++) {
		double w = own * f->self_l1[i];

		fprintf(out, "<rect id=\"f%zu-%d\" x=\"%.2f\" y=\"%.1f\" "
			"width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", id, i,
			at, y, w, FRAME_H - 1, l1_colour[i]);
		at += w;
	}
	label(out, f, x, y);
	fputs("</g>\n", out);
}

static void legend(FILE *out, const char *title, bool emulated)
{
	fputs("<text x=\"10\" y=\"24\" font-size=\"16\" "
	      "font-family=\"sans-serif\">", out);
	xml(out, title);
	fputs("</text>\n", out);
	fprintf(out, "<text x=\"10\" y=\"44\" font-size=\"11\" "
		"font-family=\"sans-serif\" fill=\"#444444\">width: inclusive "
		"slots; coloured: the function's own (self) slots in their "
		"level-1 shares; pale: its callees' part%s</text>\n",
		emulated ? "; EMULATED PMU: synthetic counts" : "");
	for (int i = 0; i < 4; i++) {
		fprintf(out, "<rect x=\"%d\" y=\"54\" width=\"12\" height=\"12\" "
			"fill=\"%s\"/><text x=\"%d\" y=\"64\" font-size=\"11\" "
			"font-family=\"sans-serif\">%s</text>\n", 10 + 150 * i,
			l1_colour[i], 26 + 150 * i, l1_label[i]);
	}
}

int cmd_flame_write(FILE *out, const char *report, const char *title)
{
	struct flame fl = { 0 };
	double total = 0;
	int deepest, height, err = flame_read(report, &fl);

	if (err < 0) {
		flame_free(&fl);
		return err;
	}
	for (size_t i = 0; i < fl.n; i++)
		if (!strchr(fl.v[i].path, ';'))
			total += fl.v[i].slots;
	deepest = layout(&fl, total);
	height = TOP + (deepest + 1) * FRAME_H + MARGIN;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		(int)FLAME_W + 2 * MARGIN, height, (int)FLAME_W + 2 * MARGIN,
		height);
	legend(out, title, fl.emulated);
	for (size_t i = 0; i < fl.n; i++) {
		double y = height - MARGIN - (fl.v[i].depth + 1) * FRAME_H;

		if (fl.v[i].w >= 0.1)
			frame_svg(out, &fl.v[i], i, y, total);
	}
	fputs("</svg>\n", out);
	flame_free(&fl);
	return ferror(out) ? -EIO : 0;
}
