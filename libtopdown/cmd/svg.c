/* SPDX-License-Identifier: MIT */
/*
 * One self-contained SVG of a report, written by hand (SVG 1.1: rect,
 * text, title; no script, no external reference).  Per region name: a
 * stacked level-1 bar, its level-2 split in a strip below, the err band
 * as whiskers above each boundary between categories, calls, slots and
 * the flags in words; its threads as thin bars under it.  Per record
 * name: a strip with one stacked level-1 column per iteration, as wide
 * as its share of the strip's slots, its err as whiskers.
 *
 * Every drawn bar segment has an id ("r<row>-<category>", "i<group>-<n>")
 * so that tests can find it in the rendered image.
 */
#include <errno.h>
#include <string.h>

#include <topdown.h>

#include "cmd.h"

#define WIDTH   1000
#define X0      230      /* left edge of the bars */
#define BW      520      /* bar width = 100% */
#define XTEXT   (X0 + BW + 14)
#define BAR_H   20
#define L2_H    8
#define THREAD_H 8

static const char *const l1_colour[TD_L1_COUNT] = {
	"#2ca02c", "#d62728", "#1f77b4", "#ff7f0e",
};
/* level-2 pairs 2i, 2i+1 split level-1 category i: dark, light shade */
static const char *const l2_colour[TD_L2_COUNT] = {
	"#176817", "#98df8a", "#8c1414", "#ff9896",
	"#0e4470", "#9ecae1", "#a65300", "#ffbb78",
};
/* Memory bound's nodes: shades of its own orange, L1 lightest. */
static const char *const mem_colour[TD_MEM_COUNT] = {
	"#ffe0b2", "#ffcc80", "#ffa726", "#e65100", "#bcaaa4",
};
static const char *const mem_label[TD_MEM_COUNT] = {
	"L1 bound", "L2 bound", "L3 bound", "DRAM bound", "store bound",
};
static const char *const l1_label[TD_L1_COUNT] = {
	"retiring", "bad speculation", "frontend bound", "backend bound",
};

struct svg {
	FILE *f;
	int y;          /* next free row */
	int bars;       /* region bars drawn: ids r<bars> */
	bool emulated;
};

static void text_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

static void text(struct svg *s, int x, int y, const char *anchor, int size,
		 const char *colour, const char *str)
{
	fprintf(s->f, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\" "
		"font-size=\"%d\" fill=\"%s\">", x, y, anchor, size, colour);
	text_escaped(s->f, str);
	fputs("</text>\n", s->f);
}

static void rect(struct svg *s, const char *id, double x, double y, double w,
		 double h, const char *fill, const char *title)
{
	if (w <= 0)
		return;
	fprintf(s->f, "<rect id=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		"height=\"%.2f\" fill=\"%s\"><title>", id, x, y, w, h, fill);
	text_escaped(s->f, title);
	fputs("</title></rect>\n", s->f);
}

/* ---- one region --------------------------------------------------------- */

/* 68.1M, 3.50G: slot counts a reader takes in at a glance. */
static void si(double v, char *out, size_t len)
{
	static const char *const unit[] = { "", "k", "M", "G", "T", "P" };
	int u = 0;

	while (v >= 1000 && u < 5) {
		v /= 1000;
		u++;
	}
	snprintf(out, len, u ? "%.3g%s" : "%.0f%s", v, unit[u]);
}

/* The flags in plain words, "" when none. */
static void flag_words(const struct cmd_row *r, bool emulated, char *out,
		       size_t len)
{
	out[0] = '\0';
#define ADD(...) snprintf(out + strlen(out), len - strlen(out), __VA_ARGS__)
	if (r->unreliable > 0)
		ADD("%s%.0f unreliable call%s left out", out[0] ? "; " : "",
		    r->unreliable, r->unreliable == 1 ? "" : "s");
	if (r->slots < TD_SHORT_SLOTS)
		ADD("%sshort: under %u slots, breakdown not meaningful",
		    out[0] ? "; " : "", TD_SHORT_SLOTS);
	if (!strcmp(r->basis, "estimated"))
		ADD("%sestimated (multiplexed counters)", out[0] ? "; " : "");
	if (!strcmp(r->basis, "cycles"))
		ADD("%scycles, not TopDown slots", out[0] ? "; " : "");
	if (emulated)
		ADD("%semulated PMU: synthetic", out[0] ? "; " : "");
#undef ADD
}

