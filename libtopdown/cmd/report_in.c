/* SPDX-License-Identifier: MIT */
/*
 * Reading a report back: JSON Lines (one flat object per line) or CSV
 * (a header row "kind,...", then rows), as the library writes them
 * (topdown.h, "Reports"), plus topdown run's pmu column.  Columns are
 * found by name, so reports of other versions with more columns still
 * read; a line that is neither is an error naming the line.  A partial
 * report's mark (a "# " comment, a JSON object of kind "partial") is
 * skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <topdown.h>

#include "cmd.h"

#define MAX_KEYS 64
#define VALUE_LEN 256

struct kv {
	int n;
	char key[MAX_KEYS][40];
	char val[MAX_KEYS][VALUE_LEN];
};

static void set_text(char *dst, size_t len, const char *v)
{
	snprintf(dst, len, "%s", v);
}

/* The level-1 or level-2 index of a key such as "min_retiring", or -1. */
static int name_index(const char *k, const char *(*name)(int), int count)
{
	for (int i = 0; i < count; i++)
		if (!strcmp(k, name(i)))
			return i;
	return -1;
}

static void set_number(struct cmd_row *r, const char *k, double v)
{
	struct { const char *key; double *dst; } plain[] = {
		{ "calls", &r->calls }, { "unreliable", &r->unreliable },
		{ "slots", &r->slots }, { "err", &r->err },
		{ "levels", &r->levels }, { "smt_contention", &r->smt },
	};
	int i;

	for (size_t p = 0; p < sizeof(plain) / sizeof(plain[0]); p++)
		if (!strcmp(k, plain[p].key))
			*plain[p].dst = v;
	if ((i = name_index(k, td_l1_name, TD_L1_COUNT)) >= 0)
		r->l1[i] = v;
	if ((i = name_index(k, td_l2_name, TD_L2_COUNT)) >= 0)
		r->l2[i] = v;
	if (!strncmp(k, "min_", 4) &&
	    (i = name_index(k + 4, td_l1_name, TD_L1_COUNT)) >= 0)
		r->min[i] = v;
	if (!strncmp(k, "max_", 4) &&
	    (i = name_index(k + 4, td_l1_name, TD_L1_COUNT)) >= 0)
		r->max[i] = v;
}

/* The memory drill-down's columns: a value, or empty / null unmeasured. */
static bool set_mem(struct cmd_row *r, const char *k, const char *v)
{
	static const char *const keys[TD_MEM_COUNT] = {
		"l1_bound", "l2_bound", "l3_bound", "dram_bound", "store_bound",
	};

	for (int i = 0; i < TD_MEM_COUNT; i++) {
		if (strcmp(k, keys[i]))
			continue;
		if (*v && strcmp(v, "null")) {
			r->mem[i] = strtod(v, NULL);
			r->has_mem = true;
		}
		return true;
	}
	return false;
}

static void set_field(struct cmd_row *r, const char *k, const char *v)
{
	if (set_mem(r, k, v))
		return;
	if (!strcmp(k, "kind"))
		set_text(r->kind, sizeof(r->kind), v);
	else if (!strcmp(k, "name"))
		set_text(r->name, sizeof(r->name), v);
	else if (!strcmp(k, "thread"))
		set_text(r->thread, sizeof(r->thread), v);
	else if (!strcmp(k, "basis"))
		set_text(r->basis, sizeof(r->basis), v);
	else if (!strcmp(k, "pmu"))
		set_text(r->pmu, sizeof(r->pmu), v);
	else
		set_number(r, k, strtod(v, NULL));
}

/* ---- JSON Lines --------------------------------------------------------- */

/* A JSON string at *s (past the quote) into out; the end, or NULL. */
static const char *json_string(const char *s, char *out, size_t len)
{
	size_t k = 0;

	for (; *s && *s != '"'; s++) {
		char c = *s;

		if (c == '\\') {
			c = *++s;
			if (c == 'u') { /* the library escapes only < 0x20 */
				c = (char)strtol((char[5]){ s[1], s[2], s[3], s[4], 0 },
						 NULL, 16);
				if (!s[1] || !s[2] || !s[3] || !s[4])
					return NULL;
				s += 4;
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			} else if (!c) {
				return NULL;
			}
		}
		if (k + 1 < len)
			out[k++] = c;
	}
	out[k] = '\0';
	return *s == '"' ? s + 1 : NULL;
}

