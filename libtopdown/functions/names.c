/* SPDX-License-Identifier: MIT */
/*
 * Function names: dladdr(3) for exported symbols, then the symbol tables
 * (.symtab, else .dynsym) of the object the address lies in, read from
 * its file (the executable through /proc/self/exe), for the static
 * functions dladdr does not see; "0x..." where neither names it.  The
 * object comes from dl_iterate_phdr(3): the PT_LOAD segment holding the
 * address, and the load bias that turns a symbol's st_value into an
 * address (elf(5)).  Files are read once, under a lock (cold path: a
 * filter's first look at a function, and the report).
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "func.h"

struct sym {
	uintptr_t addr, size;
	const char *name;
};

struct obj {
	uintptr_t bias;
	char path[256];
	struct sym *syms;
	size_t n;
	char *image;            /* the file, holding the names */
};

#define MAX_OBJS 256
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj objs[MAX_OBJS];
static size_t n_objs;

struct where {
	uintptr_t addr, bias;
	const char *name;
	bool found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct where *w = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && w->addr >= lo &&
		    w->addr < lo + ph->p_memsz) {
			w->bias = info->dlpi_addr;
			w->name = *info->dlpi_name ? info->dlpi_name
						   : "/proc/self/exe";
			w->found = true;
			return 1;
		}
	}
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(ElfW(Ehdr)))
		buf = malloc((size_t)st.st_size);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return buf;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The function symbols of one section of type want, bounds checked. */
static void take_symbols(struct obj *o, size_t len, uint32_t want)
{
	const ElfW(Ehdr) *eh = (const void *)o->image;
	const ElfW(Shdr) *sh;

	if (eh->e_shoff == 0 || eh->e_shoff + (size_t)eh->e_shnum *
	    sizeof(*sh) > len || eh->e_shentsize != sizeof(*sh))
		return;
	sh = (const void *)(o->image + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum && !o->n; i++) {
		const ElfW(Shdr) *s = &sh[i], *str;
		const ElfW(Sym) *sym;
		size_t count;

		if (s->sh_type != want || s->sh_link >= eh->e_shnum ||
		    s->sh_offset + s->sh_size > len)
			continue;
		str = &sh[s->sh_link];
		if (str->sh_offset + str->sh_size > len || !str->sh_size)
			continue;
		sym = (const void *)(o->image + s->sh_offset);
		count = s->sh_size / sizeof(*sym);
		o->syms = calloc(count ? count : 1, sizeof(*o->syms));
		if (!o->syms)
			return;
		for (size_t k = 0; k < count; k++) {
			unsigned type = ELF64_ST_TYPE(sym[k].st_info);

			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    !sym[k].st_value || sym[k].st_name >= str->sh_size)
				continue;
			o->syms[o->n++] = (struct sym){
				o->bias + sym[k].st_value, sym[k].st_size,
				o->image + str->sh_offset + sym[k].st_name };
		}
		qsort(o->syms, o->n, sizeof(*o->syms), by_addr);
	}
}

static struct obj *object_load(const struct where *w)
{
	struct obj *o;
	size_t len = 0;

	for (size_t i = 0; i < n_objs; i++)
		if (objs[i].bias == w->bias && !strcmp(objs[i].path, w->name))
			return &objs[i];
	if (n_objs == MAX_OBJS)
		return NULL;
	o = &objs[n_objs++];
	o->bias = w->bias;
	snprintf(o->path, sizeof(o->path), "%s", w->name);
	o->image = read_all(w->name, &len);
	if (!o->image || memcmp(o->image, ELFMAG, SELFMAG))
		return o;
	take_symbols(o, len, SHT_SYMTAB);
	if (!o->n)
		take_symbols(o, len, SHT_DYNSYM);
	return o;
}

/* The symbol starting at addr, else the one holding it. */
static const char *lookup(const struct obj *o, uintptr_t addr)
{
	size_t lo = 0, hi = o ? o->n : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (o->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (o->syms[lo - 1].addr == addr ||
	    addr < o->syms[lo - 1].addr + o->syms[lo - 1].size)
		return o->syms[lo - 1].name;
	return NULL;
}

/*
 * C++ names demangled by the C++ runtime's own __cxa_demangle (Itanium
 * C++ ABI, 3.4) when the program has one (it is C++): a weak reference,
 * so that C programs need nothing beyond libc.  Kept for the process.
 */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
			    int *status) __attribute__((weak));

static const char *demangled(const char *name)
{
	static struct { const char *from; char *to; } cache[1024];
	static size_t n;
	int status = -1;
	char *d;

	if (!__cxa_demangle || strncmp(name, "_Z", 2))
		return name;
	for (size_t i = 0; i < n; i++)
		if (cache[i].from == name)
			return cache[i].to;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !d)
		return name;
	if (n == sizeof(cache) / sizeof(cache[0])) {
		free(d);
		return name;
	}
	cache[n].from = name;
	cache[n++].to = d;
	return d;
}

static const char *fn_symbol(void *addr);

const char *fn_name(void *addr, char *buf, size_t len)
{
	const char *name = fn_symbol(addr);

	if (name)
		return name;
	snprintf(buf, len, "%#lx", (unsigned long)(uintptr_t)addr);
	return buf;
}

/* The symbol of addr, demangled (names_lock held), or NULL. */
static const char *symbol_locked(void *addr)
{
	struct where w = { .addr = (uintptr_t)addr };
	const char *name = NULL;
	Dl_info info;

	if (dladdr(addr, &info) && info.dli_sname && info.dli_saddr == addr)
		return demangled(info.dli_sname);
	if (dl_iterate_phdr(find_object, &w) && w.found)
		name = lookup(object_load(&w), (uintptr_t)addr);
	return name ? demangled(name) : NULL;
}

static const char *fn_symbol(void *addr)
{
	const char *name;

	pthread_mutex_lock(&names_lock);
	name = symbol_locked(addr);
	pthread_mutex_unlock(&names_lock);
	return name;
}