static void level1_bar(struct svg *s, const struct cmd_row *r, double y,
		       double h)
{
	double x = X0;
	char id[32], title[96];

	for (int i = 0; i < TD_L1_COUNT; i++) {
		double w = r->l1[i] * BW;

		snprintf(id, sizeof(id), "r%d-%s", s->bars, td_l1_name(i));
		snprintf(title, sizeof(title), "%s %.1f%%", l1_label[i],
			 100 * r->l1[i]);
		rect(s, id, x, y, w, h, l1_colour[i], title);
		if (w >= 44 && h >= BAR_H) {
			snprintf(title, sizeof(title), "%.1f%%", 100 * r->l1[i]);
			text(s, (int)(x + w / 2), (int)(y + 14), "middle", 11,
			     "#ffffff", title);
		}
		x += w;
	}
}

/*
 * The memory drill-down: memory bound's segment split into its nodes,
 * which sum to it (the library's split); returns the segment's end.
 */
static double mem_nodes(struct svg *s, const struct cmd_row *r, double x,
			double y)
{
	char id[48], title[96];

	for (int k = 0; k < TD_MEM_COUNT; k++) {
		snprintf(id, sizeof(id), "r%d-%s", s->bars, mem_label[k]);
		for (char *c = id; *c; c++)
			*c = *c == ' ' ? '_' : *c;
		snprintf(title, sizeof(title), "memory bound: %s %.1f%%",
			 mem_label[k], 100 * r->mem[k]);
		rect(s, id, x, y, r->mem[k] * BW, L2_H, mem_colour[k], title);
		x += r->mem[k] * BW;
	}
	return x;
}

/* Children of each level-1 category, from its left edge; unsplit: faded. */
static void level2_strip(struct svg *s, const struct cmd_row *r, double y)
{
	double x = X0;
	char id[48], title[96];

	for (int i = 0; i < TD_L1_COUNT; i++) {
		double a = r->l2[2 * i], b = r->l2[2 * i + 1], cx = x;

		if (a + b <= 0) {
			snprintf(id, sizeof(id), "r%d-%s-unsplit", s->bars,
				 td_l1_name(i));
			fprintf(s->f, "<g opacity=\"0.35\">");
			rect(s, id, x, y, r->l1[i] * BW, L2_H, l1_colour[i],
			     "no level-2 split measured");
			fputs("</g>\n", s->f);
		}
		for (int j = 2 * i; j < 2 * i + 2 && a + b > 0; j++) {
			if (j == TD_MEM_BOUND && r->has_mem) {
				cx = mem_nodes(s, r, cx, y);
				continue;
			}
			snprintf(id, sizeof(id), "r%d-%s", s->bars, td_l2_name(j));
			snprintf(title, sizeof(title), "%s %.1f%%",
				 td_l2_name(j), 100 * r->l2[j]);
			rect(s, id, cx, y, r->l2[j] * BW, L2_H, l2_colour[j],
			     title);
			cx += r->l2[j] * BW;
		}
		x += r->l1[i] * BW;
	}
}

/* err: every fraction is within +-err, so each boundary within that. */
static void err_band(struct svg *s, const struct cmd_row *r, double y)
{
	double cum = 0;
	char id[32], title[64];

	snprintf(title, sizeof(title), "err: each share within +-%.2f pp",
		 100 * r->err);
	for (int i = 0; i < TD_L1_COUNT - 1; i++) {
		cum += r->l1[i];
		snprintf(id, sizeof(id), "r%d-err%d", s->bars, i);
		rect(s, id, X0 + (cum - r->err) * BW, y, 2 * r->err * BW, 4,
		     "#444444", title);
	}
}

static void region_bar(struct svg *s, const struct cmd_row *r,
		       const char *label)
{
	char line[256], flags[256], slots[16];
	int y = s->y;

	text(s, X0 - 10, y + 14, "end", 13, "#000000", label);
	err_band(s, r, y);
	level1_bar(s, r, y + 5, BAR_H);
	if (r->levels >= 2)
		level2_strip(s, r, y + 5 + BAR_H + 2);
	si(r->slots, slots, sizeof(slots));
	snprintf(line, sizeof(line), "%.0f calls, %s slots, err %.2f pp",
		 r->calls, slots, 100 * r->err);
	text(s, XTEXT, y + 13, "start", 11, "#000000", line);
	flag_words(r, s->emulated, flags, sizeof(flags));
	if (flags[0])
		text(s, XTEXT, y + 27, "start", 10, "#b00000", flags);
	s->y += 5 + BAR_H + 2 + L2_H + 14;
	s->bars++;
}