static const char *json_value(const char *s, char *out, size_t len)
{
	size_t k = 0;

	if (*s == '"')
		return json_string(s + 1, out, len);
	while (*s && *s != ',' && *s != '}' && *s != ' ') {
		if (k + 1 < len)
			out[k++] = *s;
		s++;
	}
	out[k] = '\0';
	return k ? s : NULL;
}

static int parse_json(const char *s, struct kv *kv)
{
	kv->n = 0;
	if (*s++ != '{')
		return -EINVAL;
	while (*s == ' ')
		s++;
	if (*s == '}')
		return 0;
	for (;;) {
		if (kv->n == MAX_KEYS || *s++ != '"')
			return -EINVAL;
		s = json_string(s, kv->key[kv->n], sizeof(kv->key[0]));
		if (!s || *s++ != ':')
			return -EINVAL;
		while (*s == ' ')
			s++;
		s = json_value(s, kv->val[kv->n], VALUE_LEN);
		if (!s)
			return -EINVAL;
		kv->n++;
		while (*s == ' ')
			s++;
		if (*s == '}')
			return s[1] == '\0' ? 0 : -EINVAL;
		if (*s++ != ',')
			return -EINVAL;
		while (*s == ' ')
			s++;
	}
}

/* ---- CSV ---------------------------------------------------------------- */

/* Split a CSV line (RFC 4180 quotes) into v; the field count or -EINVAL. */
static int parse_csv(const char *s, char v[][VALUE_LEN], int max)
{
	int n = 0;
	size_t k = 0;
	bool quoted = false;

	for (;; s++) {
		if (quoted && *s == '"' && s[1] == '"') {
			s++;
		} else if (*s == '"') {
			quoted = !quoted;
			continue;
		} else if ((*s == ',' && !quoted) || !*s) {
			if (n == max)
				return -EINVAL;
			v[n++][k] = '\0';
			k = 0;
			if (!*s)
				return quoted ? -EINVAL : n;
			continue;
		}
		if (k + 1 < VALUE_LEN)
			v[n][k++] = *s;
	}
}

/* ---- rows --------------------------------------------------------------- */

static int add_row(struct cmd_report *rep, const struct kv *kv)
{
	struct cmd_row *r;

	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? 2 * rep->cap : 64;
		struct cmd_row *v = realloc(rep->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rep->v = v;
		rep->cap = cap;
	}
	r = &rep->v[rep->n];
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < kv->n; i++)
		set_field(r, kv->key[i], kv->val[i]);
	if (!strcmp(r->kind, "partial")) /* the process did not exit */
		return 0;
	if (strcmp(r->kind, "region") && strcmp(r->kind, "record"))
		return -EINVAL;
	if (!strncmp(r->pmu, "emulated", 8))
		rep->emulated = true;
	rep->n++;
	return 0;
}

static int parse_line(char *l, struct kv *kv, struct kv *header)
{
	if (l[0] == '{')
		return parse_json(l, kv);
	if (!strncmp(l, "kind,", 5)) { /* a CSV header: names the columns */
		int n = parse_csv(l, header->val, MAX_KEYS);

		if (n < 0)
			return n;
		header->n = n;
		for (int i = 0; i < n; i++)
			set_text(header->key[i], sizeof(header->key[0]),
				 header->val[i]);
		return 1;
	}
	if (!header->n || parse_csv(l, kv->val, MAX_KEYS) != header->n)
		return -EINVAL;
	kv->n = header->n;
	memcpy(kv->key, header->key, sizeof(kv->key));
	return 0;
}

int cmd_report_read(FILE *f, const char *what, struct cmd_report *rep)
{
	static struct kv kv, header;
	char line[16384];
	int lineno = 0;

	memset(rep, 0, sizeof(*rep));
	header.n = 0;
	while (fgets(line, sizeof(line), f)) {
		int err;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#') /* a CSV comment: partial */
			continue;
		err = parse_line(line, &kv, &header);
		if (err == 0)
			err = add_row(rep, &kv);
		if (err == -ENOMEM)
			cmd_error("out of memory reading %s", what);
		else if (err < 0)
			cmd_error("%s:%d: not a row of a libtopdown report "
				  "(JSON Lines, or CSV after its kind,... "
				  "header): %.60s", what, lineno, line);
		if (err < 0) {
			cmd_report_free(rep);
			return err;
		}
	}
	if (!rep->n) {
		cmd_error("%s: no rows (a report in JSON Lines or CSV, as "
			  "TOPDOWN_FORMAT=jsonl|csv writes)", what);
		return -ENODATA;
	}
	return 0;
}

void cmd_report_free(struct cmd_report *rep)
{
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}
