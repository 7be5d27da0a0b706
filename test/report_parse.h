/* SPDX-License-Identifier: MIT */
/* Parsing reports back in tests: one CSV line, one flat JSON object. */
#ifndef TD_TEST_REPORT_PARSE_H
#define TD_TEST_REPORT_PARSE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Split one CSV line into fields (quotes honoured); returns the count. */
static inline int csv_split(const char *line, char fields[][64], int max)
{
	int n = 0, k = 0;
	bool quoted = false;

	for (const char *p = line;; p++) {
		if (quoted && *p == '"' && p[1] == '"') {
			fields[n][k++] = *++p;
		} else if (*p == '"') {
			quoted = !quoted;
		} else if ((*p == ',' && !quoted) || !*p || *p == '\n') {
			fields[n][k] = 0;
			n++;
			k = 0;
			if (!*p || *p == '\n' || n == max)
				return n;
		} else if (k < 63) {
			fields[n][k++] = *p;
		}
	}
}

/*
 * A flat JSON object of string and number values, checked by hand: returns
 * the number of pairs with keys copied out, -1 if it is not one.
 */
static inline int json_flat(const char *s, char keys[][32], int max)
{
	int n = 0;

	if (*s++ != '{')
		return -1;
	for (;;) {
		int k = 0;
		char *end;

		if (*s++ != '"' || n == max)
			return -1;
		while (*s && *s != '"' && k < 31)
			keys[n][k++] = *s++;
		keys[n++][k] = 0;
		if (*s++ != '"' || *s++ != ':')
			return -1;
		if (*s == '"') { /* string: escapes \" \\ \uXXXX */
			for (s++; *s && *s != '"'; s++)
				if (*s == '\\' && !*++s)
					return -1;
			if (*s++ != '"')
				return -1;
		} else if (strncmp(s, "null", 4) == 0) { /* not measured */
			s += 4;
		} else {
			strtod(s, &end);
			if (end == s)
				return -1;
			s = end;
		}
		if (*s == '}')
			return s[1] == 0 ? n : -1;
		if (*s++ != ',')
			return -1;
	}
}

#endif