static void thread_bar(struct svg *s, const struct cmd_row *r)
{
	char label[80], line[128], slots[16];

	si(r->slots, slots, sizeof(slots));
	snprintf(label, sizeof(label), "thread %s", r->thread);
	text(s, X0 - 10, s->y + 8, "end", 10, "#444444", label);
	level1_bar(s, r, s->y, THREAD_H);
	snprintf(line, sizeof(line), "%.0f calls, %s slots%s", r->calls,
		 slots, r->unreliable > 0 ? ", some unreliable" : "");
	text(s, XTEXT, s->y + 8, "start", 10, "#444444", line);
	s->y += THREAD_H + 6;
	s->bars++;
}

static bool seen_name(const struct cmd_report *rep, size_t i, const char *kind)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(rep->v[j].kind, kind) &&
		    !strcmp(rep->v[j].name, rep->v[i].name))
			return true;
	return false;
}

/* One name: its all-threads row (or its only rows), then its threads. */
static void region_group(struct svg *s, const struct cmd_report *rep,
			 size_t first)
{
	const char *name = rep->v[first].name;
	const struct cmd_row *all = NULL;
	int threads = 0;

	for (size_t j = first; j < rep->n; j++) {
		const struct cmd_row *r = &rep->v[j];

		if (strcmp(r->kind, "region") || strcmp(r->name, name))
			continue;
		if (!strcmp(r->thread, "all"))
			all = r;
		else
			threads++;
	}
	if (all)
		region_bar(s, all, name[0] ? name : "(unnamed)");
	for (size_t j = first; j < rep->n; j++) {
		const struct cmd_row *r = &rep->v[j];

		if (strcmp(r->kind, "region") || strcmp(r->name, name) ||
		    !strcmp(r->thread, "all"))
			continue;
		if (!all)
			region_bar(s, r, name[0] ? name : "(unnamed)");
		else if (threads > 1)
			thread_bar(s, r);
	}
	s->y += 6;
}

/* ---- records ------------------------------------------------------------ */

#define STRIP_H 60

/*
 * err of one iteration: every share within +-err, so each boundary
 * between two shares within that; whiskers at the column's right edge,
 * clear of the segments' centres.
 */
static void record_err(struct svg *s, const struct cmd_row *r, double x,
		       double w, int group, size_t k)
{
	double cum = 0, ww = w * 0.15;
	char id[48], title[64];

	snprintf(title, sizeof(title), "err: each share within +-%.2f pp",
		 100 * r->err);
	for (int i = 0; i < TD_L1_COUNT - 1; i++) {
		cum += r->l1[i];
		snprintf(id, sizeof(id), "i%d-%zu-err%d", group, k, i);
		rect(s, id, x + w - ww, s->y + (1 - cum - r->err) * STRIP_H,
		     ww, 2 * r->err * STRIP_H, "#444444", title);
	}
}

/*
 * One column per iteration, its width the iteration's share of the
 * strip's slots (equal widths when none counted): a long iteration
 * weighs as much in the picture as in the totals.
 */
static void record_strip(struct svg *s, const struct cmd_report *rep,
			 size_t first, int group)
{
	const char *name = rep->v[first].name;
	size_t n = 0, k = 0, bad = 0;
	double total = 0, x = X0, max_err = 0;
	char id[48], title[160], line[160];

	for (size_t j = first; j < rep->n; j++) {
		if (strcmp(rep->v[j].kind, "record") ||
		    strcmp(rep->v[j].name, name))
			continue;
		n++;
		total += rep->v[j].slots;
	}
	text(s, X0 - 10, s->y + STRIP_H / 2, "end", 13, "#000000",
	     name[0] ? name : "(unnamed)");
	for (size_t j = first; j < rep->n; j++) {
		const struct cmd_row *r = &rep->v[j];
		double w = total > 0 ? BW * r->slots / total
				     : (double)BW / (double)n;
		double y = s->y + STRIP_H;

		if (strcmp(r->kind, "record") || strcmp(r->name, name))
			continue;
		if (r->unreliable > 0) {
			bad++;
			snprintf(id, sizeof(id), "i%d-%zu-unreliable", group, k);
			rect(s, id, x, s->y, w, STRIP_H, "#999999",
			     "unreliable: left out");
		}
		for (int i = 0; i < TD_L1_COUNT && !(r->unreliable > 0); i++) {
			double h = r->l1[i] * STRIP_H;

			y -= h;
			snprintf(id, sizeof(id), "i%d-%zu-%s", group, k,
				 td_l1_name(i));
			snprintf(title, sizeof(title),
				 "iteration %zu: %s %.1f%%, %.4g slots", k + 1,
				 l1_label[i], 100 * r->l1[i], r->slots);
			rect(s, id, x, y, w, h, l1_colour[i], title);
		}
		if (!(r->unreliable > 0)) {
			record_err(s, r, x, w, group, k);
			if (r->err > max_err)
				max_err = r->err;
		}
		x += w;
		k++;
	}
	snprintf(line, sizeof(line), "%zu iterations, left to right%s", n,
		 bad ? " (grey: unreliable)" : "");
	text(s, XTEXT, s->y + 14, "start", 11, "#000000", line);
	snprintf(line, sizeof(line), "widths by slots; err up to %.2f pp",
		 100 * max_err);
	text(s, XTEXT, s->y + 28, "start", 10, "#444444", line);
	if (s->emulated)
		text(s, XTEXT, s->y + 42, "start", 10, "#b00000",
		     "emulated PMU: synthetic");
	s->y += STRIP_H + 14;
}

/* ---- the picture -------------------------------------------------------- */

static void legend(struct svg *s)
{
	int x = X0;

	for (int i = 0; i < TD_L1_COUNT; i++) {
		char id[32];

		snprintf(id, sizeof(id), "legend-%s", td_l1_name(i));
		rect(s, id, x, s->y, 12, 12, l1_colour[i], l1_label[i]);
		text(s, x + 16, s->y + 11, "start", 12, "#000000", l1_label[i]);
		x += 130;
	}
	s->y += 18;
	text(s, X0, s->y + 10, "start", 10, "#444444",
	     "level 2 below each bar (dark: heavy ops, branch mispredicts, "
	     "fetch latency, memory bound; light: the rest); dark whiskers "
	     "above: err");
	s->y += 24;
}

static void banner(struct svg *s, const char *title)
{
	char t[320];

	snprintf(t, sizeof(t), "TopDown: %s", title);
	text(s, 16, 28, "start", 18, "#000000", t);
	s->y = 40;
	if (!s->emulated)
		return;
	rect(s, "emulated-banner", 16, s->y, WIDTH - 32, 24, "#b00000",
	     "EMULATED");
	text(s, WIDTH / 2, s->y + 17, "middle", 13, "#ffffff",
	     "EMULATED PMU: synthetic counts from the test emulator, not a "
	     "measurement");
	s->y += 34;
}

static void section(struct svg *s, const char *heading)
{
	text(s, 16, s->y + 14, "start", 14, "#000000", heading);
	s->y += 24;
}

static void body(struct svg *s, const struct cmd_report *rep)
{
	bool regions = false, records = false;
	int group = 0;

	for (size_t i = 0; i < rep->n; i++) {
		regions |= !strcmp(rep->v[i].kind, "region");
		records |= !strcmp(rep->v[i].kind, "record");
	}
	if (regions)
		section(s, "Named regions: share of pipeline slots");
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->v[i].kind, "region") &&
		    !seen_name(rep, i, "region"))
			region_group(s, rep, i);
	if (records)
		section(s, "Per iteration: level 1 of each record");
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->v[i].kind, "record") &&
		    !seen_name(rep, i, "record"))
			record_strip(s, rep, i, group++);
}

/*
 * The height is known only at the end: the body is drawn into a
 * temporary file first, then copied under the svg element.
 */
int cmd_svg_write(FILE *f, const struct cmd_report *rep, const char *title)
{
	struct svg s = { .emulated = rep->emulated };
	char buf[8192];
	size_t n;

	s.f = tmpfile();
	if (!s.f)
		return -errno;
	banner(&s, title);
	legend(&s);
	body(&s, rep);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\">\n"
		"<rect id=\"background\" x=\"0\" y=\"0\" width=\"%d\" "
		"height=\"%d\" fill=\"#ffffff\"/>\n",
		WIDTH, s.y + 10, WIDTH, s.y + 10, WIDTH, s.y + 10);
	rewind(s.f);
	while ((n = fread(buf, 1, sizeof(buf), s.f)) > 0)
		fwrite(buf, 1, n, f);
	fclose(s.f);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
